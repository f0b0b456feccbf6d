import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// History fetches read only the rows a descriptor can select (`HistoryReadWindow`): a bound by
/// token, a limit by number (oldest or newest first), and any other descriptor, each answered as
/// the whole history answers it, expiry included.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLHistoryWindowTests {
    typealias Transaction = DefaultHistoryTransaction

    /// A store with twelve transactions, authored "app" and "sync" in turn.
    private func filled(_ prefix: String) throws -> (ModelContainer, String) {
        let configuration = try PostgreSQLServer.configuration(namespace: PostgreSQLServer.freshNamespace(prefix))
        let container = try ModelContainer(for: Counter.schema, configurations: [configuration])
        for number in 1...12 {
            let context = ModelContext(container)
            context.author = number.isMultiple(of: 2) ? "sync" : "app"
            context.insert(Counter(name: "c\(number)"))
            try context.save()
        }
        return (container, container.stores[0].identifier)
    }

    private func numbers(_ container: ModelContainer, _ descriptor: HistoryDescriptor<Transaction>) throws -> [Int64] {
        try ModelContext(container).fetchHistory(descriptor).map(\.transactionIdentifier)
    }

    @Test func boundedLimitedAndNewestFirstFetchesAnswerAsTheWholeHistoryDoes() throws {
        let (container, id) = try filled("hw")
        let token = DefaultHistoryToken(storeIdentifier: id, transactionNumber: 4)
        var bounded = HistoryDescriptor<Transaction>(predicate: #Predicate { $0.token > token })
        bounded.fetchLimit = 5
        #expect(try numbers(container, bounded) == [5, 6, 7, 8, 9])
        bounded.fetchLimit = nil
        #expect(try numbers(container, bounded) == Array(5...12))

        var newest = HistoryDescriptor<Transaction>(sortBy: [SortDescriptor(\.transactionIdentifier, order: .reverse)])
        newest.fetchLimit = 3
        #expect(try numbers(container, newest) == [12, 11, 10])

        var authored = HistoryDescriptor<Transaction>(predicate: #Predicate { $0.token > token && $0.author == "app" })
        authored.fetchLimit = 2
        #expect(try numbers(container, authored) == [5, 7])

        let atLeast = HistoryDescriptor<Transaction>(predicate: #Predicate { $0.transactionIdentifier >= 11 })
        #expect(try numbers(container, atLeast) == [11, 12])
        #expect(try numbers(container, HistoryDescriptor<Transaction>()) == Array(1...12))
    }

    @Test func aBoundedFetchIntoDeletedHistoryStillFailsAsExpired() throws {
        let (container, id) = try filled("hx")
        let context = ModelContext(container)
        let fourth = DefaultHistoryToken(storeIdentifier: id, transactionNumber: 4)
        try context.deleteHistory(HistoryDescriptor<Transaction>(predicate: #Predicate { $0.token < fourth }))
        let second = DefaultHistoryToken(storeIdentifier: id, transactionNumber: 2)
        var descriptor = HistoryDescriptor<Transaction>(predicate: #Predicate { $0.token > second })
        descriptor.fetchLimit = 1
        let error = #expect(throws: DataStoreError.self) { try context.fetchHistory(descriptor) }
        #expect(error?.code == .historyTokenExpired)
        let third = DefaultHistoryToken(storeIdentifier: id, transactionNumber: 3)
        descriptor.predicate = #Predicate { $0.token > third }
        #expect(try numbers(container, descriptor) == [4])
    }
}
