import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// The history row's body: format 1 (one JSON line per change) as older builds wrote it, and
/// format 2 (`{"v":2,"c":[…]}`), whose one line for a delete of every model names all the keys.
/// A reader takes both, and the deletions read are those format 1 gave; a newer format is refused.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLHistoryFormatTests {
    typealias Transaction = DefaultHistoryTransaction

    private func container(_ namespace: String, historyLimit: Int? = 10_000) throws -> ModelContainer {
        var configuration = try PostgreSQLServer.configuration(namespace: namespace)
        configuration.historyLimit = historyLimit
        return try ModelContainer(for: Counter.schema, configurations: [configuration])
    }

    /// Whether every change is a deletion of a counter.
    private func allDeletions(_ changes: [HistoryChange]) -> Bool {
        changes.allSatisfy { if case .delete = $0 { true } else { false } }
    }

    @Test func deletingEveryModelStoresOneLineOfKeysThatReadsAsEveryDeletion() async throws {
        let namespace = PostgreSQLServer.freshNamespace("fd")
        let container = try container(namespace)
        let context = ModelContext(container)
        // More than the batch delete's threshold for deleting every row, and keys with gaps.
        for index in 0..<700 { context.insert(Counter(name: "d\(index)")) }
        try context.save()
        for counter in try context.fetch(FetchDescriptor<Counter>()) where counter.name.hasSuffix("7") {
            context.delete(counter)
        }
        try context.save()
        let ids = try context.fetchIdentifiers(FetchDescriptor<Counter>())
        #expect(ids.count == 630)
        try context.delete(model: Counter.self)
        try await AdminConnection.using { admin in
            let stored = try await admin.run(
                "SELECT changes::text || ' ' || length(body::text)::text || ' ' || left(body::text, 60) "
                    + "FROM \"\(namespace)\".\"modelstore_history\" WHERE number = 3")
            let fields = try #require(stored.first).split(separator: " ", maxSplits: 2).map(String.init)
            #expect(fields.first == "630")
            // Format 1 wrote about 30 bytes per deletion; the keys alone are at most 5 here.
            #expect((Int(fields[1]) ?? .max) < 630 * 7, "the body is \(fields[1]) bytes")
            #expect(fields.last?.hasPrefix("{\"v\":2,\"c\":[{\"k\":\"d\",\"e\":\"Counter\",\"ps\":[") == true)
        }
        // Another store on the namespace (as another process) and this context read the same
        // deletions: one per deleted model, nothing else.
        for reader in [context, ModelContext(try self.container(namespace))] {
            let history = try reader.fetchHistory(HistoryDescriptor<Transaction>())
            #expect(history.map(\.token.transactionNumber) == [1, 2, 3])
            let deletions = try #require(history.last).changes
            #expect(deletions.count == 630)
            #expect(Set(deletions.map(\.changedPersistentIdentifier)) == Set(ids))
            #expect(allDeletions(deletions))
        }
    }

    @Test func deletingEveryModelAfterTheHistoryWasTrimmedToNothingStillWritesOneLineOfKeys() async throws {
        let namespace = PostgreSQLServer.freshNamespace("ft")
        let container = try container(namespace, historyLimit: 100)
        let context = ModelContext(container)
        // 150 inserts, then 110 deletes: each save alone is over the limit, and trims the history
        // to nothing, so the row numbered before the delete of every model is gone.
        for index in 0..<150 { context.insert(Counter(name: "t\(index)")) }
        try context.save()
        for counter in try context.fetch(FetchDescriptor<Counter>()).prefix(110) { context.delete(counter) }
        try context.save()
        let ids = try context.fetchIdentifiers(FetchDescriptor<Counter>())
        #expect(ids.count == 40)
        try context.delete(model: Counter.self)
        try await AdminConnection.using { admin in
            let stored = try await admin.run(
                "SELECT number::text || ':' || changes::text || ':' || cumulative::text || ' ' || left(body::text, 7) "
                    + "FROM \"\(namespace)\".\"modelstore_history\" ORDER BY number")
            #expect(stored == ["3:40:40 {\"v\":2,"])
        }
        let history = try ModelContext(try self.container(namespace)).fetchHistory(HistoryDescriptor<Transaction>())
        #expect(history.map(\.token.transactionNumber) == [3])
        let deletions = try #require(history.last).changes
        #expect(Set(deletions.map(\.changedPersistentIdentifier)) == Set(ids))
        #expect(deletions.count == 40 && allDeletions(deletions))
    }

    @Test func aRowOfFormatOneStillReads() async throws {
        let namespace = PostgreSQLServer.freshNamespace("f1")
        let container = try container(namespace)
        let context = ModelContext(container)
        for index in 0..<3 { context.insert(Counter(name: "o\(index)")) }
        try context.save()
        let ids = try context.fetchIdentifiers(FetchDescriptor<Counter>())
        let keys = ids.compactMap(\.primaryKey.intValue)
        #expect(keys.count == 3)
        // A delete of every counter as an older build recorded it: one line per deletion.
        let body = "[" + keys.map { "{\"k\":\"d\",\"e\":\"Counter\",\"p\":\($0)}" }.joined(separator: ",") + "]"
        try await AdminConnection.using { admin in
            let history = "\"\(namespace)\".\"modelstore_history\""
            try await admin.run("BEGIN")
            try await admin.run("DELETE FROM \"\(namespace)\".\"Counter\"")
            try await admin.run(
                "UPDATE \"\(namespace)\".\"modelstore_meta\" SET value = '2' WHERE key = 'historyLast'")
            try await admin.run(
                "INSERT INTO \(history) (number, changes, cumulative, committed, author, body) "
                    + "SELECT 2, 3, cumulative + 3, 0, NULL, '\(body)' FROM \(history) WHERE number = 1")
            try await admin.run("COMMIT")
        }
        let read = try ModelContext(try self.container(namespace)).fetchHistory(HistoryDescriptor<Transaction>())
        #expect(read.map(\.token.transactionNumber) == [1, 2])
        let deletions = try #require(read.last).changes
        #expect(deletions.map(\.changedPersistentIdentifier) == ids)
        #expect(allDeletions(deletions))
        #expect(read.first?.changes.count == 3)
    }

    @Test func aRowOfANewerFormatFailsTheReadSayingSo() async throws {
        let namespace = PostgreSQLServer.freshNamespace("f3")
        let container = try container(namespace)
        let context = ModelContext(container)
        context.insert(Counter(name: "n"))
        try context.save()
        try await AdminConnection.using { admin in
            try await admin.run(
                "UPDATE \"\(namespace)\".\"modelstore_history\" SET body = '{\"v\":3,\"x\":[]}' WHERE number = 1")
        }
        let error = try #require(throws: DataStoreError.self) {
            try ModelContext(container).fetchHistory(HistoryDescriptor<Transaction>())
        }
        #expect(error.code == .corrupted)
        #expect("\(error)".contains("format 3"), "\(error)")
        #expect("\(error)".contains("newer build"), "\(error)")
    }
}
