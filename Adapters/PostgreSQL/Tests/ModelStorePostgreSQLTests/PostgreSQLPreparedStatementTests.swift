import Foundation
import ModelStore
import Testing

@testable import ModelStorePostgreSQL

/// Deleting every model of an entity in one statement, and the statements kept prepared on the
/// pooled connections (fetches, the one-row update, the history row), checked on the server:
/// each gives what the unprepared statement gives, also after another program altered the table.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLPreparedStatementTests {
    /// A container of `Patron`s (see `PostgreSQLIndexedWriteTests`) with one pooled connection, so
    /// every statement runs on the connection that prepared the ones before it.
    static func container(_ namespace: String, historyLimit: Int? = nil) throws -> (ModelContainer, PostgreSQLStore) {
        var configuration = try PostgreSQLServer.configuration(namespace: namespace)
        configuration.maximumConnections = 1
        configuration.historyLimit = historyLimit
        let container = try ModelContainer(for: PostgreSQLIndexedWriteTests.schema, configurations: [configuration])
        return (container, try #require(container.stores.first as? PostgreSQLStore))
    }

    @Test func deletingEveryModelReturnsEachOneAndRecordsItsTombstoneInOneTransaction() throws {
        let (container, store) = try Self.container(PostgreSQLServer.freshNamespace("every"))
        let context = ModelContext(container)
        let inserted = try context.insert(
            Patron.self, rows: (0..<40).map { [.set(\.email, to: "e\($0)@example.com"), .set(\.name, to: "p\($0)")] })
        let before = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count

        let deleted = try store.deleteEveryModel(DataStoreDeleteEveryModelRequest<Patron>(editingState: EditingState()))

        #expect(Set(deleted) == Set(inserted) && deleted.count == 40)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Patron>()) == 0)
        let history = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(history.count == before + 1, "deleting every model did not record exactly one transaction")
        let last = try #require(history.last)
        #expect(
            PostgreSQLIndexedWriteTests.tombstonedNames(in: last).sorted() == (0..<40).map { "p\($0)" }.sorted())
        #expect(
            try store.deleteEveryModel(DataStoreDeleteEveryModelRequest<Patron>(editingState: EditingState())).isEmpty)
        #expect(
            try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == history.count,
            "deleting every model of an empty entity recorded history")
    }

    @Test func deletingEveryModelKeepsTheHistoryLimit() throws {
        let (container, store) = try Self.container(PostgreSQLServer.freshNamespace("everylim"), historyLimit: 30)
        let context = ModelContext(container)
        _ = try context.insert(
            Patron.self, rows: (0..<20).map { [.set(\.email, to: "l\($0)@example.com"), .set(\.name, to: "q\($0)")] })
        _ = try store.deleteEveryModel(DataStoreDeleteEveryModelRequest<Patron>(editingState: EditingState()))
        let kept = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(kept.map(\.changes.count) == [20], "the history over its limit was not trimmed to nine tenths")
    }

    /// A multi-row update is padded to a power of two of rows (rows of `NULL`s that match nothing),
    /// so saves of 5 and of 7 changed models run one text, kept prepared, and store what they say.
    @Test func multiRowUpdatesOfNearbySizesShareOnePreparedText() throws {
        let namespace = PostgreSQLServer.freshNamespace("padded")
        let (container, store) = try Self.container(namespace)
        let context = ModelContext(container)
        _ = try context.insert(
            Patron.self, rows: (0..<10).map { [.set(\.email, to: "m\($0)@example.com"), .set(\.name, to: "n\($0)")] })
        let patrons = try context.fetch(FetchDescriptor<Patron>(sortBy: [SortDescriptor(\.name)]))
        for patron in patrons.prefix(5) { patron.name += "-a" }
        try context.save()
        for patron in patrons.suffix(7) { patron.name += "-b" }
        try context.save()

        let texts = store.database.statements.named(containing: "FROM (VALUES")
            .filter { $0.contains(namespace) }
        #expect(texts.count == 1, "\(texts.count) texts for the two multi-row updates")
        #expect(texts.first.map { $0.components(separatedBy: "), (").count } == 8, "rows of the text")
        let names = try ModelContext(container).fetch(FetchDescriptor<Patron>(sortBy: [SortDescriptor(\.email)]))
            .map(\.name)
        let expected = (0..<10).map { "n\($0)" + ($0 < 5 ? "-a" : "") + ($0 >= 3 ? "-b" : "") }
        #expect(names == expected)
    }

    /// Synchronous, with the admin statement run on the store's bridge: an `await` here could wait
    /// for a thread of the cooperative pool (which parallel synchronous tests hold) for longer than
    /// the pool keeps an idle connection, and a new connection would prepare afresh.
    @Test func aFetchAndAnUpdateRunPreparedGiveTheirResultsAgainAfterTheTableIsAltered() throws {
        let namespace = PostgreSQLServer.freshNamespace("prep")
        let (container, store) = try Self.container(namespace)
        let context = ModelContext(container)
        _ = try context.insert(
            Patron.self, rows: (0..<10).map { [.set(\.email, to: "a\($0)@example.com"), .set(\.name, to: "r\($0)")] })
        let email = "a3@example.com"
        let unique = FetchDescriptor<Patron>(predicate: #Predicate { $0.email == email })
        for _ in 0..<3 { #expect(try ModelContext(container).fetch(unique).map(\.name) == ["r3"]) }
        let editing = ModelContext(container)
        let patron = try #require(try editing.fetch(unique).first)
        patron.age = 41
        try editing.save()

        // Another program changes a column's type: the prepared statements' results change shape
        // (PostgreSQL refuses to run them: "cached plan must not change result type").
        try BridgeExecutor.shared.wait(
            for: {
                try await AdminConnection.using { admin in
                    _ = try await admin.run(
                        "ALTER TABLE \"\(namespace)\".\"Patron\" ALTER COLUMN \"name\" TYPE varchar(200)")
                }
            }, storeURL: "the test server")

        #expect(try ModelContext(container).fetch(unique).map { [$0.name, "\($0.age)"] } == [["r3", "41"]])
        #expect(
            !store.database.statements.refused(containing: namespace).isEmpty,
            "the server did not refuse a prepared statement after the table changed: the test tests nothing")
        patron.age = 42
        try editing.save()
        #expect(try ModelContext(container).fetch(unique).map { [$0.name, "\($0.age)"] } == [["r3", "42"]])
    }
}
