import Foundation
import ModelStore

/// A store that keeps its models in a ``SnapshotTable`` in memory and answers every query from it.
///
/// Supply ``readTable(_:)`` and the store gets `fetch`, `fetchCount`, `fetchIdentifiers`,
/// `cachedSnapshots` and `accessPath(for:)`, all run on the table, which evaluates every filter and
/// sort natively (`QueryCapabilities.all`) and checks a save's expected values. How the store
/// keeps the table between runs is its own: in memory only, a document rewritten whole, a log.
///
/// A store that can also hand the table to a write adopts ``TableWritingStore`` and gets the
/// saves, batch operations and history too.
public protocol TableBackedStore: DataStoreQuerying where Snapshot == DefaultSnapshot {
    /// Runs `body` on the current table under the store's read lock and returns what it returns.
    ///
    /// `body` sees every save that has returned. Throw instead of calling it when the store cannot
    /// be read, for example after it was closed or a write left it unusable.
    func readTable<Result>(_ body: (SnapshotTable) throws -> Result) throws -> Result
}

extension TableBackedStore {
    /// Every filter and sort, run natively on the table, with uniqueness enforced.
    @inlinable
    public var queryCapabilities: QueryCapabilities { .all }

    /// `true`: the table compares a save's expected values with the stored models under the
    /// write's lock, and throws `DataStoreError.Code.conflict` when one differs.
    @inlinable
    public var checksExpectedValues: Bool { true }

    /// The scan or index the table uses for `query`, or `nil` while the store cannot be read.
    @inlinable
    public func accessPath(for query: StoreQuery) -> StoreAccessPath? {
        (try? readTable { $0.accessPath(for: query) }) ?? nil
    }

    /// Fetches by the request's query (or, without one, every model of the entity) from the table.
    @inlinable
    public func fetch<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        let snapshots = try readTable { try $0.fetch(request.resolvedQuery) }
        return DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: snapshots)
    }

    /// Counts what `fetch` returns, without building snapshots.
    @inlinable
    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try readTable { try $0.fetchCount(request.resolvedQuery) }
    }

    /// The identifiers of what `fetch` returns, without building snapshots.
    @inlinable
    public func fetchIdentifiers<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) throws -> [PersistentIdentifier] {
        try readTable { try $0.fetchIdentifiers(request.resolvedQuery) }
    }

    /// The current snapshots of those of `identifiers` the table has.
    @inlinable
    public func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        try readTable { table in
            var result: [PersistentIdentifier: DefaultSnapshot] = [:]
            for id in identifiers { if let snapshot = table.snapshot(for: id) { result[id] = snapshot } }
            return result
        }
    }
}

/// A ``TableBackedStore`` that hands its table and history to each write and keeps what the write
/// leaves: the persistence hook ``writeTable(_:)`` is all a store supplies to get `save`, `erase`,
/// the batch operations (`DataStoreBatching`) and the history (`HistoryProviding`).
///
/// Every write made by these defaults checks first and changes after: it throws, if it throws,
/// before it edits the table or the history. So a store may run writes on its live table (as the
/// in-memory store does with ``SnapshotTableStorage``) or on a copy it persists before it publishes
/// it (as a store that rewrites a document does).
///
/// Two optional hooks add what a store shared with other processes needs, with defaults that do
/// nothing: ``reconcile(_:with:)`` checks a save against models another process changed, and
/// ``clearsDanglingReferences`` keeps references to missing models out of the store.
public protocol TableWritingStore: TableBackedStore, DataStoreBatching, HistoryProviding {
    /// Runs `change` on the table and history, one write at a time, and keeps what it leaves.
    ///
    /// `change` returns its result and whether it changed anything; a store that writes files
    /// writes them only when it did. If `change` or keeping its work throws, the table and the
    /// history stay as they were and the error reaches the caller. `change` throws only before it
    /// edits (see the protocol's discussion), so the store may pass its live table.
    func writeTable<Result>(
        _ change: (inout SnapshotTable, inout StoreHistory) throws -> (result: Result, changed: Bool)
    ) throws -> Result

    /// Runs `body` on the store's history as it is now and returns what it returns.
    func readHistory<Result>(_ body: (StoreHistory) throws -> Result) throws -> Result

    /// Whether the writes keep the store free of references to models it does not have (`false`
    /// unless a store says otherwise).
    ///
    /// When `true`, every write clears the references its change leaves to a model of this store
    /// that is gone (a relationship without an inverse, or with a `.noAction` rule, still naming a
    /// deleted model): a to-one becomes `nil`, a to-many loses the identifier, and a save returns
    /// the models it changed so for the context to re-register
    /// (``SnapshotTable/danglingReferenceRepairs(changed:deleted:storeIdentifier:)``). A save or
    /// update that refers to a new model the save does not insert then throws
    /// `DataStoreError.Code.notFound` before it edits; a batch insert (`insert(_:)`) checks after its
    /// rows are in and takes them back, leaving the key counter raised, so a store that sets this
    /// runs its writes on a copy of the table, as the JSON file store does. A save of only new
    /// models goes through the batch insert only when their entities have no relationships.
    var clearsDanglingReferences: Bool { get }

    /// The save to prepare, given `request` and the table the write runs on; called by the default
    /// ``save(_:)`` inside ``writeTable(_:)``, before anything is prepared or changed. The default
    /// returns `request`.
    ///
    /// A store that reads its table again at the start of a write (a file that another process
    /// saved) throws here `DataStoreError.Code.conflict` for a save that touches a model changed
    /// since the caller read it, and drops the deletions of models already gone.
    func reconcile(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, with table: SnapshotTable
    ) throws -> DataStoreSaveChangesRequest<DefaultSnapshot>
}

extension TableWritingStore {
    /// `false`: the store keeps the references it is given.
    @inlinable
    public var clearsDanglingReferences: Bool { false }

    /// `request` as it is: nothing but this store's own writes changes its table.
    @inlinable
    public func reconcile(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, with table: SnapshotTable
    ) throws -> DataStoreSaveChangesRequest<DefaultSnapshot> {
        request
    }

    /// Saves atomically, enforcing uniqueness, and records the transaction in the history.
    ///
    /// A save of only new models goes through the table's batch insert, which reads them a chunk at
    /// a time (`DataStoreSaveChangesRequest.forEachInsertedChunk(_:)`) and appends each chunk's
    /// values to the columns, taking them back if a later chunk fails; the result gives the new
    /// identifiers as the runs the table minted. Other saves are reconciled
    /// (``reconcile(_:with:)``), prepared and applied, and, when the store
    /// ``clearsDanglingReferences``, the models whose references they leave dangling are repaired
    /// and returned for the context to re-register.
    @inlinable
    public func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        let identifier = self.identifier
        let clears = clearsDanglingReferences
        // New models without relationships leave no reference to repair.
        if request.updated.isEmpty, request.deleted.isEmpty, !clears || SnapshotTable.insertsOnlyUnrelated(request) {
            let (ids, number) = try insertRecording(request.insertedBatch(), repairing: false)
            return DataStoreSaveChangesResult(
                for: identifier, inserted: request, identifiers: ids,
                historyToken: number.map { DefaultHistoryToken(storeIdentifier: identifier, transactionNumber: $0) })
        }
        return try writeTable { table, history in
            let prepared = try table.prepare(try reconcile(request, with: table), storeIdentifier: identifier)
            if clears { try SnapshotTable.checkReferencesArePermanent([prepared.inserted, prepared.updated].joined()) }
            // Every insert and delete is a change (prepare found each deleted model), so a save with
            // more of them than the history keeps is trimmed at once: its changes are not built.
            var changes =
                history.dropsAtOnce(prepared.inserted.count + prepared.deleted.count)
                ? nil : table.historyChanges(of: prepared)
            table.apply(prepared)
            var repaired: [PersistentIdentifier: DefaultSnapshot] = [:]
            if clears {
                repaired = table.danglingReferenceRepairs(
                    changed: prepared.inserted + prepared.updated, deleted: prepared.deleted,
                    storeIdentifier: identifier)
                if !repaired.isEmpty {
                    if let listed = changes.map({ Set($0.map(\.id)) }) {
                        changes? += table.historyChanges(
                            updating: repaired.values.filter { !listed.contains($0.persistentIdentifier) })
                    }
                    table.applyUpdate(Array(repaired.values))
                }
            }
            var number: Int64?
            if let changes {
                if let record = history.nextRecord(changes, author: request.editingState.author) {
                    history.append(record)
                    number = record.number
                }
            } else {
                number = history.recordDropped()
            }
            let token = number.map { DefaultHistoryToken(storeIdentifier: identifier, transactionNumber: $0) }
            return (prepared.result(for: identifier, snapshotsToReregister: repaired, historyToken: token), true)
        }
    }

    /// Removes every model and the history: tokens from before the erase expire. The key counter
    /// stays, so identifiers of erased models are never minted again.
    @inlinable
    public func erase() throws {
        try writeTable { table, history in
            table.removeAll()
            history.delete(throughNumber: history.lastNumber)
            return ((), true)
        }
    }

    /// Deletes models by identifier, as one transaction; unknown identifiers are ignored.
    @inlinable
    public func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        let (clears, identifier) = (clearsDanglingReferences, self.identifier)
        try writeTable { table, history in
            let count = table.count(existing: request.identifiers)
            guard count > 0 else { return ((), false) }
            guard clears else {
                history.record(count: count, author: request.editingState.author) {
                    table.historyChanges(deleting: request.identifiers)
                }
                table.delete(request.identifiers)
                return ((), true)
            }
            let present = request.identifiers.filter { table.snapshot(for: $0) != nil }
            let deleting = history.dropsAtOnce(count) ? [] : table.historyChanges(deleting: present)
            table.delete(present)
            table.repairDanglingReferences(
                deleted: present, storeIdentifier: identifier, count: count, author: request.editingState.author,
                history: &history, changes: deleting)
            return ((), true)
        }
    }

    /// Deletes every model of `T`'s entity at once, as one transaction, and returns their identifiers.
    @inlinable
    public func deleteEveryModel<T: PersistentModel>(
        _ request: DataStoreDeleteEveryModelRequest<T>
    ) throws -> PersistentIdentifiers {
        let name = Schema.entityName(for: T.self)
        let repairs = clearsDanglingReferences && schema.isReferenced(name)
        let identifier = self.identifier
        return try writeTable { table, history in
            let identifiers = table.identifiers(of: name)
            guard !identifiers.isEmpty else { return ([], false) }
            guard repairs else {
                history.record(count: identifiers.count, author: request.editingState.author) {
                    table.historyChanges(deletingEveryModelOf: name)
                }
                table.deleteEveryModel(of: name)
                return (identifiers, true)
            }
            let deleting =
                history.dropsAtOnce(identifiers.count) ? [] : table.historyChanges(deletingEveryModelOf: name)
            table.deleteEveryModel(of: name)
            table.repairDanglingReferences(
                deleted: Array(identifiers), storeIdentifier: identifier, count: identifiers.count,
                author: request.editingState.author, history: &history, changes: deleting)
            return (identifiers, true)
        }
    }

    /// Sets values on models by identifier, as one transaction, enforcing uniqueness.
    @inlinable
    public func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        let (clears, identifier) = (clearsDanglingReferences, self.identifier)
        try writeTable { table, history in
            let updated = try table.prepareUpdate(request.identifiers, values: request.values)
            guard !updated.isEmpty else { return ((), false) }
            if clears { try SnapshotTable.checkReferencesArePermanent(updated) }
            history.record(table.historyChanges(updating: updated), author: request.editingState.author)
            table.applyUpdate(updated)
            if clears {
                // The repaired models are updated ones, whose changes the history has.
                let repaired = table.danglingReferenceRepairs(
                    changed: updated, deleted: [], storeIdentifier: identifier)
                if !repaired.isEmpty { table.applyUpdate(Array(repaired.values)) }
            }
            return ((), true)
        }
    }

    /// Inserts snapshots as one transaction, enforcing uniqueness, and returns their permanent
    /// identifiers in order.
    ///
    /// The snapshots go into the table's columns a chunk at a time as the request yields them; a
    /// failure takes back what was appended.
    @inlinable
    public func insert(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> PersistentIdentifiers {
        try insertRecording(request, repairing: clearsDanglingReferences).ids
    }

    /// Inserts new models with the table's batch insert and records the transaction (each model a
    /// change, built only if the history keeps it). Returns the permanent identifiers in order and
    /// the transaction's number.
    ///
    /// With `repairing`, the new models of entities with relationships are checked and repaired as
    /// ``clearsDanglingReferences`` says, after their rows are in; a check that fails takes the
    /// rows back out (the key counter stays raised, which a store that writes on a copy discards).
    @inlinable
    func insertRecording(
        _ request: DataStoreBatchInsertRequest<DefaultSnapshot>, repairing: Bool
    ) throws -> (ids: PersistentIdentifiers, number: Int64?) {
        let (identifier, schema) = (self.identifier, self.schema)
        return try writeTable { table, history in
            let ids = try table.insert(request, storeIdentifier: identifier)
            if repairing {
                let entities: Set<String> = ids.keyRuns.map { [$0.entityName] } ?? Set(ids.lazy.map(\.entityName))
                if entities.contains(where: { schema.entity(named: $0)?.relationships.isEmpty == false }) {
                    let inserted = ids.compactMap(table.snapshot(for:))
                    do {
                        try SnapshotTable.checkReferencesArePermanent(inserted)
                    } catch {
                        table.delete(Array(ids))
                        throw error
                    }
                    // The repaired models are new ones, whose inserts the history records.
                    let repaired = table.danglingReferenceRepairs(
                        changed: inserted, deleted: [], storeIdentifier: identifier)
                    if !repaired.isEmpty { table.applyUpdate(Array(repaired.values)) }
                }
            }
            let number = history.record(count: ids.count, author: request.editingState.author) {
                ids.map { StoreHistoryRecord.Change(.insert, $0) }
            }
            return ((ids, number), !ids.isEmpty)
        }
    }

    /// The transactions `descriptor` selects, oldest first unless it sorts otherwise.
    @inlinable
    public func fetchHistory(
        _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>
    ) throws -> [DefaultHistoryTransaction] {
        let history = try readHistory { $0 }
        return try history.transactions(descriptor, schema: schema, storeIdentifier: identifier)
    }

    /// Deletes the transactions `descriptor` selects.
    @inlinable
    public func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        let (schema, identifier) = (self.schema, self.identifier)
        try writeTable { _, history in
            ((), try history.delete(descriptor, schema: schema, storeIdentifier: identifier))
        }
    }
}

extension SnapshotTable {
    /// Whether every model `request` inserts is of an entity without relationships. Snapshots a
    /// context makes on demand are (`makesInsertedOnDemand`), so they are not made to find out.
    @usableFromInline
    static func insertsOnlyUnrelated(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) -> Bool {
        request.makesInsertedOnDemand || request.inserted.allSatisfy { $0.entity.relationships.isEmpty }
    }

    /// After models were deleted, for a store that ``TableWritingStore/clearsDanglingReferences``:
    /// clears the references left to them and records the transaction, `changes` (the deletions,
    /// read before them) and an update per repaired model, unless the history drops a transaction
    /// of `count` changes at once.
    @usableFromInline
    mutating func repairDanglingReferences(
        deleted: [PersistentIdentifier], storeIdentifier: String, count: Int, author: String?,
        history: inout StoreHistory, changes: [StoreHistoryRecord.Change]
    ) {
        let repaired = Array(
            danglingReferenceRepairs(changed: [], deleted: deleted, storeIdentifier: storeIdentifier).values)
        history.record(count: count, author: author) { changes + historyChanges(updating: repaired) }
        if !repaired.isEmpty { applyUpdate(repaired) }
    }
}
