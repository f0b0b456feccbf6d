import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// What a server brings that a file does not: an unreachable server, a connection lost during a
/// save, a statement timeout, serialization failures, and rows changed by another process.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLFailureTests {
    /// A container on a fresh namespace with counters `c0`, `c1`… at zero.
    private func counters(_ count: Int, namespace: String, statementTimeout: Duration? = nil) throws -> ModelContainer {
        let configuration = try PostgreSQLServer.configuration(namespace: namespace, statementTimeout: statementTimeout)
        let container = try ModelContainer(for: Counter.schema, configurations: [configuration])
        let context = ModelContext(container)
        for index in 0..<count { context.insert(Counter(name: "c\(index)")) }
        try context.save()
        return container
    }

    private func values(in container: ModelContainer) throws -> [String: Int] {
        let all = try ModelContext(container).fetch(FetchDescriptor<Counter>())
        return Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0.value) })
    }

    @Test func aRowChangedByAnotherProcessIsAConflictNotALostUpdate() throws {
        let namespace = PostgreSQLServer.freshNamespace()
        let first = try counters(1, namespace: namespace)
        // A second container stands in for a second process: it shares only the database.
        let second = try ModelContainer(
            for: Counter.schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
        let mine = ModelContext(first)
        let theirs = ModelContext(second)
        let myCounter = try #require(try mine.fetch(FetchDescriptor<Counter>()).first)
        let theirCounter = try #require(try theirs.fetch(FetchDescriptor<Counter>()).first)
        theirCounter.value = 10
        try theirs.save()
        myCounter.value = 1
        let error = try #require(throws: DataStoreError.self) { try mine.save() }
        #expect(error.code == .conflict)
        #expect(error.entityName == "Counter")
        #expect(error.message.contains("Counter"))
        #expect(try values(in: first) == ["c0": 10])
        // Saving again without reading the row again is still a conflict.
        let again = #expect(throws: DataStoreError.self) { try mine.save() }
        #expect(again?.code == .conflict)
        // After a rollback and a fetch the context has the new value and version; its change goes through.
        mine.rollback()
        let refetched = try #require(try mine.fetch(FetchDescriptor<Counter>()).first)
        #expect(refetched === myCounter)
        #expect(myCounter.value == 10)
        myCounter.value += 1
        try mine.save()
        #expect(try values(in: second) == ["c0": 11])
    }

    @Test func deletingARowChangedElsewhereIsAConflict() throws {
        let namespace = PostgreSQLServer.freshNamespace()
        let first = try counters(1, namespace: namespace)
        let second = try ModelContainer(
            for: Counter.schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
        let mine = ModelContext(first)
        let doomed = try #require(try mine.fetch(FetchDescriptor<Counter>()).first)
        let theirs = ModelContext(second)
        try #require(try theirs.fetch(FetchDescriptor<Counter>()).first).value = 5
        try theirs.save()
        mine.delete(doomed)
        let deleteError = #expect(throws: DataStoreError.self) { try mine.save() }
        #expect(deleteError?.code == .conflict)
        #expect(try values(in: second) == ["c0": 5])
    }

    // The backend is terminated while the save waits for a lock inside its transaction. This once
    // hung on a loaded machine: the rollback after the failure was written to a channel NIO had
    // already closed, and PostgresNIO never answers such a query (see `Session.query`).
    @Test
    func aDroppedConnectionFailsTheSaveStoresNothingAndTheNextSaveReconnects() async throws {
        let namespace = PostgreSQLServer.freshNamespace()
        let container = try counters(2, namespace: namespace)
        try await AdminConnection.using { admin in
            try await droppedConnection(namespace: namespace, container: container, admin: admin)
        }
    }

    private func droppedConnection(
        namespace: String, container: ModelContainer, admin: AdminConnection
    ) async throws {
        // Another session holds c0's row, so the save waits inside its transaction after it has
        // already inserted a counter and updated c1.
        try await admin.run("BEGIN")
        try await admin.run("SELECT value FROM \"\(namespace)\".\"Counter\" WHERE name = 'c0' FOR UPDATE")
        let save = onThread {
            let context = ModelContext(container)
            context.insert(Counter(name: "new"))
            let all = try context.fetch(FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.name, order: .reverse)]))
            for counter in all { counter.value = 7 }
            try context.save()
        }
        var waiting: [String] = []
        for _ in 0..<1200 where waiting.isEmpty {
            try await Task.sleep(for: .milliseconds(25))
            waiting = try await admin.backendsWaitingForLocks(in: namespace)
        }
        let pid = try #require(waiting.first, "the save never waited for the lock")
        try await admin.run("SELECT pg_terminate_backend(\(pid))::text")
        try await admin.run("ROLLBACK")
        let error = await #expect(throws: DataStoreError.self) { try await save.value }
        #expect(error?.code == .io)
        #expect(try values(in: container) == ["c0": 0, "c1": 0])
        // The pool replaces the dead connection: the next save goes through.
        let context = ModelContext(container)
        context.insert(Counter(name: "after"))
        try context.save()
        #expect(try values(in: container)["after"] == 0)
    }

    @Test func aStatementPastTheTimeoutIsCancelledAndChangesNothing() async throws {
        let namespace = PostgreSQLServer.freshNamespace()
        let container = try counters(1, namespace: namespace, statementTimeout: .milliseconds(300))
        try await AdminConnection.using { admin in
            try await admin.run("BEGIN")
            try await admin.run("SELECT value FROM \"\(namespace)\".\"Counter\" WHERE name = 'c0' FOR UPDATE")
            let saved = onThread {
                let context = ModelContext(container)
                context.insert(Counter(name: "new"))
                try #require(
                    try context.fetch(FetchDescriptor<Counter>(predicate: #Predicate { $0.name == "c0" })).first
                )
                .value = 3
                try context.save()
            }
            let error = await #expect(throws: DataStoreError.self) { try await saved.value }
            try await admin.run("ROLLBACK")
            #expect(error?.code == .locked)
            #expect(error?.message.contains("statement timeout") == true)
            #expect(try values(in: container) == ["c0": 0])
        }
    }

    @Test func concurrentIncrementsLoseNothing() async throws {
        let namespace = PostgreSQLServer.freshNamespace()
        let container = try counters(2, namespace: namespace)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for step in 0..<10 { _ = try increment("c\((worker + step) % 2)", in: container) }
                }
            }
            try await group.waitForAll()
        }
        #expect(try values(in: container) == ["c0": 20, "c1": 20])
    }

    @Test func theAsynchronousEntryPointsAwaitTheStore() async throws {
        let namespace = PostgreSQLServer.freshNamespace()
        let container = try counters(3, namespace: namespace)
        let context = ModelContext(container)
        let descriptor = FetchDescriptor<Counter>(
            predicate: #Predicate { $0.name != "c1" }, sortBy: [SortDescriptor(\.name)])
        let fetched = try await context.fetchAsync(descriptor)
        #expect(fetched.map(\.name) == ["c0", "c2"])
        for counter in fetched { counter.value = 4 }
        try await context.saveAsync()
        #expect(try await context.fetchCountAsync(descriptor) == 2)
        #expect(try values(in: container) == ["c0": 4, "c1": 0, "c2": 4])
    }
}

/// Opening: an unreachable server, refused credentials, and where the password may never appear.
struct PostgreSQLOpeningTests {
    private static let password = "never-show-this-9f2c"

    private func unusedPort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func aServerThatIsDownFailsTheOpenWithTheURLButNotThePassword() throws {
        let port = try unusedPort()
        let configuration = PostgreSQLStoreConfiguration(
            host: "127.0.0.1", port: port, username: "someone", password: Self.password, database: "nowhere",
            connectTimeout: .seconds(2))
        let error = try #require(throws: DataStoreError.self) {
            try ModelContainer(for: Counter.schema, configurations: [configuration])
        }
        #expect(error.code == .io)
        #expect("\(error)".contains("someone@127.0.0.1:\(port)/nowhere"))
        #expect(!"\(error)".contains(Self.password))
        #expect(!String(reflecting: error).contains(Self.password))
    }

    @Test func theConfigurationNeverShowsThePassword() throws {
        let configuration = try PostgreSQLStoreConfiguration(
            url: "postgres://me:\(Self.password)@db.example:6543/app?namespace=tenant&statement_timeout=250",
            environment: [:])
        #expect(configuration.username == "me")
        #expect(configuration.host == "db.example")
        #expect(configuration.port == 6543)
        #expect(configuration.database == "app")
        #expect(configuration.namespace == "tenant")
        #expect(configuration.statementTimeout == .milliseconds(250))
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in ["\(configuration)", String(reflecting: configuration), dumped] {
            #expect(!text.contains(Self.password), "\(text)")
        }
        #expect(configuration.redactedURL == "postgres://me@db.example:6543/app?namespace=tenant")
    }

    @Test func missingPartsComeFromThePGVariablesAndASocketIsAHost() throws {
        let environment = ["PGHOST": "/run/pg", "PGPORT": "5433", "PGUSER": "env", "PGDATABASE": "envdb"]
        let configuration = try PostgreSQLStoreConfiguration(url: "postgresql://", environment: environment)
        #expect(configuration.username == "env")
        #expect(configuration.database == "envdb")
        #expect(configuration.unixSocketPath == "/run/pg/.s.PGSQL.5433")
        let encoded = try PostgreSQLStoreConfiguration(url: "postgres://me@%2Ftmp%2Fpg/db", environment: [:])
        #expect(encoded.unixSocketPath == "/tmp/pg/.s.PGSQL.5432")
        #expect(throws: DataStoreError.self) {
            try PostgreSQLStoreConfiguration(url: "postgres://me@h/db?sslmode=sometimes", environment: [:])
        }
    }

    @Test func theSchemesAreRegisteredWhenTheModuleLoads() throws {
        #expect(StoreRegistry.shared.scheme(named: "postgres") != nil)
        #expect(StoreRegistry.shared.scheme(named: "postgresql") != nil)
        let configuration = try StoreRegistry.shared.configuration(for: "postgres://me@localhost:5432/app?namespace=n1")
        let postgres = try #require(configuration as? PostgreSQLStoreConfiguration)
        #expect(postgres.namespace == "n1")
    }
}
