import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// The history row's body: format 1 (one JSON line per change) and format 2 (`{"v":2,"c":[…]}`,
/// whose one line for a delete of every model names all the keys) as older builds wrote them, and
/// format 3, whose line names the keys as runs of consecutive keys. A reader takes all three, and
/// the deletions read are those format 1 gave; a newer format is refused.
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

    /// Deletes every counter through the store, as `ModelContext.delete(model:)` does, and returns
    /// the identifiers the store says it deleted.
    private func deleteEveryCounter(_ container: ModelContainer) throws -> [PersistentIdentifier] {
        let store = try #require(container.stores.first as? PostgreSQLStore)
        return Array(
            try store.deleteEveryModel(DataStoreDeleteEveryModelRequest<Counter>(editingState: EditingState())))
    }

    /// The runs of consecutive keys of these identifiers, as a format 3 body writes them.
    private func runs(_ ids: [PersistentIdentifier]) -> String {
        var runs: [(Int64, Int64)] = []
        for key in ids.compactMap(\.primaryKey.intValue).sorted() {
            if let last = runs.last, last.1 + 1 == key { runs[runs.count - 1].1 = key } else { runs.append((key, key)) }
        }
        return runs.map { "[\($0.0),\($0.1)]" }.joined(separator: ",")
    }

    @Test func deletingEveryModelStoresItsKeysAsRunsThatReadAsEveryDeletion() async throws {
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
        let expectedRuns = runs(ids)
        #expect(expectedRuns.split(separator: "[").count == 71, "the keys are not in 71 runs: \(expectedRuns)")
        let deleted = try deleteEveryCounter(container)
        #expect(Set(deleted) == Set(ids) && deleted.count == ids.count)
        try await AdminConnection.using { admin in
            let stored = try await admin.run(
                "SELECT changes::text || ' ' || body::text FROM \"\(namespace)\".\"modelstore_history\" "
                    + "WHERE number = 3")
            #expect(stored == ["630 {\"v\":3,\"c\":[{\"k\":\"d\",\"e\":\"Counter\",\"rs\":[\(expectedRuns)]}]}"])
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
            #expect(stored == ["3:40:40 {\"v\":3,"])
        }
        let history = try ModelContext(try self.container(namespace)).fetchHistory(HistoryDescriptor<Transaction>())
        #expect(history.map(\.token.transactionNumber) == [3])
        let deletions = try #require(history.last).changes
        #expect(Set(deletions.map(\.changedPersistentIdentifier)) == Set(ids))
        #expect(deletions.count == 40 && allDeletions(deletions))
    }

    /// Three counters, then their deletion as an older build recorded it: the rows deleted and
    /// history row 2 written by hand, its body made from the keys (in the order of their
    /// identifiers). Returns the identifiers.
    private func deletionRecordedByHand(
        _ namespace: String, body: ([Int64]) -> String
    ) async throws -> [PersistentIdentifier] {
        let context = ModelContext(try container(namespace))
        for index in 0..<3 { context.insert(Counter(name: "o\(index)")) }
        try context.save()
        let ids = try context.fetchIdentifiers(FetchDescriptor<Counter>())
        let keys = ids.compactMap(\.primaryKey.intValue)
        #expect(keys.count == 3)
        try await AdminConnection.using { admin in
            let history = "\"\(namespace)\".\"modelstore_history\""
            try await admin.run("BEGIN")
            try await admin.run("DELETE FROM \"\(namespace)\".\"Counter\"")
            try await admin.run(
                "UPDATE \"\(namespace)\".\"modelstore_meta\" SET value = '2' WHERE key = 'historyLast'")
            try await admin.run(
                "INSERT INTO \(history) (number, changes, cumulative, committed, author, body) "
                    + "SELECT 2, 3, cumulative + 3, 0, NULL, '\(body(keys))' FROM \(history) WHERE number = 1")
            try await admin.run("COMMIT")
        }
        return ids
    }

    @Test func aRowOfFormatOneStillReads() async throws {
        let namespace = PostgreSQLServer.freshNamespace("f1")
        // One line per deletion.
        let ids = try await deletionRecordedByHand(namespace) { keys in
            "[" + keys.map { "{\"k\":\"d\",\"e\":\"Counter\",\"p\":\($0)}" }.joined(separator: ",") + "]"
        }
        let read = try ModelContext(try self.container(namespace)).fetchHistory(HistoryDescriptor<Transaction>())
        #expect(read.map(\.token.transactionNumber) == [1, 2])
        let deletions = try #require(read.last).changes
        #expect(deletions.map(\.changedPersistentIdentifier) == ids)
        #expect(allDeletions(deletions))
        #expect(read.first?.changes.count == 3)
    }

    @Test func aRowOfFormatTwoStillReads() async throws {
        let namespace = PostgreSQLServer.freshNamespace("f2")
        // One line of keys, in the order the server deleted the rows (here the reverse).
        let ids = try await deletionRecordedByHand(namespace) { keys in
            let listed = keys.reversed().map(String.init).joined(separator: ",")
            return "{\"v\":2,\"c\":[{\"k\":\"d\",\"e\":\"Counter\",\"ps\":[\(listed)]}]}"
        }
        let read = try ModelContext(try self.container(namespace)).fetchHistory(HistoryDescriptor<Transaction>())
        #expect(read.map(\.token.transactionNumber) == [1, 2])
        let deletions = try #require(read.last).changes
        #expect(deletions.map(\.changedPersistentIdentifier) == ids.reversed())
        #expect(allDeletions(deletions))
    }

    /// The error of reading the history of one saved counter after its row's body was replaced by
    /// `body` (a JSON text, quoted for SQL).
    private func readError(withBody body: String) async throws -> DataStoreError {
        let namespace = PostgreSQLServer.freshNamespace("fb")
        let container = try container(namespace)
        let context = ModelContext(container)
        context.insert(Counter(name: "n"))
        try context.save()
        try await AdminConnection.using { admin in
            try await admin.run(
                "UPDATE \"\(namespace)\".\"modelstore_history\" SET body = '\(body)' WHERE number = 1")
        }
        return try #require(throws: DataStoreError.self) {
            try ModelContext(container).fetchHistory(HistoryDescriptor<Transaction>())
        }
    }

    @Test func aRowWhoseRunsNameMoreKeysThanItCountsFailsTheRead() async throws {
        let error = try await readError(
            withBody: "{\"v\":3,\"c\":[{\"k\":\"d\",\"e\":\"Counter\",\"rs\":[[1,9223372036854775807]]}]}")
        #expect(error.code == .corrupted)
        #expect("\(error)".contains("cannot be read"), "\(error)")
    }

    @Test func aRowOfANewerFormatFailsTheReadSayingSo() async throws {
        let error = try await readError(withBody: "{\"v\":4,\"x\":[]}")
        #expect(error.code == .corrupted)
        #expect("\(error)".contains("format 4"), "\(error)")
        #expect("\(error)".contains("newer build"), "\(error)")
    }
}
