import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// Deleting every model while another store (as another process) inserts one: the delete locks the
/// table against writers and reads the keys it deletes as runs, so the model inserted meanwhile is
/// either deleted and reported (by the identifiers returned and by the history), or left in place,
/// never deleted unreported.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLDeleteEveryModelTests {
    typealias Transaction = DefaultHistoryTransaction

    private func container(_ namespace: String, historyLimit: Int? = 10_000) throws -> ModelContainer {
        var configuration = try PostgreSQLServer.configuration(namespace: namespace)
        configuration.historyLimit = historyLimit
        return try ModelContainer(for: Counter.schema, configurations: [configuration])
    }

    /// Deletes every counter through the store and returns the identifiers it says it deleted.
    private func deleteEveryCounter(_ container: ModelContainer) throws -> [PersistentIdentifier] {
        let store = try #require(container.stores.first as? PostgreSQLStore)
        return Array(
            try store.deleteEveryModel(DataStoreDeleteEveryModelRequest<Counter>(editingState: EditingState())))
    }

    /// Polls until `count` of the namespace's statements wait for a lock.
    private func waitForWaiters(_ count: Int, in namespace: String, _ admin: AdminConnection) async throws {
        var waiting: [String] = []
        for _ in 0..<1200 where waiting.count < count {
            try await Task.sleep(for: .milliseconds(25))
            waiting = try await admin.backendsWaitingForLocks(in: namespace)
        }
        try #require(waiting.count >= count, "only \(waiting.count) statements waited for a lock, not \(count)")
    }

    /// Every counter's identifier, as another store reads them.
    private func stored(_ namespace: String) throws -> [PersistentIdentifier] {
        try ModelContext(try container(namespace)).fetchIdentifiers(FetchDescriptor<Counter>())
    }

    /// A store with `count` counters; with `gaps`, a tenth of them deleted again, so that the keys
    /// are several runs (the delete's count then differs from the span of the keys, and it reads
    /// the runs), else one run.
    private func filled(
        _ namespace: String, count: Int, gaps: Bool
    ) throws -> (ModelContainer, [PersistentIdentifier]) {
        let container = try container(namespace)
        return (container, try container.insertCounters(count: count, gaps: gaps))
    }

    /// Takes the history's counter in a transaction of `admin`, as a save does, so the next writer
    /// of the namespace waits for it.
    private func holdTheHistoryCounter(_ namespace: String, _ admin: AdminConnection) async throws {
        try await admin.run("BEGIN")
        try await admin.run(
            "SELECT value FROM \"\(namespace)\".\"modelstore_meta\" WHERE key = 'historyLast' FOR UPDATE")
    }

    /// Inserts a counter "late" through `container`'s store, on a thread of its own.
    private func insertLate(_ container: ModelContainer) -> Task<Void, any Error> {
        onThread {
            let context = ModelContext(container)
            context.insert(Counter(name: "late"))
            try context.save()
        }
    }

    @Test(arguments: [false, true]) func aModelInsertedBeforeTheLockIsDeletedAndReported(gaps: Bool) async throws {
        let namespace = PostgreSQLServer.freshNamespace("dl")
        let (container, ids) = try filled(namespace, count: 50, gaps: gaps)
        let other = try self.container(namespace)
        try await AdminConnection.using { admin in
            // The other store's insert has written its row and waits for the history's counter,
            // which this session holds; the delete of every model then waits for that insert.
            try await holdTheHistoryCounter(namespace, admin)
            let insert = insertLate(other)
            try await waitForWaiters(1, in: namespace, admin)
            let deleted = Task { try await Self.onThreadValue { try deleteEveryCounter(container) } }
            try await waitForWaiters(2, in: namespace, admin)
            try await admin.run("ROLLBACK")
            try await insert.value
            let returned = try await deleted.value
            let late = try #require(Set(returned).subtracting(ids).first, "the late model was not returned")
            #expect(Set(returned) == Set(ids).union([late]) && returned.count == ids.count + 1)
            #expect(try stored(namespace).isEmpty)
            // The history: the insert, then the deletion of every model, the late one included.
            let history = try ModelContext(try self.container(namespace)).fetchHistory(HistoryDescriptor<Transaction>())
            let last = try #require(history.last)
            #expect(Set(last.changes.map(\.changedPersistentIdentifier)) == Set(returned))
            #expect(last.changes.count == returned.count)
            let inserted = try #require(history.dropLast().last).changes.map(\.changedPersistentIdentifier)
            #expect(inserted == [late])
        }
    }

    @Test(arguments: [false, true]) func aModelInsertedAfterTheLockStaysAndIsNotReported(gaps: Bool) async throws {
        let namespace = PostgreSQLServer.freshNamespace("da")
        let (container, ids) = try filled(namespace, count: 50, gaps: gaps)
        let other = try self.container(namespace)
        try await AdminConnection.using { admin in
            // The delete of every model has locked the table and waits for the history's counter,
            // which this session holds; the other store's insert then waits for the table's lock.
            try await holdTheHistoryCounter(namespace, admin)
            let deleted = Task { try await Self.onThreadValue { try deleteEveryCounter(container) } }
            try await waitForWaiters(1, in: namespace, admin)
            let insert = insertLate(other)
            try await waitForWaiters(2, in: namespace, admin)
            try await admin.run("ROLLBACK")
            let returned = try await deleted.value
            try await insert.value
            #expect(Set(returned) == Set(ids) && returned.count == ids.count)
            let left = try stored(namespace)
            #expect(left.count == 1)
            #expect(Set(left).isDisjoint(with: returned))
            let history = try ModelContext(try self.container(namespace)).fetchHistory(HistoryDescriptor<Transaction>())
            let deletion = try #require(history.dropLast().last)
            #expect(Set(deletion.changes.map(\.changedPersistentIdentifier)) == Set(ids))
            #expect(deletion.changes.count == ids.count)
            #expect(try #require(history.last).changes.map(\.changedPersistentIdentifier) == left)
        }
    }

    @Test func deletingEveryModelWhoseKeysAreOneRunRecordsThatRun() async throws {
        let namespace = PostgreSQLServer.freshNamespace("d1")
        let (container, ids) = try filled(namespace, count: 20, gaps: false)
        let keys = ids.compactMap(\.primaryKey.intValue).sorted()
        #expect(keys.count == 20 && keys.last! - keys.first! == 19)
        let deleted = try deleteEveryCounter(container)
        #expect(deleted == ids.sorted { $0.primaryKey.intValue! < $1.primaryKey.intValue! })
        try await AdminConnection.using { admin in
            let stored = try await admin.run(
                "SELECT changes::text || ' ' || body::text FROM \"\(namespace)\".\"modelstore_history\" "
                    + "ORDER BY number DESC LIMIT 1")
            let body = "{\"v\":3,\"c\":[{\"k\":\"d\",\"e\":\"Counter\",\"rs\":[[\(keys.first!),\(keys.last!)]]}]}"
            #expect(stored == ["20 " + body])
        }
        let history = try ModelContext(try self.container(namespace)).fetchHistory(HistoryDescriptor<Transaction>())
        let last = try #require(history.last)
        #expect(last.changes.map(\.changedPersistentIdentifier) == deleted)
        #expect(last.changes.allSatisfy { if case .delete = $0 { true } else { false } })
        #expect(try stored(namespace).isEmpty)
    }

    @Test func deletingEveryModelOfAnEmptyTableRecordsNothing() throws {
        let namespace = PostgreSQLServer.freshNamespace("de")
        let container = try container(namespace)
        #expect(try deleteEveryCounter(container).isEmpty)
        #expect(try ModelContext(container).fetchHistory(HistoryDescriptor<Transaction>()).isEmpty)
    }

    /// One store deletes every model eight times, refilled in between: its `DELETE` and the
    /// statement that reads what it deleted stay prepared on the store's connection, and PostgreSQL
    /// plans them generically after five runs. Each delete still returns exactly the models there
    /// were and records exactly their run; the fourth finds keys with gaps (models deleted alone
    /// first) and records its runs instead, and the fifth an empty table and records nothing.
    @Test func deletingEveryModelAgainOnOneStoreRecordsEachTimeExactly() async throws {
        let namespace = PostgreSQLServer.freshNamespace("dr")
        let container = try container(namespace, historyLimit: nil)
        let history = "\"\(namespace)\".\"modelstore_history\""
        for round in 0..<8 {
            let context = ModelContext(container)
            let count = round == 4 ? 0 : 10 + round
            for index in 0..<count { context.insert(Counter(name: "r\(round)c\(index)")) }
            try context.save()
            if round == 3 {
                for counter in try context.fetch(FetchDescriptor<Counter>()) where counter.name.hasSuffix("3") {
                    context.delete(counter)
                }
                try context.save()
            }
            let ids = try context.fetchIdentifiers(FetchDescriptor<Counter>())
            let keys = ids.compactMap(\.primaryKey.intValue).sorted()
            let rows = "SELECT count(*)::text FROM \(history)"
            var before: [String] = []
            try await AdminConnection.using { admin in before = try await admin.run(rows) }
            let deleted = try deleteEveryCounter(container)
            #expect(deleted == ids.sorted { $0.primaryKey.intValue! < $1.primaryKey.intValue! }, "round \(round)")
            #expect(try stored(namespace).isEmpty)
            try await AdminConnection.using { admin in
                let last = try await admin.run(
                    "SELECT changes::text || ' ' || body::text FROM \(history) ORDER BY number DESC LIMIT 1")
                guard let first = keys.first, let end = keys.last else {
                    // Round 4: nothing recorded.
                    #expect(try await admin.run(rows) == before, "round \(round)")
                    return
                }
                var runs: [String] = []
                var start = first
                for (key, next) in zip(keys, keys.dropFirst() + [end + 2]) where next != key + 1 {
                    runs.append("[\(start),\(key)]")
                    start = next
                }
                #expect(runs.count == (round == 3 ? 2 : 1), "round \(round)")
                let body = "{\"v\":3,\"c\":[{\"k\":\"d\",\"e\":\"Counter\",\"rs\":[\(runs.joined(separator: ","))]}]}"
                #expect(last == ["\(keys.count) " + body], "round \(round)")
            }
        }
    }

    /// The history rows (`number:changes:cumulative`) and the counters (`key=value`) of a namespace.
    private func historyShape(_ namespace: String) async throws -> [String] {
        var shape: [String] = []
        try await AdminConnection.using { admin in
            shape = try await admin.run(
                "SELECT number::text || ':' || changes::text || ':' || cumulative::text "
                    + "FROM \"\(namespace)\".\"modelstore_history\" ORDER BY number")
            shape += try await admin.run(
                "SELECT key || '=' || value FROM \"\(namespace)\".\"modelstore_meta\" "
                    + "WHERE key IN ('historyLast', 'historyExpiredThrough') ORDER BY key")
        }
        return shape
    }

    /// Saves of `saves` new counters each under a history limit of `limit`, then every counter
    /// deleted: the delete of every model writes its history row and trims the history in its
    /// `DELETE`'s statement, without seeing that row, and leaves the history as a batch delete of
    /// the same models (which inserts its row, then trims) does. The cases: nothing to trim, the
    /// older rows trimmed up to one in the middle, all older rows trimmed, and the new row trimmed
    /// too (a delete past the limit on its own, as the benchmark's).
    @Test(
        arguments: [
            ([3, 3, 3], 20, ["1:3:3", "2:3:6", "3:3:9", "4:9:18", "historyExpiredThrough=0", "historyLast=4"]),
            ([3, 3, 3], 15, ["3:3:9", "4:9:18", "historyExpiredThrough=2", "historyLast=4"]),
            ([8], 10, ["2:8:16", "historyExpiredThrough=1", "historyLast=2"]),
            ([12], 10, ["historyExpiredThrough=2", "historyLast=2"]),
        ] as [([Int], Int, [String])])
    func deletingEveryModelTrimsTheHistoryAsABatchDeleteOfTheSameModels(
        saves: [Int], limit: Int, expected: [String]
    ) async throws {
        for everyModel in [true, false] {
            let namespace = PostgreSQLServer.freshNamespace(everyModel ? "dt" : "db")
            let container = try container(namespace, historyLimit: limit)
            let context = ModelContext(container)
            for (save, count) in saves.enumerated() {
                for index in 0..<count { context.insert(Counter(name: "s\(save)c\(index)")) }
                try context.save()
            }
            let ids = try context.fetchIdentifiers(FetchDescriptor<Counter>())
            if everyModel {
                let deleted = try deleteEveryCounter(container)
                #expect(Set(deleted) == Set(ids) && deleted.count == ids.count)
            } else {
                let store = try #require(container.stores.first as? PostgreSQLStore)
                try store.delete(DataStoreBatchDeleteRequest<Counter>(identifiers: ids, editingState: EditingState()))
            }
            #expect(try stored(namespace).isEmpty)
            #expect(try await historyShape(namespace) == expected, "deleting every model: \(everyModel)")
        }
    }

    /// Another writer takes the history's next number and holds the counter while the delete of
    /// every model runs, then commits its row: the `DELETE`'s statement, whose snapshot is older
    /// than that row, cannot know the running total before its number, fails, and is rolled back to
    /// its savepoint; the delete then records its run after that row, with the total that includes it.
    @Test func aDeleteWhoseNumberWaitedForAnotherWriterRecordsItsRunAfterThatWritersRow() async throws {
        let namespace = PostgreSQLServer.freshNamespace("dw")
        let (container, stored) = try filled(namespace, count: 20, gaps: false)
        let ids = stored.sorted { $0.primaryKey.intValue! < $1.primaryKey.intValue! }
        let keys = ids.compactMap(\.primaryKey.intValue)
        let update = "[{\"k\":\"u\",\"e\":\"Counter\",\"p\":\(keys[0]),\"u\":[\"value\"]}]"
        try await AdminConnection.using { admin in
            let history = "\"\(namespace)\".\"modelstore_history\""
            try await admin.run("BEGIN")
            try await admin.run(
                "UPDATE \"\(namespace)\".\"modelstore_meta\" SET value = (value::bigint + 1)::text "
                    + "WHERE key = 'historyLast'")
            try await admin.run(
                "INSERT INTO \(history) (number, changes, cumulative, committed, author, body) SELECT 2, 1, "
                    + "cumulative + 1, 0, 'another', '\(update)' FROM \(history) WHERE number = 1")
            let deleted = Task { try await Self.onThreadValue { try deleteEveryCounter(container) } }
            try await waitForWaiters(1, in: namespace, admin)
            try await admin.run("COMMIT")
            let returned = try await deleted.value
            #expect(returned == ids)
            let rows = try await admin.run(
                "SELECT number::text || ':' || changes::text || ':' || cumulative::text || ' ' || body::text "
                    + "FROM \(history) ORDER BY number")
            let run = "{\"v\":3,\"c\":[{\"k\":\"d\",\"e\":\"Counter\",\"rs\":[[\(keys.first!),\(keys.last!)]]}]}"
            #expect(rows.map { $0.prefix { $0 != " " } } == ["1:20:20", "2:1:21", "3:20:41"])
            #expect(rows.dropFirst() == ["2:1:21 " + update, "3:20:41 " + run])
        }
        #expect(try self.stored(namespace).isEmpty)
        let last = try #require(try ModelContext(container).fetchHistory(HistoryDescriptor<Transaction>()).last)
        #expect(last.changes.map(\.changedPersistentIdentifier) == ids)
    }

    /// Runs synchronous store work on a thread of its own and returns its value.
    private static func onThreadValue<Value: Sendable>(
        _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            Thread.detachNewThread {
                do { continuation.resume(returning: try work()) } catch { continuation.resume(throwing: error) }
            }
        }
    }
}
