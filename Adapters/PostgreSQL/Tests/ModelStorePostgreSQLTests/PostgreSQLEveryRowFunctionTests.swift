import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// The function in the namespace that deletes every model of an entity in one call: created at the
/// open of a namespace that lacks it (one made by an earlier build included), once however many
/// processes open the namespace at the same time, and, where it is missing or cannot serve, the
/// delete runs as a transaction of separate statements with the same results.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLEveryRowFunctionTests {
    typealias Transaction = DefaultHistoryTransaction

    static let function = "modelstore_delete_every_row_1"

    private func container(_ configuration: PostgreSQLStoreConfiguration) throws -> ModelContainer {
        var configuration = configuration
        configuration.historyLimit = 10_000
        return try ModelContainer(for: Counter.schema, configurations: [configuration])
    }

    private func container(_ namespace: String) throws -> ModelContainer {
        try container(try PostgreSQLServer.configuration(namespace: namespace))
    }

    /// Deletes every counter through the store; returns the identifiers it says it deleted.
    private func deleteEveryCounter(_ container: ModelContainer) throws -> [PersistentIdentifier] {
        let store = try #require(container.stores.first as? PostgreSQLStore)
        return Array(
            try store.deleteEveryModel(DataStoreDeleteEveryModelRequest<Counter>(editingState: EditingState())))
    }

    /// Deletes every counter, filled with or without gaps first, and checks what a delete of every
    /// model promises: the identifiers of exactly the models there were, ascending, none left, and a
    /// last history transaction of exactly their deletions.
    private func deletesExactly(_ container: ModelContainer, gaps: Bool) throws {
        let ids = try container.insertCounters(count: 30, gaps: gaps)
            .sorted { $0.primaryKey.intValue! < $1.primaryKey.intValue! }
        let deleted = try deleteEveryCounter(container)
        #expect(deleted == ids)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Counter>()) == 0)
        let last = try #require(try ModelContext(container).fetchHistory(HistoryDescriptor<Transaction>()).last)
        #expect(last.changes.map(\.changedPersistentIdentifier) == ids)
        #expect(last.changes.allSatisfy { if case .delete = $0 { true } else { false } })
    }

    /// How many functions of that name the namespace has.
    private func functions(in namespace: String, _ admin: AdminConnection) async throws -> Int {
        let rows = try await admin.run(
            "SELECT count(*)::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                + "WHERE n.nspname = '\(namespace)' AND p.proname = '\(Self.function)'")
        return Int(rows.first ?? "") ?? -1
    }

    /// Drops the namespace's function, as a namespace an earlier build created lacks it.
    private func dropFunction(in namespace: String, _ admin: AdminConnection) async throws {
        try await admin.run("DROP FUNCTION \"\(namespace)\".\(Self.function)")
    }

    /// The statements of the namespace that wait for a lock.
    private func waiting(in namespace: String, _ admin: AdminConnection, atLeast count: Int) async throws -> [String] {
        var statements: [String] = []
        for _ in 0..<1200 where statements.count < count {
            try await Task.sleep(for: .milliseconds(25))
            try await admin.run("SELECT pg_stat_clear_snapshot()::text")
            statements = try await admin.run(
                "SELECT pid::text || ' ' || query FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    + "AND pid <> pg_backend_pid() AND position('\"\(namespace)\"' in query) > 0")
        }
        try #require(statements.count >= count, "only \(statements.count) statements waited for a lock")
        return statements
    }

    /// Starts deleting every counter on a thread of its own while `admin` holds the history's
    /// counter, and returns the delete and the statement that waits for the counter.
    private func deleteWaitingForTheCounter(
        _ container: ModelContainer, _ namespace: String, _ admin: AdminConnection
    ) async throws -> (Task<[PersistentIdentifier], any Error>, String) {
        try await admin.run("BEGIN")
        try await admin.run(
            "SELECT value FROM \"\(namespace)\".\"modelstore_meta\" WHERE key = 'historyLast' FOR UPDATE")
        let deleted = Task {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<[PersistentIdentifier], any Error>) in
                Thread.detachNewThread {
                    do { continuation.resume(returning: try deleteEveryCounter(container)) } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        }
        return (deleted, try await waiting(in: namespace, admin, atLeast: 1)[0])
    }

    @Test func theDeleteOfEveryModelIsOneCallOfTheNamespacesFunction() async throws {
        let namespace = PostgreSQLServer.freshNamespace("fc")
        let container = try container(namespace)
        let ids = try container.insertCounters(count: 20, gaps: false)
        try await AdminConnection.using { admin in
            #expect(try await functions(in: namespace, admin) == 1)
            let (deleted, statement) = try await deleteWaitingForTheCounter(container, namespace, admin)
            #expect(statement.contains(Self.function), "\(statement)")
            try await admin.run("ROLLBACK")
            #expect(Set(try await deleted.value) == Set(ids))
        }
        try deletesExactly(container, gaps: true)
        try deletesExactly(container, gaps: false)
    }

    @Test func aNamespaceWithoutTheFunctionGetsItAtItsNextOpen() async throws {
        let namespace = PostgreSQLServer.freshNamespace("fo")
        _ = try container(namespace).insertCounters(count: 5, gaps: false)
        try await AdminConnection.using { admin in
            try await dropFunction(in: namespace, admin)
            #expect(try await functions(in: namespace, admin) == 0)
        }
        let reopened = try container(namespace)
        try await AdminConnection.using { admin in
            #expect(try await functions(in: namespace, admin) == 1)
            // The reopened store deletes through it.
            let (deleted, statement) = try await deleteWaitingForTheCounter(reopened, namespace, admin)
            #expect(statement.contains(Self.function), "\(statement)")
            try await admin.run("ROLLBACK")
            #expect(try await deleted.value.count == 5)
        }
        try deletesExactly(reopened, gaps: true)
    }

    /// Processes opening a namespace at the same time, new or without the function, take turns
    /// under the namespace's lock: every open succeeds, and the namespace has the function once.
    /// (The two cases one after the other, each store closed once open: the server's connections
    /// are shared with the other suites running meanwhile.)
    @Test(.serialized, arguments: [false, true])
    func concurrentOpensCreateTheFunctionOnce(existing: Bool) async throws {
        let namespace = PostgreSQLServer.freshNamespace("fx")
        if existing {
            _ = try container(namespace).insertCounters(count: 5, gaps: false)
            try await AdminConnection.using { admin in try await dropFunction(in: namespace, admin) }
        }
        let opens = (0..<4).map { _ in
            Task {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
                    Thread.detachNewThread {
                        do {
                            let store = try container(namespace).stores.first as? PostgreSQLStore
                            store?.close()
                            continuation.resume(returning: store != nil)
                        } catch {
                            continuation.resume(throwing: error)
                        }
                    }
                }
            }
        }
        for open in opens { #expect(try await open.value) }
        try await AdminConnection.using { admin in
            let count = try await functions(in: namespace, admin)
            #expect(count == 1)
        }
        try deletesExactly(try container(namespace), gaps: false)
    }

    /// A store whose function was dropped after it opened the namespace finds it missing at its next
    /// delete of every model, and deletes with the transaction of separate statements, exactly, from
    /// then on.
    @Test func aFunctionDroppedAfterTheOpenLeavesTheDeleteToTheStatements() async throws {
        let namespace = PostgreSQLServer.freshNamespace("fd")
        let container = try container(namespace)
        try await AdminConnection.using { admin in try await dropFunction(in: namespace, admin) }
        try deletesExactly(container, gaps: false)
        try deletesExactly(container, gaps: true)
        let ids = try container.insertCounters(count: 10, gaps: false)
        try await AdminConnection.using { admin in
            let (deleted, statement) = try await deleteWaitingForTheCounter(container, namespace, admin)
            #expect(!statement.contains(Self.function), "\(statement)")
            try await admin.run("ROLLBACK")
            #expect(Set(try await deleted.value) == Set(ids))
        }
    }

    /// On a server whose transactions are SERIALIZABLE by default (here a database of its own), the
    /// function, which runs in the call's own transaction, returns at once having done nothing, and
    /// the store deletes with its transaction of statements, which asks for READ COMMITTED.
    @Test func aServerWhoseTransactionsAreNotReadCommittedDeletesWithTheStatements() async throws {
        let database = "iso_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
        let url = try #require(PostgreSQLServer.url)
        let base = try #require(url.range(of: "/", options: .backwards))
        try await AdminConnection.using { admin in
            try await admin.run("CREATE DATABASE \(database)")
            try await admin.run("ALTER DATABASE \(database) SET default_transaction_isolation = 'serializable'")
        }
        do {
            let namespace = PostgreSQLServer.freshNamespace("fs")
            var configuration = try PostgreSQLStoreConfiguration(url: url[..<base.upperBound] + database)
            configuration.namespace = namespace
            let container = try container(configuration)
            let store = try #require(container.stores.first as? PostgreSQLStore)
            try deletesExactly(container, gaps: false)
            try deletesExactly(container, gaps: true)
            #expect(try deleteEveryCounter(container).isEmpty)
            store.close()
        } catch {
            _ = try? await AdminConnection.using { admin in
                try await admin.run("DROP DATABASE \(database) WITH (FORCE)")
            }
            throw error
        }
        try await AdminConnection.using { admin in try await admin.run("DROP DATABASE \(database) WITH (FORCE)") }
    }

    /// The store's backend is terminated while the call waits for the history's counter, after its
    /// `DELETE`: the server rolls the call back, the delete fails with `.io`, every model is still
    /// there and nothing was recorded, and the next delete, on a new connection, deletes them all.
    @Test func aCallWhoseConnectionEndsFailsAndChangesNothing() async throws {
        let namespace = PostgreSQLServer.freshNamespace("ft")
        let container = try container(namespace)
        let ids = try container.insertCounters(count: 20, gaps: false)
        let recorded = try ModelContext(container).fetchHistory(HistoryDescriptor<Transaction>()).count
        try await AdminConnection.using { admin in
            let (deleted, statement) = try await deleteWaitingForTheCounter(container, namespace, admin)
            #expect(statement.contains(Self.function), "\(statement)")
            let pid = try #require(statement.split(separator: " ").first)
            try await admin.run("SELECT pg_terminate_backend(\(pid))::text")
            let error = await #expect(throws: DataStoreError.self) { try await deleted.value }
            #expect(error?.code == .io)
            try await admin.run("ROLLBACK")
        }
        #expect(Set(try ModelContext(container).fetchIdentifiers(FetchDescriptor<Counter>())) == Set(ids))
        #expect(try ModelContext(container).fetchHistory(HistoryDescriptor<Transaction>()).count == recorded)
        #expect(Set(try deleteEveryCounter(container)) == Set(ids))
    }
}
