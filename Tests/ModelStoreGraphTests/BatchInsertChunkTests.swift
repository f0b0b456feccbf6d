import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreTestSupport
import Testing

/// A model with a unique attribute and a value that can be made to fail to encode.
final class Ticket: PersistentModel {
    @Attribute(.unique) var code: String = ""
    @Attribute var body: Fragile = Fragile("")

    let persistentBackingData = BackingData()
    init() {}
}

/// Batch inserts larger than one chunk: the stores read the rows a chunk at a time, and a row that
/// fails in a late chunk leaves every store, and its files, exactly as they were.
struct BatchInsertChunkTests {
    /// Rows `T<start>` to `T<start + count - 1>`, with row `bad` (if any) replaced by `badRow`.
    private static func rows(
        _ start: Int, _ count: Int, bad: Int? = nil, badRow: [BatchAssignment<Ticket>] = []
    ) -> some Sequence<[BatchAssignment<Ticket>]> {
        (start..<(start + count)).lazy.map { index -> [BatchAssignment<Ticket>] in
            index == bad ? badRow : [.set(\.code, to: "T\(index)"), .set(\.body, to: Fragile("body \(index)"))]
        }
    }

    @Test(arguments: StoreKind.allCases)
    func aRowThatFailsInALateChunkStoresNothing(kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: [Ticket.self])
        let context = ModelContext(store.container)
        try context.insert(Ticket.self, rows: Self.rows(0, 100))
        let files = try store.files()

        // 10,000 rows are three chunks; the failing row is in the third.
        expectError(.uniqueConstraintViolation) {
            try context.insert(
                Ticket.self,
                rows: Self.rows(
                    100, 10_000, bad: 9_500, badRow: [.set(\.code, to: "T5"), .set(\.body, to: Fragile(""))]))
        }
        #expect(throws: (any Error).self) {
            try context.insert(
                Ticket.self,
                rows: Self.rows(
                    100, 10_000, bad: 9_000,
                    badRow: [.set(\.code, to: "bad"), .set(\.body, to: Fragile("bad", failsToEncode: true))]))
        }
        let after = try store.files()
        // SQLite's shared-memory index of its log (`-shm`) changes with every transaction, reads
        // included, and holds no data.
        let changed = Set(files.keys).union(after.keys).filter { files[$0] != after[$0] && !$0.hasSuffix("-shm") }
            .sorted()
        #expect(
            changed.isEmpty,
            "a failed batch insert changed \(changed.map { ($0 as NSString).lastPathComponent }) \(changed.map { "\(files[$0]?.count ?? -1) -> \(after[$0]?.count ?? -1)" })"
        )
        #expect(try ModelContext(store.container).fetchCount(FetchDescriptor<Ticket>()) == 100)

        // The same rows, none failing, all go in, under one run of keys.
        let ids = try context.insert(Ticket.self, rows: Self.rows(100, 10_000))
        #expect(ids.count == 10_000)
        #expect(ids.keyRuns?.keys.count == 1, "\(ids)")
        let last = "T10099"
        let reopened = ModelContext(try store.reopen())
        #expect(try reopened.fetchCount(FetchDescriptor<Ticket>()) == 10_100)
        let found = try reopened.fetch(FetchDescriptor<Ticket>(predicate: #Predicate { $0.code == last }))
        #expect(found.map(\.persistentModelID) == [ids[9_999]])
        #expect(found.first?.body.text == "body 10099")
    }
}
