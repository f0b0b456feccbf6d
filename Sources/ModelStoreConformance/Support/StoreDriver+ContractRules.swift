import Foundation
import ModelStore

/// The checks of ``ContractRuleCases``: numbered rules that need threads, tasks or a prepared save.
extension StoreDriver {
    /// `DataStore` rule 1: four threads save, count and list identifiers at once, straight on the store.
    func checkConcurrentRequests() throws {
        let entity = try entity("LogEntry")
        let store = self.store
        let editingState = self.editingState
        let query = querying == nil ? nil : StoreQuery(entityName: "LogEntry")
        let errors = LockedValue<[String]>([])
        let minted = LockedValue<[PersistentIdentifier]>([])
        // Threads of their own: a concurrentPerform nested in another (as when the suite itself runs cases
        // in one) may run its iterations one after another.
        let finished = DispatchSemaphore(value: 0)
        @Sendable func work(_ worker: Int) {
            defer { finished.signal() }
            for round in 0..<5 {
                do {
                    let snapshots = try (0..<5).map { item in
                        let sequence = worker * 1000 + round * 10 + item
                        return Store.Snapshot(
                            try DefaultSnapshot(
                                persistentIdentifier: .temporary(entityName: "LogEntry"), entity: entity,
                                namedValues: [
                                    "sequence": .int(Int64(sequence)), "bucket": .int(Int64(worker)),
                                    "label": .string("thread-\(sequence)"),
                                ]))
                    }
                    let result = try store.save(
                        DataStoreSaveChangesRequest(
                            editingState: editingState, inserted: snapshots, updated: [], deleted: []))
                    let ids = snapshots.compactMap { result.remappedIdentifiers[$0.persistentIdentifier] }
                    if ids.count != snapshots.count {
                        errors.withLock { $0.append("a save returned \(ids.count) identifiers for 5 inserts") }
                    }
                    minted.withLock { $0 += ids }
                    let request = DataStoreFetchRequest<LogEntry>(
                        descriptor: FetchDescriptor(), editingState: editingState, query: query)
                    let count = try store.fetchCount(request)
                    let listed = try store.fetchIdentifiers(request).count
                    if count % 5 != 0 || listed % 5 != 0 {
                        errors.withLock {
                            $0.append("a count saw \(count) entries and a listing \(listed): a save seen in part")
                        }
                    }
                } catch {
                    errors.withLock { $0.append("worker \(worker), round \(round): \(error)") }
                }
            }
        }
        for worker in 0..<4 { Thread { work(worker) }.start() }
        for _ in 0..<4 { finished.wait() }
        let failures = errors.withLock { $0 }
        try env.check(
            failures.isEmpty, "requests sent to the store from four threads at once failed or saw a save in part",
            found: failures.first)
        let ids = minted.withLock { $0 }
        try env.checkEqual(
            Set(ids).count, 100,
            "saves from four threads at once were given the same identifier for two models: the store is not safe "
                + "to call from any thread (DataStore rule 1)")
        let stored = try fetchAll(LogEntry.self)
        try env.checkEqual(
            stored.count, 100,
            "saves from four threads at once lost models: the store is not safe to call from any thread "
                + "(DataStore rule 1)")
        try env.checkEqual(Set(stored.map(\.persistentIdentifier)), Set(ids), "the stored entries are not those saved")
    }

    /// `DataStoreQuerying` rule 3: without a sort, a querying store returns identifier order.
    func checkUnsortedOrder() throws {
        guard querying != nil else {
            throw CaseNotApplicable(reason: "the store does not conform to DataStoreQuerying, whose rule 3 this checks")
        }
        let ids = try saveEntries(try (1...6).map { try newEntry($0) })
        _ = try saveEntries(try (7...8).map { try newEntry($0) })
        let stored = try env.index(try fetchAll(LogEntry.self), by: \.persistentIdentifier, "fetching every entry")
        var first = try env.require(stored[ids[0]], "the first saved entry is missing")
        var second = try env.require(stored[ids[1]], "the second saved entry is missing")
        let third = try env.require(stored[ids[2]], "the third saved entry is missing")
        first["label"] = .string("updated last")
        second["bucket"] = .int(9)
        try save(updated: [second, first], deleted: [third], "updating the first two entries and deleting the third")
        let order = try fetchAll(LogEntry.self).map(\.persistentIdentifier)
        try env.checkEqual(
            order, order.sorted(),
            "a fetch without a sort did not return identifier order (models updated or inserted later came in "
                + "another place): wrong order (DataStoreQuerying rule 3)")
    }

    /// `DataStoreTwoPhaseSaving` rule 2: a save from another thread waits while a save is prepared.
    func checkPreparedSaveHoldsTheLock() throws {
        guard let twoPhase = store as? any DataStoreTwoPhaseSaving else {
            throw env.failure(
                "the adapter declares two-phase saves, but its store does not conform to DataStoreTwoPhaseSaving")
        }
        _ = try saveEntries([try newEntry(1, label: "one")])
        let part = try env.step("preparing an insert") {
            try ErasedTwoPhasePart(
                twoPhase, editingState: self.editingState, inserted: [try newEntry(2, label: "two")], updated: [])
        }
        let store = self.store
        let other = Store.Snapshot(try newEntry(3, label: "three"))
        let editingState = self.editingState
        let outcome = LockedValue<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            do {
                _ = try store.save(
                    DataStoreSaveChangesRequest(editingState: editingState, inserted: [other], updated: [], deleted: [])
                )
                outcome.withLock { $0 = "stored" }
            } catch {
                outcome.withLock { $0 = "refused: \(error)" }
            }
            done.signal()
        }
        thread.start()
        Thread.sleep(forTimeInterval: 0.3)
        let duringPrepare = outcome.withLock { $0 }
        try env.step("committing the prepared save") { try part.commit() }
        part.finish()
        try env.check(
            done.wait(timeout: .now() + 30) == .success,
            "a save from another thread did not end within 30 s of the prepared save's finish: the write lock "
                + "is not released")
        try env.check(
            duringPrepare != "stored",
            "a save from another thread was stored while a two-phase save was prepared: the store MUST keep other "
                + "saves out until finish or abort, or two contexts could both pass a uniqueness check "
                + "(DataStoreTwoPhaseSaving rule 2)")
        let expected = outcome.withLock { $0 } == "stored" ? ["one", "two", "three"] : ["one", "two"]
        try env.checkEqual(try entryLabels("fetching after both saves"), expected, "saves were lost")
    }

    // MARK: DataStoreAsynchronous

    /// Runs `body` on the store as a `DataStoreAsynchronous`, or reports that the rules do not apply.
    private func withAsynchronous<Result>(
        _ body: (any DataStoreAsynchronous) throws -> Result
    ) throws -> Result {
        guard let asynchronous = store as? any DataStoreAsynchronous else {
            throw CaseNotApplicable(reason: "the store does not conform to DataStoreAsynchronous")
        }
        return try body(asynchronous)
    }

    /// A request for the log entries whose bucket is not 1, newest sequence first, second to fourth: as
    /// much of that query as the querying store's capabilities say it receives (rule 3 of
    /// `DataStoreQuerying`: no sort or window it does not declare, and no filter it does not run).
    private func windowedEntries(_ querying: any DataStoreQuerying) -> DataStoreFetchRequest<LogEntry> {
        var descriptor = FetchDescriptor<LogEntry>(
            predicate: #Predicate { $0.bucket != 1 }, sortBy: [SortDescriptor(\.sequence, order: .reverse)])
        descriptor.fetchOffset = 1
        descriptor.fetchLimit = 3
        let capabilities = querying.queryCapabilities
        let filter = StoreFilter.compare(StorePath("bucket"), .notEqual, .int(1))
        let windowed = capabilities.offsetAndLimit
        let query = StoreQuery(
            entityName: "LogEntry",
            filter: querying.pushDown(filter, entityName: "LogEntry") == .unsupported ? nil : filter,
            sort: capabilities.sorting ? [StoreSortKey(property: "sequence", ascending: false)] : [],
            offset: windowed ? 1 : 0, limit: windowed ? 3 : nil)
        return DataStoreFetchRequest(descriptor: descriptor, editingState: editingState, query: query)
    }

    /// `DataStoreAsynchronous` rule 1: the async twins answer as the synchronous requirements do.
    func checkAsynchronousTwins() throws {
        try withAsynchronous { asynchronous in
            _ = try saveEntries(try (1...9).map { try newEntry($0, bucket: $0 % 3) })
            let plain = self.request(LogEntry.self)
            // A store that reads descriptors may refuse a predicate; a querying store must run its query.
            let request = querying.map(windowedEntries) ?? plain
            let synchronous = try env.step("fetching, counting and listing synchronously") {
                (
                    try store.fetch(request).fetchedSnapshots.map(\.defaultSnapshot), try store.fetchCount(request),
                    try store.fetchIdentifiers(request), try store.fetchCount(plain)
                )
            }
            let executor = CaseExecutor()
            defer { executor.shutdown() }
            let twin = try env.step("fetching, counting and listing asynchronously") {
                try executor.run { try await AsynchronousAnswers(asynchronous, request, plain) }
            }
            try env.checkEqual(
                twin.snapshots.map(\.persistentIdentifier), synchronous.0.map(\.persistentIdentifier),
                "the asynchronous fetch returned other models or another order than the synchronous one")
            try env.checkEqual(
                twin.snapshots.map(\.values), synchronous.0.map(\.values),
                "the asynchronous fetch returned other values than the synchronous one")
            try env.checkEqual(twin.count, synchronous.1, "the asynchronous count disagrees with the synchronous one")
            try env.checkEqual(
                twin.identifiers, synchronous.2, "the asynchronous identifiers disagree with the synchronous ones")
            try env.checkEqual(twin.total, synchronous.3, "the asynchronous count of every entry disagrees")

            let inserted = Store.Snapshot(try newEntry(20, label: "async"))
            let editingState = self.editingState
            let result = try env.step("saving an entry asynchronously") {
                try executor.run {
                    try await AsynchronousAnswers.save(
                        asynchronous, editingState: editingState, inserted: [inserted.defaultSnapshot])
                }
            }
            let minted = try env.require(
                result[inserted.persistentIdentifier],
                "the asynchronous save returned no permanent identifier for its insert: identifier not remapped")
            let stored = try env.index(try fetchAll(LogEntry.self), by: \.persistentIdentifier, "fetching every entry")
            try env.checkEqual(
                stored[minted]?["label"], .string("async"),
                "the asynchronous save's insert is not stored under the identifier it returned")

            let duplicate = try newEntry(20, label: "duplicate")
            let synchronousError: DataStoreError.Code?
            do {
                try save(inserted: [duplicate], "")
                synchronousError = nil
            } catch let failure as ConformanceFailure {
                synchronousError = (failure.underlyingError as? DataStoreError)?.code
            }
            guard let synchronousError else { return }  // the store leaves uniqueness to the context
            let second = try newEntry(20, label: "duplicate again")
            do {
                _ = try executor.run {
                    try await AsynchronousAnswers.save(asynchronous, editingState: editingState, inserted: [second])
                }
                throw env.failure(
                    "the asynchronous save stored a duplicate the synchronous save refused with "
                        + "DataStoreError.\(synchronousError)")
            } catch let error as DataStoreError {
                try env.checkEqual(
                    error.code, synchronousError, "the asynchronous save refused a duplicate with another error")
            }
        }
    }

    /// `DataStoreAsynchronous` rule 2: on an executor of one thread, another task runs while async fetches wait.
    func checkAsynchronousSuspension() throws {
        try withAsynchronous { asynchronous in
            _ = try saveEntries(try (1...3).map { try newEntry($0) })
            let request = self.request(LogEntry.self)
            let executor = CaseExecutor()
            defer { executor.shutdown() }
            let interleaved = try env.step("fetching asynchronously beside another task on one thread") {
                try executor.run { try await AsynchronousAnswers.ticksBeside(asynchronous, request) }
            }
            try env.check(
                interleaved > 0,
                "on an executor of one thread, no other task ran while ten asynchronous fetches waited: the async "
                    + "requirements block their thread instead of suspending (DataStoreAsynchronous rule 2)")
        }
    }

    /// `DataStoreAsynchronous` rule 3: the synchronous requirements from a plain thread and from a task.
    func checkSynchronousFromAnyThread() throws {
        try withAsynchronous { _ in
            let store = self.store
            let entity = try entity("LogEntry")
            let editingState = self.editingState
            let plain = self.request(LogEntry.self)
            @Sendable func saveAndCount(_ sequence: Int) throws -> Int {
                let snapshot = try DefaultSnapshot(
                    persistentIdentifier: .temporary(entityName: "LogEntry"), entity: entity,
                    namedValues: [
                        "sequence": .int(Int64(sequence)), "bucket": .int(0), "label": .string("from-\(sequence)"),
                    ])
                _ = try store.save(
                    DataStoreSaveChangesRequest(
                        editingState: editingState, inserted: [Store.Snapshot(snapshot)], updated: [], deleted: []))
                return try store.fetchCount(plain)
            }
            let outcomes = LockedValue<[String]>([])
            let done = DispatchSemaphore(value: 0)
            Thread {
                let count = try? saveAndCount(1)
                outcomes.withLock { $0.append("thread: \(count.map(String.init) ?? "threw")") }
                done.signal()
            }.start()
            // A task on an executor of its own: a task of the global pool could wait for a free thread as
            // long as the test runner's own tasks hold them.
            let executor = CaseExecutor()
            defer { executor.shutdown() }
            Thread {
                let count = try? executor.run { try saveAndCount(2) }
                outcomes.withLock { $0.append("task: \(count.map(String.init) ?? "threw")") }
                done.signal()
            }.start()
            for _ in 0..<2 {
                try env.check(
                    done.wait(timeout: .now() + 60) == .success,
                    "a synchronous save and count called from a plain thread or a task did not return within "
                        + "60 s: the synchronous requirements deadlock off the caller's thread "
                        + "(DataStoreAsynchronous rule 3)")
            }
            let results = outcomes.withLock { $0 }
            try env.check(
                !results.contains { $0.hasSuffix("threw") },
                "a synchronous save and count threw when called from a plain thread or a task "
                    + "(DataStoreAsynchronous rule 3)", found: results.joined(separator: ", "))
            try env.checkEqual(try fetchAll(LogEntry.self).count, 2, "saves from a thread and a task were lost")
        }
    }
}

/// What an asynchronous store answers, gathered in a task.
private struct AsynchronousAnswers: Sendable {
    var snapshots: [DefaultSnapshot]
    var count: Int
    var identifiers: [PersistentIdentifier]
    var total: Int

    init(
        _ store: any DataStoreAsynchronous, _ request: DataStoreFetchRequest<LogEntry>,
        _ plain: DataStoreFetchRequest<LogEntry>
    ) async throws {
        func answers<S: DataStoreAsynchronous>(_ store: S) async throws -> AsynchronousAnswers {
            let fetched: DataStoreFetchResult<LogEntry, S.Snapshot> = try await store.fetch(request)
            return AsynchronousAnswers(
                snapshots: fetched.fetchedSnapshots.map(\.defaultSnapshot),
                count: try await store.fetchCount(request), identifiers: try await store.fetchIdentifiers(request),
                total: try await store.fetchCount(plain))
        }
        self = try await answers(store)
    }

    private init(snapshots: [DefaultSnapshot], count: Int, identifiers: [PersistentIdentifier], total: Int) {
        self.snapshots = snapshots
        self.count = count
        self.identifiers = identifiers
        self.total = total
    }

    /// Saves inserts asynchronously; returns the identifiers the store minted.
    static func save(
        _ store: any DataStoreAsynchronous, editingState: EditingState, inserted: [DefaultSnapshot]
    ) async throws -> [PersistentIdentifier: PersistentIdentifier] {
        func save<S: DataStoreAsynchronous>(_ store: S) async throws -> [PersistentIdentifier: PersistentIdentifier] {
            let request = DataStoreSaveChangesRequest<S.Snapshot>(
                editingState: editingState, inserted: inserted.map(S.Snapshot.init), updated: [], deleted: [])
            let result: DataStoreSaveChangesResult<S.Snapshot> = try await store.save(request)
            return result.remappedIdentifiers
        }
        return try await save(store)
    }

    /// How many times a second task ran while ten asynchronous fetches of the first were under way, both
    /// on the caller's executor.
    static func ticksBeside(
        _ store: any DataStoreAsynchronous, _ request: DataStoreFetchRequest<LogEntry>
    ) async throws -> Int {
        func fetch<S: DataStoreAsynchronous>(_ store: S) async throws {
            let _: DataStoreFetchResult<LogEntry, S.Snapshot> = try await store.fetch(request)
        }
        let started = LockedValue(false)
        let finished = LockedValue(false)
        let ticks = LockedValue(0)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                started.withLock { $0 = true }
                for _ in 0..<10 { try await fetch(store) }
                finished.withLock { $0 = true }
            }
            group.addTask {
                // Counts only while the fetches are under way: a task that ran before them proves nothing.
                while !finished.withLock({ $0 }) {
                    if started.withLock({ $0 }) { ticks.withLock { $0 += 1 } }
                    await Task.yield()
                }
            }
            try await group.waitForAll()
            return ticks.withLock { $0 }
        }
    }
}
