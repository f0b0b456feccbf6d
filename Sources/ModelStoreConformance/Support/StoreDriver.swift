import Foundation
import ModelStore

/// Drives a store directly with requests, as the context would, for the store-contract cases.
struct StoreDriver<Store: DataStore> {
    let store: Store
    let env: CaseEnvironment
    let editingState = EditingState(author: "conformance")

    init(_ store: Store, _ env: CaseEnvironment) {
        self.store = store
        self.env = env
    }

    /// Whether the store runs store-neutral queries.
    var querying: (any DataStoreQuerying)? { store as? any DataStoreQuerying }

    func entity(_ name: String) throws -> Schema.Entity {
        try env.require(Fixtures.schema.entity(named: name), "the fixture schema has no entity '\(name)'")
    }

    /// A new snapshot under a temporary identifier.
    func newSnapshot(_ entityName: String, _ values: [String: StoreValue]) throws -> DefaultSnapshot {
        try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: entityName), entity: try entity(entityName),
            namedValues: values)
    }

    /// A new log entry snapshot.
    func newEntry(_ sequence: Int, bucket: Int = 0, label: String? = nil) throws -> DefaultSnapshot {
        try newSnapshot(
            "LogEntry",
            [
                "sequence": .int(Int64(sequence)), "bucket": .int(Int64(bucket)),
                "label": .string(label ?? "entry-\(sequence)"),
            ])
    }

    /// Saves, converting to and from the store's snapshot type.
    @discardableResult
    func save(
        inserted: [DefaultSnapshot] = [], updated: [DefaultSnapshot] = [], deleted: [DefaultSnapshot] = [],
        _ what: String
    ) throws -> DataStoreSaveChangesResult<Store.Snapshot> {
        let request = DataStoreSaveChangesRequest<Store.Snapshot>(
            editingState: editingState, inserted: inserted.map(Store.Snapshot.init),
            updated: updated.map(Store.Snapshot.init),
            deleted: deleted.map(Store.Snapshot.init))
        return try env.step(what) { try store.save(request) }
    }

    /// Saves log entries and returns their permanent identifiers, in order.
    func saveEntries(_ entries: [DefaultSnapshot]) throws -> [PersistentIdentifier] {
        let result = try save(inserted: entries, "saving \(entries.count) log entries directly")
        return try entries.map { entry in
            try env.require(
                result.remappedIdentifiers[entry.persistentIdentifier],
                "save returned no permanent identifier for an inserted snapshot: identifier not remapped")
        }
    }

    /// A fetch request: the query for querying stores, the descriptor for the others.
    func request<T: PersistentModel>(
        _ type: T.Type, descriptor: FetchDescriptor<T> = FetchDescriptor<T>(), query: StoreQuery? = nil
    ) -> DataStoreFetchRequest<T> {
        let neutral = querying == nil ? nil : (query ?? StoreQuery(entityName: Schema.entityName(for: T.self)))
        return DataStoreFetchRequest(descriptor: descriptor, editingState: editingState, query: neutral)
    }

    /// The snapshots of a fetch, or `nil` if the store asked for in-memory filtering or sorting.
    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>, _ what: String) throws -> [DefaultSnapshot]? {
        do {
            return try validated(try store.fetch(request).fetchedSnapshots.map(\.defaultSnapshot), what)
        } catch DataStoreError.preferInMemoryFilter {
            return nil
        } catch DataStoreError.preferInMemorySort {
            return nil
        } catch {
            return try env.step(what) { throw error }
        }
    }

    /// The snapshots of a fetch the store MUST run (no predicate or sort).
    func fetchAll<T: PersistentModel>(_ type: T.Type) throws -> [DefaultSnapshot] {
        let name = Schema.entityName(for: T.self)
        let snapshots = try env.step("fetching every '\(name)' directly") {
            try store.fetch(request(T.self)).fetchedSnapshots.map(\.defaultSnapshot)
        }
        return try validated(snapshots, "fetching every '\(name)' directly")
    }

    /// Fails (instead of letting a later read trap) when a snapshot does not hold one value per property.
    func validated(_ snapshots: [DefaultSnapshot], _ what: String) throws -> [DefaultSnapshot] {
        if let malformed = snapshots.first(where: { $0.values.count != $0.entity.properties.count }) {
            throw env.failure(
                "\(what): the store returned a snapshot of '\(malformed.entity.name)' with \(malformed.values.count) "
                    + "values for \(malformed.entity.properties.count) properties: malformed snapshot")
        }
        return snapshots
    }
}

extension StoreDriver where Store: DataStoreBatching {
    /// A batch insert read in three chunks whose third fails to build: the store rethrows the error
    /// and keeps nothing of the first two (DataStoreBatchInsertRequest's contract).
    private func checkChunkedInsertFailingLate(storedCount: Int) throws {
        let entries = try (30...35).map { try Store.Snapshot(newEntry($0, label: "chunked-\($0)")) }
        var served = 0
        let request = DataStoreBatchInsertRequest<Store.Snapshot>(expectedCount: 9, editingState: editingState) {
            defer { served += 1 }
            switch served {
            case 0: return Array(entries[0..<3])
            case 1: return Array(entries[3..<6])
            default:
                throw DataStoreError(
                    .invalidValue, "the third chunk of the suite's batch insert could not be built",
                    entityName: "LogEntry")
            }
        }
        try env.expectError(
            [.invalidValue], "batch-inserting 9 entries directly in three chunks, the third failing to build",
            ifItSucceeds: "a store batch insert whose third chunk failed to build succeeded: chunks left unread"
        ) { _ = try store.insert(request) }
        try env.checkEqual(
            try fetchAll(LogEntry.self).count, storedCount,
            "a store batch insert whose third chunk failed kept rows of the first two: batch insert across chunks "
                + "was not atomic")
    }

    /// Batch delete, update and insert by identifier, each checked model by model.
    func checkBatching() throws {
        let ids = try saveEntries(try (1...10).map { try newEntry($0, bucket: $0 % 3) })
        try env.step("batch-deleting entries 2, 5 and 9 directly") {
            try store.delete(
                DataStoreBatchDeleteRequest<LogEntry>(
                    identifiers: [ids[1], ids[4], ids[8]], editingState: editingState))
        }
        let survivors = try fetchAll(LogEntry.self).map(\.persistentIdentifier)
        let expectedSurvivors = ids.enumerated().filter { ![1, 4, 8].contains($0.offset) }.map(\.element)
        try env.check(
            survivors.count == expectedSurvivors.count && Set(survivors) == Set(expectedSurvivors),
            "a store batch delete of 3 identifiers left \(survivors.count) of 10 entries: "
                + (survivors.count == 10
                    ? "delete ignored" : "the wrong entries were deleted (batch delete too broad)"),
            expected: "\(expectedSurvivors.count) entries", found: "\(survivors.count) entries")
        let entity = try entity("LogEntry")
        let label = try env.require(entity.slot(of: "label"), "'LogEntry' has no 'label'")
        let bucket = try env.require(entity.slot(of: "bucket"), "'LogEntry' has no 'bucket'")
        try env.step("batch-updating entries 4 and 6 directly") {
            try store.update(
                DataStoreBatchUpdateRequest<LogEntry>(
                    identifiers: [ids[3], ids[5]], values: [label: .string("updated"), bucket: .int(7)],
                    editingState: editingState))
        }
        let stored = try env.index(
            try fetchAll(LogEntry.self), by: \.persistentIdentifier, "fetching entries after a store batch update")
        for (offset, id) in expectedSurvivors.enumerated() {
            let number = (ids.firstIndex(of: id) ?? offset) + 1
            let entry = try env.require(stored[id], "entry \(number) is gone after a batch update of other entries")
            let touched = id == ids[3] || id == ids[5]
            let expected: [StoreValue?] =
                touched ? [.string("updated"), .int(7)] : [.string("entry-\(number)"), .int(Int64(number % 3))]
            try env.checkEqual(
                [entry["label"], entry["bucket"]], expected,
                touched
                    ? "a store batch update did not set 'label' and 'bucket' of entry \(number), which it named: "
                        + "update dropped"
                    : "a store batch update changed entry \(number), which it did not name: batch update too broad")
            try env.checkEqual(
                entry["sequence"], .int(Int64(number)),
                "a store batch update changed 'sequence', which it did not set: update applied to other attributes")
        }
        let new = try (20...22).map { try newEntry($0, label: "new-\($0)") }
        let inserted = try env.step("batch-inserting 3 entries directly") {
            try store.insert(
                DataStoreBatchInsertRequest(snapshots: new.map(Store.Snapshot.init), editingState: editingState))
        }
        try env.check(
            inserted.count == 3 && !inserted.contains { $0.isTemporary } && Set(inserted).count == 3
                && Set(inserted).isDisjoint(with: ids),
            "a store batch insert of 3 snapshots did not return 3 new, distinct permanent identifiers",
            found: "\(inserted)")
        let after = try env.index(
            try fetchAll(LogEntry.self), by: \.persistentIdentifier, "fetching entries after a store batch insert")
        try env.checkEqual(
            inserted.map { after[$0].map { [$0["sequence"], $0["label"]] } ?? [] },
            (20...22).map { [.int(Int64($0)), .string("new-\($0)")] },
            "the identifiers a store batch insert returned do not lead to the inserted snapshots, in their order")
        try env.checkEqual(after.count, expectedSurvivors.count + 3, "a store batch insert stored the wrong number")
        try checkChunkedInsertFailingLate(storedCount: after.count)
        let everyOne = try env.step("deleting every entry directly (deleteEveryModel)") {
            try store.deleteEveryModel(DataStoreDeleteEveryModelRequest<LogEntry>(editingState: editingState))
        }
        try env.check(
            everyOne.count == after.count && Set(everyOne) == Set(after.keys),
            "a store's deleteEveryModel did not return exactly the identifiers of the \(after.count) stored entries",
            expected: "\(after.count) identifiers", found: "\(everyOne.count) (\(Set(everyOne).count) distinct)")
        try env.checkEqual(
            try fetchAll(LogEntry.self).count, 0, "entries remain after a store's deleteEveryModel: delete incomplete")
        let again = try env.step("deleting every entry directly again, with none left") {
            try store.deleteEveryModel(DataStoreDeleteEveryModelRequest<LogEntry>(editingState: editingState))
        }
        try env.checkEqual(again.count, 0, "a store's deleteEveryModel of an empty entity returned identifiers")
    }
}

/// Entry points that open a store's existential type.
enum StoreChecks {
    /// Batch checks for a store known to be batching.
    static func checkBatching(_ store: any DataStore, _ env: CaseEnvironment) throws {
        guard let batching = store as? any DataStoreBatching else {
            throw env.failure("the adapter declares batching, but its store does not conform to DataStoreBatching")
        }
        func run<B: DataStoreBatching>(_ store: B) throws { try StoreDriver<B>(store, env).checkBatching() }
        try run(batching)
    }
}

extension StoreDriver {
    /// The labels of every log entry the store has, by sequence.
    func entryLabels(_ what: String) throws -> [String] {
        let snapshots = try env.require(
            try fetch(request(LogEntry.self), what), "the store refused a plain fetch of every 'LogEntry'")
        return snapshots.sorted {
            ((try? $0.value(of: "sequence", as: Int.self)) ?? 0) < ((try? $1.value(of: "sequence", as: Int.self)) ?? 0)
        }
        .map { (try? $0.value(of: "label", as: String.self)) ?? "?" }
    }

    /// The rules of `DataStoreTwoPhaseSaving`: prepare changes nothing visible, abort restores the
    /// store before or after commit, commit and finish store, a failed prepare releases the store.
    func checkTwoPhaseSave() throws {
        guard let twoPhase = store as? any DataStoreTwoPhaseSaving else {
            throw env.failure(
                "the adapter declares two-phase saves, but its store does not conform to DataStoreTwoPhaseSaving")
        }
        _ = try saveEntries([try newEntry(1, label: "one")])
        let stored = try env.require(
            try fetch(request(LogEntry.self), "fetching the saved entry")?.first, "the saved entry is missing")
        var changed = stored
        changed["label"] = .string("changed")
        func prepare(_ what: String) throws -> ErasedTwoPhasePart {
            try env.step(what) {
                try ErasedTwoPhasePart(
                    twoPhase, editingState: editingState, inserted: [try newEntry(2, label: "two")], updated: [changed])
            }
        }
        let before = ["one"]

        let aborted = try prepare("preparing an insert and an update")
        try env.checkEqual(
            try entryLabels("fetching during a prepared save"), before,
            "fetches saw a prepared save before it was committed: prepareSave must not apply it")
        aborted.abort()
        try env.checkEqual(try entryLabels("fetching after abort"), before, "abort before commit left changes behind")

        let undone = try prepare("preparing the same save again (abort must release the store)")
        try env.step("committing a prepared save") { try undone.commit() }
        undone.abort()
        try env.checkEqual(
            try entryLabels("fetching after commit then abort"), before,
            "abort after commit did not restore the store: another store's failure would leave this one changed")

        let kept = try prepare("preparing the save a third time")
        try env.step("committing a prepared save") { try kept.commit() }
        kept.finish()
        try env.checkEqual(
            try entryLabels("fetching after commit and finish"), ["changed", "two"],
            "commit then finish did not store the prepared save")
        try env.check(
            kept.remappedCount == 1, "the prepared save's result does not remap the inserted entry's identifier",
            found: "\(kept.remappedCount) remapped")

        var missing = changed
        missing.persistentIdentifier = .identifier(
            for: store.identifier, entityName: "LogEntry", primaryKey: 999_999)
        do {
            let bad = try ErasedTwoPhasePart(twoPhase, editingState: editingState, inserted: [], updated: [missing])
            bad.abort()
            throw env.failure("prepareSave accepted an update of a model the store does not have")
        } catch is DataStoreError {
        }
        _ = try saveEntries([try newEntry(3, label: "three")])  // the failed prepare released the store
    }
}

/// A prepared part of any store, with its snapshots converted.
struct ErasedTwoPhasePart {
    let commit: () throws -> Void
    let abort: () -> Void
    let finish: () -> Void
    let remappedCount: Int

    init(
        _ store: any DataStoreTwoPhaseSaving, editingState: EditingState, inserted: [DefaultSnapshot],
        updated: [DefaultSnapshot]
    ) throws {
        func open<S: DataStoreTwoPhaseSaving>(_ store: S) throws -> ErasedTwoPhasePart {
            let part = try store.prepareSave(
                DataStoreSaveChangesRequest<S.Snapshot>(
                    editingState: editingState, inserted: inserted.map(S.Snapshot.init),
                    updated: updated.map(S.Snapshot.init),
                    deleted: []))
            return ErasedTwoPhasePart(
                commit: part.commit, abort: part.abort, finish: part.finish,
                remappedCount: part.result.remappedIdentifiers.count)
        }
        self = try open(store)
    }

    private init(
        commit: @escaping () throws -> Void, abort: @escaping () -> Void, finish: @escaping () -> Void,
        remappedCount: Int
    ) {
        self.commit = commit
        self.abort = abort
        self.finish = finish
        self.remappedCount = remappedCount
    }
}
