import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreTestSupport
import Testing

@testable import ModelStoreJSONFile

/// A save, batch insert or batch delete of more models than the file's history keeps is numbered
/// and expires at once with every transaction before it (its changes are never built), in memory
/// and in the file read back.
struct HistoryLimitTests {
    typealias Descriptor = HistoryDescriptor<DefaultHistoryTransaction>

    @Test func transactionsOverTheLimitExpireTheHistoryBeforeThem() throws {
        let directory = try TemporaryDirectory()
        var configuration = JSONFileStoreConfiguration(url: directory.file())
        configuration.historyLimit = 3
        func open() throws -> ModelContext {
            ModelContext(try ModelContainer(for: Memo.self, configurations: configuration))
        }
        let context = try open()
        func memo(_ text: String) -> Memo {
            let memo = Memo()
            memo.text = text
            return memo
        }
        context.insert(memo("a"))
        try context.save()
        let storeIdentifier = try #require(try context.fetchHistory(Descriptor()).first).storeIdentifier
        func expectExpired(through number: Int64, _ context: ModelContext) {
            let token = DefaultHistoryToken(storeIdentifier: storeIdentifier, transactionNumber: number)
            expectError(.historyTokenExpired) {
                try context.fetchHistory(Descriptor(predicate: #Predicate { $0.token >= token }))
            }
        }
        // Transaction 2: a save of four inserts.
        for text in ["b", "c", "d", "e"] { context.insert(memo(text)) }
        try context.save()
        #expect(try context.fetchHistory(Descriptor()).isEmpty)
        expectExpired(through: 2, context)
        // Transaction 3: a batch insert of four.
        let rows = (0..<4).map { index in [BatchAssignment<Memo>.set(\.text, to: "batch \(index)")] }
        try context.insert(Memo.self, rows: rows)
        #expect(try context.fetchHistory(Descriptor()).isEmpty)
        // Transaction 4: a small save is kept; transaction 5, a batch delete of all nine, is not.
        context.insert(memo("f"))
        try context.save()
        #expect(try context.fetchHistory(Descriptor()).map(\.transactionIdentifier) == [4])
        try context.delete(model: Memo.self)
        #expect(try context.fetchCount(FetchDescriptor<Memo>()) == 0)
        #expect(try context.fetchHistory(Descriptor()).isEmpty)
        // The file says the same, and numbering goes on after it.
        let reopened = try open()
        #expect(try reopened.fetchHistory(Descriptor()).isEmpty)
        expectExpired(through: 5, reopened)
        reopened.insert(memo("g"))
        try reopened.save()
        #expect(try reopened.fetchHistory(Descriptor()).map(\.transactionIdentifier) == [6])
    }
}
