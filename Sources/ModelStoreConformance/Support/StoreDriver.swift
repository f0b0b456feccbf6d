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
            return try store.fetch(request).fetchedSnapshots.map(\.defaultSnapshot)
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
        return try env.step("fetching every '\(name)' directly") {
            try store.fetch(request(T.self)).fetchedSnapshots.map(\.defaultSnapshot)
        }
    }
}

extension StoreDriver where Store: DataStoreBatching {
    /// Batch delete, update and insert by identifier.
    func checkBatching() throws {
        let ids = try saveEntries(try (1...10).map { try newEntry($0) })
        try env.step("batch-deleting 3 entries directly") {
            try store.delete(
                DataStoreBatchDeleteRequest<LogEntry>(identifiers: Array(ids[0..<3]), editingState: editingState))
        }
        var remaining = try fetchAll(LogEntry.self).map(\.persistentIdentifier)
        try env.check(
            Set(remaining) == Set(ids[3...]),
            "a store batch delete of 3 identifiers left \(remaining.count) of 10 entries: "
                + (remaining.count == 10 ? "delete ignored" : "the wrong entries were deleted"),
            expected: "7 entries", found: "\(remaining.count) entries")
        let slot = try env.require(try entity("LogEntry").slot(of: "label"), "'LogEntry' has no 'label'")
        try env.step("batch-updating 2 entries directly") {
            try store.update(
                DataStoreBatchUpdateRequest<LogEntry>(
                    identifiers: Array(ids[3..<5]), values: [slot: .string("updated")], editingState: editingState))
        }
        let labels = Dictionary(
            uniqueKeysWithValues: try fetchAll(LogEntry.self).map { ($0.persistentIdentifier, $0["label"]) })
        try env.check(
            labels[ids[3]] == .string("updated") && labels[ids[4]] == .string("updated"),
            "a store batch update did not change the identified entries: update dropped")
        try env.check(
            ids[5...].allSatisfy { labels[$0] != .string("updated") },
            "a store batch update changed entries it did not identify")
        let new = try (20...22).map { try newEntry($0) }
        let inserted = try env.step("batch-inserting 3 entries directly") {
            try store.insert(
                DataStoreBatchInsertRequest(snapshots: new.map(Store.Snapshot.init), editingState: editingState))
        }
        try env.check(
            inserted.count == 3 && !inserted.contains { $0.isTemporary } && Set(inserted).isDisjoint(with: ids),
            "a store batch insert of 3 snapshots did not return 3 new permanent identifiers", found: "\(inserted)")
        remaining = try fetchAll(LogEntry.self).map(\.persistentIdentifier)
        let stored = Dictionary(
            uniqueKeysWithValues: try fetchAll(LogEntry.self).map { ($0.persistentIdentifier, $0["sequence"]) })
        try env.checkEqual(
            inserted.map { stored[$0] ?? nil }, [.int(20), .int(21), .int(22)],
            "the identifiers a store batch insert returned are not in the order of the snapshots")
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
        return snapshots.sorted { ((try? $0.value(of: "sequence", as: Int.self)) ?? 0) < ((try? $1.value(of: "sequence", as: Int.self)) ?? 0) }
            .map { (try? $0.value(of: "label", as: String.self)) ?? "?" }
    }

    /// The rules of `DataStoreTwoPhaseSaving`: prepare changes nothing visible, abort restores the
    /// store before or after commit, commit and finish store, a failed prepare releases the store.
    func checkTwoPhaseSave() throws {
        guard let twoPhase = store as? any DataStoreTwoPhaseSaving else {
            throw env.failure("the adapter declares two-phase saves, but its store does not conform to DataStoreTwoPhaseSaving")
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
        try env.checkEqual(try entryLabels("fetching during a prepared save"), before,
                           "fetches saw a prepared save before it was committed: prepareSave must not apply it")
        aborted.abort()
        try env.checkEqual(try entryLabels("fetching after abort"), before, "abort before commit left changes behind")

        let undone = try prepare("preparing the same save again (abort must release the store)")
        try env.step("committing a prepared save") { try undone.commit() }
        undone.abort()
        try env.checkEqual(try entryLabels("fetching after commit then abort"), before,
                           "abort after commit did not restore the store: another store's failure would leave this one changed")

        let kept = try prepare("preparing the save a third time")
        try env.step("committing a prepared save") { try kept.commit() }
        kept.finish()
        try env.checkEqual(try entryLabels("fetching after commit and finish"), ["changed", "two"],
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
private struct ErasedTwoPhasePart {
    let commit: () throws -> Void
    let abort: () -> Void
    let finish: () -> Void
    let remappedCount: Int

    init(
        _ store: any DataStoreTwoPhaseSaving, editingState: EditingState, inserted: [DefaultSnapshot],
        updated: [DefaultSnapshot]
    ) throws {
        func open<S: DataStoreTwoPhaseSaving>(_ store: S) throws -> ErasedTwoPhasePart {
            let part = try store.prepareSave(DataStoreSaveChangesRequest<S.Snapshot>(
                editingState: editingState, inserted: inserted.map(S.Snapshot.init), updated: updated.map(S.Snapshot.init),
                deleted: []))
            return ErasedTwoPhasePart(
                commit: part.commit, abort: part.abort, finish: part.finish,
                remappedCount: part.result.remappedIdentifiers.count)
        }
        self = try open(store)
    }

    private init(commit: @escaping () throws -> Void, abort: @escaping () -> Void, finish: @escaping () -> Void, remappedCount: Int) {
        self.commit = commit
        self.abort = abort
        self.finish = finish
        self.remappedCount = remappedCount
    }
}
