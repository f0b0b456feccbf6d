import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// History fetches read only the rows a descriptor can select (``HistoryReadWindow``): the window a
/// descriptor gives, the rows the SQLite table returns for it, and answers equal to those from the
/// whole history, expiry included.
struct SQLiteHistoryWindowTests {
    let folder: TemporaryDirectory
    let url: URL

    init() throws {
        folder = try TemporaryDirectory()
        url = folder.url.appendingPathComponent("notes.sqlite")
    }

    private static func token(_ number: Int64, _ store: String = "s") -> DefaultHistoryToken {
        DefaultHistoryToken(storeIdentifier: store, transactionNumber: number)
    }

    private static func after(_ number: Int64, limit: Int? = nil) -> HistoryDescriptor<DefaultHistoryTransaction> {
        let token = token(number)
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > token })
        descriptor.fetchLimit = limit
        return descriptor
    }

    @Test func aTokenBoundAndAnOrderByNumberPushTheLimitDown() {
        #expect(HistoryReadWindow(Self.after(7, limit: 3), storeIdentifier: "s").after == 7)
        #expect(HistoryReadWindow(Self.after(7, limit: 3), storeIdentifier: "s").limit == 3)

        let token = Self.token(4)
        let atLeast = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token >= token })
        #expect(HistoryReadWindow(atLeast, storeIdentifier: "s").after == 3)
        let byNumber = HistoryDescriptor<DefaultHistoryTransaction>(
            predicate: #Predicate { $0.transactionIdentifier > 9 })
        #expect(HistoryReadWindow(byNumber, storeIdentifier: "s").after == 9)

        var newest = HistoryDescriptor<DefaultHistoryTransaction>(
            sortBy: [SortDescriptor(\.transactionIdentifier, order: .reverse)])
        newest.fetchLimit = 1
        let window = HistoryReadWindow(newest, storeIdentifier: "s")
        #expect(window.after == nil && window.limit == 1 && window.newestFirst)
    }

    @Test func otherFiltersOrdersAndStoresKeepEveryRowTheyMightSelect() {
        // Another filter beside the bound: the bound holds, the limit cannot be pushed down.
        let token = Self.token(5)
        var authored = HistoryDescriptor<DefaultHistoryTransaction>(
            predicate: #Predicate { $0.token > token && $0.author == "app" })
        authored.fetchLimit = 2
        #expect(HistoryReadWindow(authored, storeIdentifier: "s") == Self.window(after: 5, limit: nil))

        // A token of another store compares by store, not number: no bound.
        let foreign = Self.token(5, "other")
        let elsewhere = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > foreign })
        #expect(HistoryReadWindow(elsewhere, storeIdentifier: "s") == HistoryReadWindow())

        // An order other than by number, or a disjunction: every row.
        var byTime = HistoryDescriptor<DefaultHistoryTransaction>(sortBy: [SortDescriptor(\.timestamp)])
        byTime.fetchLimit = 1
        #expect(HistoryReadWindow(byTime, storeIdentifier: "s") == HistoryReadWindow())
        let either = HistoryDescriptor<DefaultHistoryTransaction>(
            predicate: #Predicate { $0.token > token || $0.author == "app" })
        #expect(HistoryReadWindow(either, storeIdentifier: "s") == HistoryReadWindow())
    }

    private static func window(after: Int64?, limit: Int?, newestFirst: Bool = false) -> HistoryReadWindow {
        var window = HistoryReadWindow()
        window.after = after
        window.limit = limit
        window.newestFirst = newestFirst
        return window
    }

    /// A store with `count` transactions of one note each, authored "app" and "sync" in turn.
    private func filledContainer(_ count: Int) throws -> ModelContainer {
        let container = try ModelContainer(for: HistoryNote.self, configurations: SQLiteStoreConfiguration(url: url))
        for number in 1...count {
            let context = ModelContext(container)
            context.author = number.isMultiple(of: 2) ? "sync" : "app"
            context.insert(HistoryNote("note \(number)"))
            try context.save()
        }
        return container
    }

    @Test func theTableReturnsOnlyTheWindowsRows() throws {
        let container = try filledContainer(12)
        let store = try #require(container.stores.first as? SQLiteStore)
        func numbers(_ window: HistoryReadWindow) throws -> [Int64] {
            try store.database.withLock { connection in
                try connection.readTransaction {
                    try HistoryTable.load(storeIdentifier: store.identifier, window: window, from: connection)
                }
            }.records.map(\.number)
        }
        #expect(try numbers(HistoryReadWindow()) == Array(1...12))
        #expect(try numbers(Self.window(after: 9, limit: nil)) == [10, 11, 12])
        #expect(try numbers(Self.window(after: 3, limit: 2)) == [4, 5])
        #expect(try numbers(Self.window(after: nil, limit: 2, newestFirst: true)) == [11, 12])
        #expect(try numbers(Self.window(after: 12, limit: 5)) == [])
    }

    @Test func windowedFetchesAnswerAsTheWholeHistoryDoes() throws {
        let container = try filledContainer(12)
        let store = try #require(container.stores.first as? SQLiteStore)
        let whole = try store.database.withLock { connection in
            try connection.readTransaction {
                try HistoryTable.load(storeIdentifier: store.identifier, from: connection)
            }
        }
        let id = store.identifier
        let token = DefaultHistoryToken(storeIdentifier: id, transactionNumber: 4)
        var newest = HistoryDescriptor<DefaultHistoryTransaction>(
            sortBy: [SortDescriptor(\.transactionIdentifier, order: .reverse)])
        newest.fetchLimit = 3
        var authored = HistoryDescriptor<DefaultHistoryTransaction>(
            predicate: #Predicate { $0.token > token && $0.author == "app" })
        authored.fetchLimit = 2
        var bounded = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > token })
        bounded.fetchLimit = 5
        for descriptor in [bounded, newest, authored, HistoryDescriptor<DefaultHistoryTransaction>()] {
            let expected = try whole.transactions(descriptor, schema: container.schema, storeIdentifier: id)
            let fetched = try store.fetchHistory(descriptor)
            #expect(fetched.map(\.token) == expected.map(\.token))
            #expect(fetched.map(\.author) == expected.map(\.author))
            #expect(fetched.map(\.changes.count) == expected.map(\.changes.count))
        }
        #expect(try store.fetchHistory(bounded).map(\.transactionIdentifier) == [5, 6, 7, 8, 9])
        #expect(try store.fetchHistory(authored).map(\.transactionIdentifier) == [5, 7])
        #expect(try store.fetchHistory(newest).map(\.transactionIdentifier) == [12, 11, 10])
    }

    @Test func aWindowedFetchIntoDeletedHistoryStillFailsAsExpired() throws {
        let container = try filledContainer(6)
        let store = try #require(container.stores.first as? SQLiteStore)
        let id = store.identifier
        let fourth = DefaultHistoryToken(storeIdentifier: id, transactionNumber: 4)
        try store.deleteHistory(HistoryDescriptor(predicate: #Predicate { $0.token < fourth }))
        let second = DefaultHistoryToken(storeIdentifier: id, transactionNumber: 2)
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > second })
        descriptor.fetchLimit = 1
        let error = #expect(throws: DataStoreError.self) { try store.fetchHistory(descriptor) }
        #expect(error?.code == .historyTokenExpired)
        let third = DefaultHistoryToken(storeIdentifier: id, transactionNumber: 3)
        descriptor.predicate = #Predicate { $0.token > third }
        #expect(try store.fetchHistory(descriptor).map(\.transactionIdentifier) == [4])
    }
}
