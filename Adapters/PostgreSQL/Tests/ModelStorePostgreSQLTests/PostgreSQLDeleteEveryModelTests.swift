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

    private func container(_ namespace: String) throws -> ModelContainer {
        try ModelContainer(
            for: Counter.schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
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
        let context = ModelContext(container)
        for index in 0..<count { context.insert(Counter(name: "c\(index)")) }
        try context.save()
        for counter in try context.fetch(FetchDescriptor<Counter>()) where gaps && counter.name.hasSuffix("3") {
            context.delete(counter)
        }
        try context.save()
        return (container, try context.fetchIdentifiers(FetchDescriptor<Counter>()))
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
