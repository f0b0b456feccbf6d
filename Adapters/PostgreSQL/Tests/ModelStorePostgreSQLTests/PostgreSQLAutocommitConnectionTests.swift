import Foundation
import ModelStore
import PostgreSQLTestModels
import PostgresNIO
import Testing

@testable import ModelStorePostgreSQL

/// The connection a store keeps outside its pool (`AutocommitConnection`): reads and transactions
/// run on it, one caller at a time, the others on the pool; a connection the server ends is
/// replaced; a fetch during a save sees only what was committed; and it closes with the store.
///
/// One test at a time: each holds a store's connections and an admin connection, and the package's
/// suites together come near the test server's `max_connections`.
@Suite(.serialized, .enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLAutocommitConnectionTests {
    /// A store of `count` counters, `c<i>` at value `i * 7`.
    private func store(counters count: Int, namespace: String) throws -> (ModelContainer, PostgreSQLStore) {
        let configuration = try PostgreSQLServer.configuration(namespace: namespace)
        let container = try ModelContainer(for: Counter.schema, configurations: [configuration])
        let context = ModelContext(container)
        for index in 0..<count {
            let counter = Counter(name: "c\(index)")
            counter.value = index * 7
            context.insert(counter)
        }
        try context.save()
        return (container, try #require(container.stores.first as? PostgreSQLStore))
    }

    /// The server process of the connection a read runs on.
    private func readingBackend(_ store: PostgreSQLStore) async throws -> Int64 {
        try #require(try await store.database.read("testing") { try await $0.integer("SELECT pg_backend_pid()") })
    }

    /// The server process of the connection a transaction runs on (one of the pool's).
    private func transactionBackend(_ store: PostgreSQLStore) async throws -> Int64 {
        try #require(
            try await store.database.transaction("testing") { try await $0.integer("SELECT pg_backend_pid()") })
    }

    /// Reads until the store holds its kept connection (the first read opens it, in the background),
    /// then returns that connection's server process.
    private func keptBackend(_ store: PostgreSQLStore) async throws -> Int64 {
        let kept = try #require(store.database.autocommitConnection)
        for _ in 0..<400 where !kept.holdsConnection {
            _ = try await readingBackend(store)
            try await Task.sleep(for: .milliseconds(25))
        }
        #expect(kept.holdsConnection, "the kept connection never opened")
        return try await readingBackend(store)
    }

    /// The value of counter `name`, fetched through a fresh context with the synchronous API.
    private static func fetchValue(_ name: String, in container: ModelContainer) throws -> Int? {
        var descriptor = FetchDescriptor<Counter>(predicate: #Predicate { $0.name == name })
        descriptor.fetchLimit = 1
        return try ModelContext(container).fetch(descriptor).first?.value
    }

    private static func allValues(in container: ModelContainer) throws -> [String: Int] {
        let all = try ModelContext(container).fetch(FetchDescriptor<Counter>())
        return Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0.value) })
    }

    /// Which of these server processes still run.
    private static func alive(_ pids: [Int64], admin: AdminConnection) async throws -> [String] {
        try await admin.run(
            "SELECT pid::text FROM pg_stat_activity WHERE pid IN (\(pids.map(String.init).joined(separator: ", ")))")
    }

    /// Polls for 10 s at most until none of these server processes runs; returns those still running.
    private static func awaitGone(_ pids: [Int64], admin: AdminConnection) async throws -> [String] {
        var running = try await alive(pids, admin: admin)
        for _ in 0..<400 where !running.isEmpty {
            try await Task.sleep(for: .milliseconds(25))
            running = try await alive(pids, admin: admin)
        }
        return running
    }

    /// The server process of a pooled connection: a transaction's while a read holds the kept one.
    private func pooledBackend(_ store: PostgreSQLStore) async throws -> Int64 {
        let holding = Task {
            try await store.database.read("testing") { session in
                try await session.integer("SELECT pg_backend_pid()::bigint FROM pg_sleep(0.5)")
            }
        }
        try await Task.sleep(for: .milliseconds(150))
        let pooled = try await transactionBackend(store)
        _ = try await holding.value
        return pooled
    }

    @Test func callsRunOnOneKeptConnectionAndOnThePoolWhileItIsTaken() async throws {
        let (container, store) = try store(counters: 3, namespace: PostgreSQLServer.freshNamespace())
        // The store's first connection, opened to check the server, is kept from the open on: calls
        // one after another never needed another.
        #expect(store.database.autocommitConnection?.holdsConnection == true)
        let kept = try await keptBackend(store)
        #expect(try await readingBackend(store) == kept)
        #expect(try await transactionBackend(store) == kept)
        #expect(try Self.fetchValue("c2", in: container) == 14)
        #expect(store.database.autocommitConnection?.opensStartedSoFar == 0)
        #expect(try await pooledBackend(store) != kept)
        #expect(try await readingBackend(store) == kept)
        store.close()
    }

    /// Takes the connection once its open (started by an earlier take) has finished, polling for
    /// 10 s at most.
    private static func awaitOpened(_ kept: AutocommitConnection) async throws -> PostgresConnection {
        var taken: PostgresConnection?
        for _ in 0..<400 where taken == nil {
            try await Task.sleep(for: .milliseconds(25))
            taken = kept.take()
        }
        return try #require(taken, "the connection never opened")
    }

    @Test func oneCallerAtATimeHoldsTheConnection() async throws {
        let configuration = try PostgreSQLServer.configuration(namespace: PostgreSQLServer.freshNamespace())
        let kept = AutocommitConnection(open: { try await Database.connect(configuration) })
        // The first take starts the open and returns nothing; later ones return the connection.
        #expect(kept.take() == nil)
        let connection = try await Self.awaitOpened(kept)
        // Taken: no one else gets it until it is handed back.
        #expect(kept.take() == nil)
        #expect(kept.take() == nil)
        kept.handBack(connection, after: nil)
        let again = try #require(kept.take())
        #expect(again === connection)
        // A refused statement keeps the connection.
        let refused = await #expect(throws: (any Error).self) {
            try await Session(connection: again).query("SELECT * FROM no_such_table_here")
        }
        kept.handBack(again, after: refused)
        let afterRefusal = try #require(kept.take())
        #expect(afterRefusal === connection)
        // A statement whose backend the server ends (SQLSTATE 57P01): dropped and closed, another opened.
        let ended = await #expect(throws: (any Error).self) {
            try await Session(connection: afterRefusal).query("SELECT pg_terminate_backend(pg_backend_pid())")
        }
        kept.handBack(afterRefusal, after: ended)
        #expect(kept.take() == nil)
        let replacement = try await Self.awaitOpened(kept)
        #expect(replacement !== connection)
        try await connection.closeFuture.get()
        // Closed while taken: closed when handed back, and nothing is opened afterwards.
        kept.close()
        #expect(!replacement.isClosed)
        kept.handBack(replacement, after: nil)
        try await replacement.closeFuture.get()
        #expect(kept.take() == nil)
        try await Task.sleep(for: .milliseconds(100))
        #expect(!kept.holdsConnection)
    }

    @Test func aConnectionWhoseOpenEndsAfterTheCloseIsClosed() async throws {
        let configuration = try PostgreSQLServer.configuration(namespace: PostgreSQLServer.freshNamespace())
        let opened = LockedValue<PostgresConnection?>(nil)
        let kept = AutocommitConnection(open: {
            try await Task.sleep(for: .milliseconds(200))
            let connection = try await Database.connect(configuration)
            opened.withLock { $0 = connection }
            return connection
        })
        #expect(kept.take() == nil)
        kept.close()
        var connection: PostgresConnection?
        for _ in 0..<400 where connection == nil {
            try await Task.sleep(for: .milliseconds(25))
            connection = opened.withLock { $0 }
        }
        try await #require(connection).closeFuture.get()
        #expect(kept.take() == nil)
        #expect(!kept.holdsConnection)
    }

    @Test func concurrentFetchesEachGetTheirOwnRows() async throws {
        let count = 64
        let (container, store) = try store(counters: count, namespace: PostgreSQLServer.freshNamespace())
        _ = try await keptBackend(store)
        let wrong = LockedValue<[String]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for thread in 0..<6 {
                group.addTask {
                    try await onThread {
                        var random = SplitMix(seed: 4_800 + UInt64(thread))
                        for _ in 0..<60 {
                            let index = Int(random.next() % UInt64(count))
                            let value = try Self.fetchValue("c\(index)", in: container)
                            if value != index * 7 {
                                wrong.withLock { $0.append("c\(index): \(String(describing: value))") }
                            }
                        }
                    }.value
                }
            }
            for task in 0..<2 {
                group.addTask {
                    var random = SplitMix(seed: 9_600 + UInt64(task))
                    for _ in 0..<60 {
                        let index = Int(random.next() % UInt64(count))
                        let name = "c\(index)"
                        var descriptor = FetchDescriptor<Counter>(predicate: #Predicate { $0.name == name })
                        descriptor.fetchLimit = 1
                        let found = try await ModelContext(container).fetchAsync(descriptor)
                        if found.first?.value != index * 7 { wrong.withLock { $0.append("async \(name)") } }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(wrong.withLock { $0 } == [])
        store.close()
    }

    @Test func aFetchDuringASaveSeesOnlyWhatIsCommitted() async throws {
        let namespace = PostgreSQLServer.freshNamespace()
        let (container, store) = try store(counters: 2, namespace: namespace)
        _ = try await keptBackend(store)
        let seen = try await store.database.transaction("testing") { session in
            try await session.execute("UPDATE \"\(namespace)\".\"Counter\" SET value = 99 WHERE name = 'c1'")
            // Another connection (the kept one): the update is not committed yet.
            let during = try Self.fetchValue("c1", in: container)
            return during
        }
        #expect(seen == 7)
        #expect(try Self.fetchValue("c1", in: container) == 99)
        // A save through a context, then a fetch: the fetch sees it.
        let context = ModelContext(container)
        let counter = try #require(
            try context.fetch(FetchDescriptor<Counter>(predicate: #Predicate { $0.name == "c0" })).first)
        counter.value = 5
        try context.save()
        #expect(try Self.fetchValue("c0", in: container) == 5)
        store.close()
    }

    @Test func aTerminatedKeptConnectionIsReplacedAndFetchesGoOn() async throws {
        let (container, store) = try store(counters: 4, namespace: PostgreSQLServer.freshNamespace())
        try await AdminConnection.using { admin in
            var ended: Set<Int64> = []
            for round in 0..<3 {
                let kept = try await keptBackend(store)
                #expect(!ended.contains(kept), "round \(round): a terminated connection is still used")
                try await admin.run("SELECT pg_terminate_backend(\(kept))::text")
                ended.insert(kept)
                // The server process is gone (the call only signals it); the client may or may not
                // have seen its connection end yet.
                #expect(try await Self.awaitGone([kept], admin: admin) == [])
                #expect(try Self.fetchValue("c3", in: container) == 21)
                #expect(try Self.allValues(in: container) == ["c0": 0, "c1": 7, "c2": 14, "c3": 21])
            }
            // A new kept connection, not one of the ended ones.
            let last = try await keptBackend(store)
            #expect(!ended.contains(last))
            #expect(try await readingBackend(store) == last)
        }
        store.close()
    }

    @Test func closingTheStoreClosesTheKeptConnection() async throws {
        let (_, store) = try store(counters: 1, namespace: PostgreSQLServer.freshNamespace())
        try await AdminConnection.using { admin in
            let kept = try await keptBackend(store)
            let pooled = try await pooledBackend(store)
            #expect(try await Self.alive([kept, pooled], admin: admin).count == 2)
            store.close()
            #expect(try await Self.awaitGone([kept, pooled], admin: admin) == [])
        }
    }

    @Test func closingTheStoreDuringAReadClosesTheKeptConnectionAfterIt() async throws {
        let (_, store) = try store(counters: 1, namespace: PostgreSQLServer.freshNamespace())
        try await AdminConnection.using { admin in
            let kept = try await keptBackend(store)
            let reading = Task {
                try await store.database.read("testing") { session in
                    try await session.integer("SELECT pg_backend_pid()::bigint FROM pg_sleep(0.3)")
                }
            }
            try await Task.sleep(for: .milliseconds(100))
            store.close()
            #expect(try await reading.value == kept)
            #expect(try await Self.awaitGone([kept], admin: admin) == [])
        }
    }

    /// Seeded saves, fetches and terminations of the kept connection's backend, checked against a
    /// dictionary of what was saved.
    @Test(arguments: [UInt64(48), 4_801, 90_210])
    func randomSavesFetchesAndTerminationsMatchAnOracle(seed: UInt64) async throws {
        let (container, store) = try store(counters: 5, namespace: PostgreSQLServer.freshNamespace())
        var oracle = Dictionary(uniqueKeysWithValues: (0..<5).map { ("c\($0)", $0 * 7) })
        var random = SplitMix(seed: seed)
        var next = 5
        try await AdminConnection.using { admin in
            for step in 0..<80 {
                let context = ModelContext(container)
                switch random.next() % 6 {
                case 0:
                    let counter = Counter(name: "c\(next)")
                    counter.value = Int(random.next() % 1000)
                    context.insert(counter)
                    try context.save()
                    oracle[counter.name] = counter.value
                    next += 1
                case 1:
                    guard let name = oracle.keys.sorted().randomElement(using: &random) else { continue }
                    let counter = try #require(
                        try context.fetch(FetchDescriptor<Counter>(predicate: #Predicate { $0.name == name })).first
                    )
                    counter.value = Int(random.next() % 1000)
                    try context.save()
                    oracle[name] = counter.value
                case 2:
                    guard let name = oracle.keys.sorted().randomElement(using: &random) else { continue }
                    let counter = try #require(
                        try context.fetch(FetchDescriptor<Counter>(predicate: #Predicate { $0.name == name })).first
                    )
                    context.delete(counter)
                    try context.save()
                    oracle[name] = nil
                case 3:
                    if let kept = store.database.autocommitConnection, kept.holdsConnection {
                        let pid = try await readingBackend(store)
                        try await admin.run("SELECT pg_terminate_backend(\(pid))::text")
                        #expect(try await Self.awaitGone([pid], admin: admin) == [])
                    }
                default:
                    let name = "c\(Int(random.next() % UInt64(next)))"
                    #expect(try Self.fetchValue(name, in: container) == oracle[name], "seed \(seed), step \(step)")
                }
                #expect(try Self.allValues(in: container) == oracle, "seed \(seed), step \(step)")
            }
        }
        store.close()
    }
}

extension SplitMix: RandomNumberGenerator {}
