import Foundation
import ModelStore
import PostgreSQLTestModels
import Testing

@testable import ModelStorePostgreSQL

/// Group commit (`groupsCommits`): saves that arrive while another is being committed share one
/// transaction, each still checked on its own; a save refused in a group changes nothing for the
/// others; a group whose transaction fails as a whole has each of its saves run again alone.
/// Saves go straight to the store, from threads of their own, each with its author, so the
/// history says which saves were stored, once each.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLGroupCommitTests {
    /// A store in a fresh namespace, grouping commits or not, with counters `seed-0` … `seed-3`.
    private static func store(grouping: Bool, statementTimeout: Duration? = nil) throws -> (
        ModelContainer, PostgreSQLStore, String
    ) {
        let namespace = PostgreSQLServer.freshNamespace("grp")
        var configuration = try PostgreSQLServer.configuration(namespace: namespace)
        configuration.groupCommit = grouping
        configuration.statementTimeout = statementTimeout
        let container = try ModelContainer(for: Counter.schema, configurations: [configuration])
        let store = try #require(container.stores.first as? PostgreSQLStore)
        #expect(store.groupsCommits == grouping)
        for index in 0..<4 { _ = try Self.insert("seed-\(index)", value: index, into: store, author: "seed") }
        return (container, store, namespace)
    }

    /// Inserts a counter straight into the store; returns its identifier.
    @discardableResult
    private static func insert(
        _ name: String, value: Int, into store: PostgreSQLStore, author: String
    ) throws -> PersistentIdentifier {
        let entity = try #require(store.schema.entity(named: "Counter"))
        let snapshot = try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Counter"), entity: entity,
            namedValues: ["name": .string(name), "value": .int(Int64(value))])
        let result = try store.save(
            DataStoreSaveChangesRequest(
                editingState: EditingState(author: author), inserted: [snapshot], updated: [], deleted: []))
        guard let id = result.remappedIdentifiers[snapshot.persistentIdentifier] else {
            throw Unexpected(description: "the insert of '\(name)' returned no identifier")
        }
        return id
    }

    /// Updates a counter straight in the store, from `was` (the values the save expects) to `now`.
    private static func update(
        _ id: PersistentIdentifier, from was: (String, Int), to now: (String, Int), in store: PostgreSQLStore,
        author: String
    ) throws {
        let entity = try #require(store.schema.entity(named: "Counter"))
        let before = try DefaultSnapshot(
            persistentIdentifier: id, entity: entity,
            namedValues: ["name": .string(was.0), "value": .int(Int64(was.1))])
        let after = try DefaultSnapshot(
            persistentIdentifier: id, entity: entity,
            namedValues: ["name": .string(now.0), "value": .int(Int64(now.1))])
        var request = DataStoreSaveChangesRequest(
            editingState: EditingState(author: author), inserted: [], updated: [after], deleted: [])
        request.expectedValues = [id: before.values]
        _ = try store.save(request)
    }

    /// Deletes a counter straight from the store.
    private static func delete(_ id: PersistentIdentifier, in store: PostgreSQLStore, author: String) throws {
        let entity = try #require(store.schema.entity(named: "Counter"))
        let snapshot = try DefaultSnapshot(persistentIdentifier: id, entity: entity, namedValues: [:])
        _ = try store.save(
            DataStoreSaveChangesRequest(
                editingState: EditingState(author: author), inserted: [], updated: [], deleted: [snapshot]))
    }

    /// The stored snapshot of the counter named `name`.
    private static func counter(named name: String, in store: PostgreSQLStore) async throws -> DefaultSnapshot {
        try #require(
            try await store.fetch(
                DataStoreFetchRequest(descriptor: FetchDescriptor<Counter>(), editingState: EditingState())
            ).fetchedSnapshots.first { try $0.value(of: "name", as: String.self) == name })
    }

    /// Every counter's name and value.
    private static func stored(in container: ModelContainer) throws -> [String: Int] {
        var found: [String: Int] = [:]
        for counter in try ModelContext(container).fetch(FetchDescriptor<Counter>()) {
            #expect(found[counter.name] == nil, "\(counter.name) is stored twice")
            found[counter.name] = counter.value
        }
        return found
    }

    /// The authors of the history's transactions, oldest first.
    private static func authors(in store: PostgreSQLStore) throws -> [String] {
        try store.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).map { $0.author ?? "" }
    }

    /// Runs `work` on `count` threads at once; returns when all are done.
    private static func concurrently(_ count: Int, _ work: @escaping @Sendable (Int) throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count { group.addTask { try await onThread { try work(index) }.value } }
            try await group.waitForAll()
        }
    }

    @Test func concurrentSavesShareTransactionsAndEachIsStoredOnce() async throws {
        for grouping in [true, false] {
            let (container, store, _) = try Self.store(grouping: grouping)
            let before = store.commitCounts
            try await Self.concurrently(8) { thread in
                for index in 0..<15 {
                    try Self.insert("t\(thread)-\(index)", value: index, into: store, author: "t\(thread)-\(index)")
                }
            }
            let counts = store.commitCounts
            #expect(counts.saves - before.saves == 120)
            if grouping {
                #expect(counts.transactions - before.transactions < 120, "\(counts)")
            } else {
                #expect(counts.transactions - before.transactions == 120, "\(counts)")
            }
            var expected: [String: Int] = [:]
            for thread in 0..<8 { for index in 0..<15 { expected["t\(thread)-\(index)"] = index } }
            for index in 0..<4 { expected["seed-\(index)"] = index }
            #expect(try Self.stored(in: container) == expected)
            // One history transaction per save, under its own author, numbers in commit order.
            let authors = try Self.authors(in: store)
            #expect(authors.filter { $0 != "seed" }.sorted() == expected.keys.filter { !$0.hasPrefix("seed") }.sorted())
            let numbers = try store.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).map {
                $0.token.transactionNumber
            }
            #expect(numbers == Array(1...Int64(124)))
        }
    }

    /// Holds the history counter's lock (as a save of another process would) while `body` runs.
    private static func holdingTheCounter(
        _ namespace: String, _ body: (AdminConnection) async throws -> Void
    ) async throws {
        try await AdminConnection.using { admin in
            try await admin.run("BEGIN")
            try await admin.run(
                "UPDATE \"\(namespace)\".\"modelstore_meta\" SET value = value WHERE key = 'historyLast'")
            do {
                try await body(admin)
            } catch {
                _ = try? await admin.run("ROLLBACK")
                throw error
            }
            try await admin.run("ROLLBACK")
        }
    }

    /// Waits until `count` saves wait for the group being written.
    private static func awaitWaiting(_ count: Int, in store: PostgreSQLStore) async throws {
        for _ in 0..<1200 where store.commitGroups.waitingCount < count { try await Task.sleep(for: .milliseconds(25)) }
        #expect(store.commitGroups.waitingCount == count)
    }

    @Test func aSaveRefusedInAGroupChangesNothingForTheOthers() async throws {
        let (container, store, namespace) = try Self.store(grouping: true)
        let seed = try await Self.counter(named: "seed-1", in: store)
        let before = store.commitCounts
        let outcomes = LockedValue<[String: String]>([:])
        func run(_ name: String, _ work: @escaping @Sendable () throws -> Void) -> Task<Void, any Error> {
            onThread {
                do {
                    try work()
                    outcomes.withLock { $0[name] = "stored" }
                } catch let error as DataStoreError {
                    outcomes.withLock { $0[name] = "\(error.code)" }
                }
            }
        }
        var tasks: [Task<Void, any Error>] = []
        try await Self.holdingTheCounter(namespace) { admin in
            // The first save waits for the counter with its transaction open: the next ones queue.
            tasks.append(run("lead") { try Self.insert("lead", value: 1, into: store, author: "lead") })
            #expect(!(try await admin.awaitBackendsWaitingForLocks(in: namespace)).isEmpty)
            for index in 0..<3 {
                tasks.append(
                    run("good-\(index)") {
                        try Self.insert("good-\(index)", value: 10, into: store, author: "g\(index)")
                    })
            }
            // A unique value another counter holds, an update whose expected values are not the row's,
            // and one that takes a unique value another counter holds.
            tasks.append(run("duplicate") { try Self.insert("seed-0", value: 99, into: store, author: "duplicate") })
            tasks.append(
                run("stale") {
                    try Self.update(
                        seed.persistentIdentifier, from: ("seed-1", 7), to: ("seed-1", 99), in: store, author: "stale")
                })
            tasks.append(
                run("taken") {
                    try Self.update(
                        seed.persistentIdentifier, from: ("seed-1", 1), to: ("seed-2", 1), in: store, author: "taken")
                })
            for index in 3..<5 {
                tasks.append(
                    run("good-\(index)") {
                        try Self.insert("good-\(index)", value: 10, into: store, author: "g\(index)")
                    })
            }
            try await Self.awaitWaiting(8, in: store)
        }
        for task in tasks { try await task.value }
        #expect(
            outcomes.withLock { $0 } == [
                "lead": "stored", "good-0": "stored", "good-1": "stored", "good-2": "stored", "good-3": "stored",
                "good-4": "stored", "duplicate": "uniqueConstraintViolation", "stale": "conflict",
                "taken": "uniqueConstraintViolation",
            ])
        // The lead alone, then the eight waiting saves in one transaction, of which five stored.
        let counts = store.commitCounts
        #expect(counts.saves - before.saves == 6 && counts.transactions - before.transactions == 2, "\(counts)")
        var expected = ["seed-0": 0, "seed-1": 1, "seed-2": 2, "seed-3": 3, "lead": 1]
        for index in 0..<5 { expected["good-\(index)"] = 10 }
        #expect(try Self.stored(in: container) == expected)
        let authors = try Self.authors(in: store)
        #expect(authors.prefix(5) == ["seed", "seed", "seed", "seed", "lead"])
        #expect(authors.dropFirst(5).sorted() == ["g0", "g1", "g2", "g3", "g4"])
    }

    /// An update to the values a row holds is a save that changes nothing: it succeeds (and is
    /// counted) and records no history transaction, alone as in a group, where the saves grouped
    /// with it record theirs.
    @Test func aSaveThatChangesNoValueIsStoredAndRecordsNoHistory() async throws {
        for grouping in [false, true] {
            let (container, store, namespace) = try Self.store(grouping: grouping)
            let seeds = [
                try await Self.counter(named: "seed-1", in: store), try await Self.counter(named: "seed-2", in: store),
            ]
            let before = store.commitCounts
            let (same, new) = (seeds[0].persistentIdentifier, seeds[1].persistentIdentifier)
            @Sendable func unchanged() throws {
                try Self.update(same, from: ("seed-1", 1), to: ("seed-1", 1), in: store, author: "same")
            }
            @Sendable func changed() throws {
                try Self.update(new, from: ("seed-2", 2), to: ("seed-2", 20), in: store, author: "new")
            }
            if grouping {
                var tasks: [Task<Void, any Error>] = []
                try await Self.holdingTheCounter(namespace) { admin in
                    tasks.append(onThread { try Self.insert("lead", value: 1, into: store, author: "lead") })
                    #expect(!(try await admin.awaitBackendsWaitingForLocks(in: namespace)).isEmpty)
                    tasks.append(onThread { try unchanged() })
                    try await Self.awaitWaiting(1, in: store)
                    tasks.append(onThread { try changed() })
                    try await Self.awaitWaiting(2, in: store)
                }
                for task in tasks { try await task.value }
            } else {
                try unchanged()
                try changed()
            }
            let counts = store.commitCounts
            #expect(counts.saves - before.saves == (grouping ? 3 : 2), "\(counts)")
            if grouping { #expect(counts.transactions - before.transactions == 2, "\(counts)") }
            #expect(
                try Self.stored(in: container)
                    == [
                        "seed-0": 0, "seed-1": 1, "seed-2": 20, "seed-3": 3,
                    ].merging(grouping ? ["lead": 1] : [:]) { $1 })
            #expect(
                try Self.authors(in: store) == ["seed", "seed", "seed", "seed"] + (grouping ? ["lead"] : []) + ["new"])
        }
    }

    @Test func aGroupWhoseTransactionFailsHasEachSaveRunAgainAlone() async throws {
        let (container, store, namespace) = try Self.store(grouping: true)
        let seed = try await Self.counter(named: "seed-3", in: store)
        let before = store.commitCounts
        var tasks: [Task<Void, any Error>] = []
        try await AdminConnection.using { rowHolder in
            // Another transaction holds the row the group's second save updates.
            try await rowHolder.run("BEGIN")
            try await rowHolder.run("SELECT name FROM \"\(namespace)\".\"Counter\" WHERE name = 'seed-3' FOR UPDATE")
            try await Self.holdingTheCounter(namespace) { admin in
                tasks.append(onThread { try Self.insert("lead", value: 1, into: store, author: "lead") })
                #expect(!(try await admin.awaitBackendsWaitingForLocks(in: namespace)).isEmpty)
                tasks.append(onThread { try Self.insert("a", value: 1, into: store, author: "a") })
                tasks.append(
                    onThread {
                        try Self.update(
                            seed.persistentIdentifier, from: ("seed-3", 3), to: ("seed-3", 30), in: store, author: "b")
                    })
                tasks.append(onThread { try Self.insert("c", value: 1, into: store, author: "c") })
                try await Self.awaitWaiting(3, in: store)
            }
            // The group (a, b, c) waits for the row; its connection ends (as when the server restarts
            // or the network fails): nothing of it is committed, and each save runs again alone.
            let waiting = try await rowHolder.awaitBackendsWaitingForLocks(in: namespace)
            #expect(waiting.count == 1)
            for pid in waiting { try await rowHolder.run("SELECT pg_terminate_backend(\(pid))::text") }
            try await rowHolder.run("ROLLBACK")
        }
        for task in tasks { try await task.value }
        let counts = store.commitCounts
        #expect(counts.saves - before.saves == 4 && counts.transactions - before.transactions == 4, "\(counts)")
        #expect(
            try Self.stored(in: container) == [
                "seed-0": 0, "seed-1": 1, "seed-2": 2, "seed-3": 30, "lead": 1, "a": 1, "c": 1,
            ])
        #expect(try Self.authors(in: store).dropFirst(5).sorted() == ["a", "b", "c"])
    }

    /// A save that should have been refused with `code` was not (thrown from a test's own threads,
    /// where an expectation would belong to no test).
    private struct Unexpected: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `save`, which must fail with `code`.
    private static func refused(_ code: DataStoreError.Code, _ author: String, _ save: () throws -> Void) throws {
        do {
            try save()
        } catch let error as DataStoreError where error.code == code {
            return
        }
        throw Unexpected(description: "the save '\(author)' was not refused with \(code)")
    }

    /// What one thread of the randomized test did: its counters' values by name and identifier,
    /// and the authors of the saves that were acknowledged.
    private struct Oracle {
        var counters: [String: (id: PersistentIdentifier, value: Int)] = [:]
        /// The authors of the saves acknowledged as stored.
        var acknowledged: [String] = []
        /// Those of them that changed no value (an update to the values the row holds): stored, and
        /// counted, but they record no history transaction, since there is no change to record.
        var unchanged: Set<String> = []
    }

    /// What one run of the randomized test found: what differs from the oracles (nothing when
    /// the store did what each thread was told), and how many saves were acknowledged in how many
    /// transactions.
    private struct RandomRun {
        var differences: [String] = []
        var acknowledged = 0
        var transactions = 0
    }

    /// One run of the randomized test, in a store of its own that groups commits: `threads` threads
    /// each make `steps` saves drawn from `seed` (thread `t` from `seed + t`, so fewer threads or
    /// steps replay a part of the same run), and each keeps a plain-Swift oracle of what it was told.
    /// Saves of different threads meet in commit groups in whatever order the machine gives them.
    private static func randomRun(seed: UInt64, threads: Int, steps: Int) async throws -> RandomRun {
        let (container, store, _) = try Self.store(grouping: true)
        defer { store.close() }
        let before = store.commitCounts
        let oracles = LockedValue<[Int: Oracle]>([:])
        let failures = LockedValue<[String]>([])
        try await Self.concurrently(threads) { thread in
            var random = SplitMix(seed: seed &+ UInt64(thread))
            var oracle = Oracle()
            defer { oracles.withLock { $0[thread] = oracle } }
            for step in 0..<steps {
                let author = "t\(thread)-\(step)"
                do {
                    try Self.randomSave(author, thread: thread, step: step, &random, &oracle, store)
                } catch {
                    // A save that failed where the oracle says it succeeds, or the reverse: the thread
                    // stops, since its oracle no longer knows what the store holds.
                    failures.withLock { $0.append("\(author): \(error)") }
                    return
                }
            }
        }
        var run = RandomRun(differences: failures.withLock { $0 })
        var expected = ["seed-0": 0, "seed-1": 1, "seed-2": 2, "seed-3": 3]
        var recorded: [String] = []
        for oracle in oracles.withLock({ $0 }).values {
            for (name, counter) in oracle.counters { expected[name] = counter.value }
            run.acknowledged += oracle.acknowledged.count
            recorded += oracle.acknowledged.filter { !oracle.unchanged.contains($0) }
        }
        guard run.differences.isEmpty else { return run }
        let stored = try Self.stored(in: container)
        for name in Set(stored.keys).union(expected.keys).sorted() where stored[name] != expected[name] {
            run.differences.append(
                "counter \(name): stored \(stored[name].map(String.init) ?? "nothing"), "
                    + "expected \(expected[name].map(String.init) ?? "nothing")")
        }
        // Every acknowledged save that changed a value is in the history once, and no refused one.
        let inHistory = try Self.authors(in: store).filter { $0 != "seed" }
        let missing = Set(recorded).subtracting(inHistory).sorted()
        let extra = Set(inHistory).subtracting(recorded).sorted()
        let twice = Dictionary(grouping: inHistory, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        if !missing.isEmpty { run.differences.append("missing from the history: \(missing)") }
        if !extra.isEmpty { run.differences.append("in the history, not expected: \(extra)") }
        if !twice.isEmpty { run.differences.append("in the history twice: \(twice)") }
        let counts = store.commitCounts
        run.transactions = counts.transactions - before.transactions
        if counts.saves - before.saves != run.acknowledged {
            run.differences.append(
                "commitCounts counted \(counts.saves - before.saves) saves, \(run.acknowledged) were acknowledged")
        }
        return run
    }

    /// One save of thread `thread`'s step `step`, drawn from `random`, checked as it returns and
    /// kept in `oracle`: what it should do, the oracle knows without the store.
    private static func randomSave(
        _ author: String, thread: Int, step: Int, _ random: inout SplitMix, _ oracle: inout Oracle,
        _ store: PostgreSQLStore
    ) throws {
        let own = oracle.counters.keys.sorted()
        let pick = own.isEmpty ? nil : own[Int(random.next() % UInt64(own.count))]
        let value = Int(random.next() % 1000)
        switch (random.next() % 6, pick) {
        case (0, _), (_, nil):
            // A new counter: stored.
            let name = "t\(thread)-n\(step)"
            let id = try Self.insert(name, value: value, into: store, author: author)
            oracle.counters[name] = (id, value)
            oracle.acknowledged.append(author)
        case (1, let name?):
            // A change from the values it holds: stored. (About one run in 36 draws the value the
            // counter holds: a save that changes nothing, so it records no history.)
            let counter = oracle.counters[name]!
            try Self.update(counter.id, from: (name, counter.value), to: (name, value), in: store, author: author)
            if value == counter.value { oracle.unchanged.insert(author) }
            oracle.counters[name] = (counter.id, value)
            oracle.acknowledged.append(author)
        case (2, let name?):
            // A change from values it does not hold: a conflict, nothing stored.
            let counter = oracle.counters[name]!
            try Self.refused(.conflict, author) {
                try Self.update(
                    counter.id, from: (name, counter.value + 1), to: (name, value), in: store, author: author)
            }
        case (3, _):
            // A seed's name, which is unique: refused, nothing stored.
            try Self.refused(.uniqueConstraintViolation, author) {
                try Self.insert("seed-\(value % 4)", value: value, into: store, author: author)
            }
        case (4, let name?):
            // Renamed to a seed's name: refused, nothing stored.
            let counter = oracle.counters[name]!
            try Self.refused(.uniqueConstraintViolation, author) {
                try Self.update(
                    counter.id, from: (name, counter.value), to: ("seed-\(value % 4)", value), in: store,
                    author: author)
            }
        case (_, let name?):
            // Deleted: stored.
            try Self.delete(oracle.counters[name]!.id, in: store, author: author)
            oracle.counters[name] = nil
            oracle.acknowledged.append(author)
        }
    }

    /// The smallest run found, from `seed`'s failing run of `threads` threads of `steps` saves,
    /// that still fails: fewer threads, then fewer steps, each tried up to three times (saves of
    /// different threads meet in a different order each time, so a failure may need a few tries).
    private static func shrink(
        seed: UInt64, threads: Int, steps: Int, failure: RandomRun
    ) async throws -> (threads: Int, steps: Int, run: RandomRun) {
        var smallest = (threads: threads, steps: steps, run: failure)
        func fails(_ threads: Int, _ steps: Int) async throws -> RandomRun? {
            for _ in 0..<3 {
                let run = try await randomRun(seed: seed, threads: threads, steps: steps)
                if !run.differences.isEmpty { return run }
            }
            return nil
        }
        while smallest.threads > 1, let run = try await fails(smallest.threads - 1, smallest.steps) {
            smallest = (smallest.threads - 1, smallest.steps, run)
        }
        // The fewest steps that fail, by halving what is known to pass and to fail.
        var (passing, failing) = (0, smallest.steps)
        while failing - passing > 1 {
            let middle = (passing + failing) / 2
            if let run = try await fails(smallest.threads, middle) {
                (failing, smallest.run) = (middle, run)
            } else {
                passing = middle
            }
        }
        smallest.steps = failing
        return smallest
    }

    /// Saves from several threads at once, of every kind (inserts, updates, updates that change
    /// nothing, conflicts, unique refusals, deletes), meet in commit groups; afterwards the store
    /// holds what the threads' oracles say, the history holds each stored change once, and
    /// `commitCounts` counts each acknowledged save. A failing seed is shrunk to the fewest threads
    /// and steps that still fail, and printed with the line that runs it again.
    ///
    /// `MODELSTORE_GROUP_SEED` (the first seed; random by default), `MODELSTORE_GROUP_RUNS` (1),
    /// `MODELSTORE_GROUP_THREADS` (6) and `MODELSTORE_GROUP_STEPS` (30); `scripts/group-commit-random.sh`
    /// is the long run.
    @Test func randomizedConcurrentSavesMatchWhatEachThreadWasAcknowledged() async throws {
        let environment = ProcessInfo.processInfo.environment
        let firstSeed = environment["MODELSTORE_GROUP_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
        let runs = environment["MODELSTORE_GROUP_RUNS"].flatMap(Int.init) ?? 1
        let threads = environment["MODELSTORE_GROUP_THREADS"].flatMap(Int.init) ?? 6
        let steps = environment["MODELSTORE_GROUP_STEPS"].flatMap(Int.init) ?? 30
        var acknowledged = 0
        var transactions = 0
        for index in 0..<runs {
            let seed = firstSeed &+ UInt64(index) &* 1_000
            let run = try await Self.randomRun(seed: seed, threads: threads, steps: steps)
            acknowledged += run.acknowledged
            transactions += run.transactions
            guard !run.differences.isEmpty else { continue }
            let small = try await Self.shrink(seed: seed, threads: threads, steps: steps, failure: run)
            Issue.record(
                """
                seed \(seed), \(threads) threads of \(steps) saves: \(run.differences.joined(separator: "; "))
                shrunk to \(small.threads) threads of \(small.steps) saves: \(small.run.differences.joined(separator: "; "))
                run it again: MODELSTORE_GROUP_SEED=\(seed) MODELSTORE_GROUP_THREADS=\(small.threads) \
                MODELSTORE_GROUP_STEPS=\(small.steps)
                """)
            return
        }
        // Saves from several threads at once shared transactions: fewer commits than saves.
        if threads > 1 {
            #expect(transactions < acknowledged, "\(transactions) transactions for \(acknowledged) saves")
        }
    }
}
