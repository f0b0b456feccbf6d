import Foundation
import ModelStore

/// One write to a ``SnapshotTable``, as the ``TableLoggingStore`` defaults hand it to the store's
/// hook: what the write changes, so that the store can keep the change itself (a record in a log,
/// rows in a key-value store) rather than the whole table.
///
/// Read each change against the table the hook is given, then apply it with
/// ``SnapshotTable/apply(_:)-(TableChange)``. Only ``inserted(_:)`` is already in the table when
/// the hook receives it.
///
/// Room to grow: a later version may add a case (a new kind of batch write). A store that switches
/// over this enum should end the switch with `@unknown default`, handled by refusing the write with
/// an error, so that it keeps building and never drops a change it does not know.
public enum TableChange: Sendable {
    /// A prepared save: the models it inserts (under their permanent identifiers), the models it
    /// updates (their whole new snapshots; compare with the table for the values that changed) and
    /// the models it deletes. The table does not have it yet.
    case save(SnapshotTable.PreparedSave)
    /// New models the table's batch insert has already taken, in order. Read their values from the
    /// table (``SnapshotTable/snapshot(for:)`` or ``SnapshotTable/forEachModel(of:_:)``). A store
    /// that cannot keep them takes them back with ``SnapshotTable/takeBack(_:)`` (the key counter
    /// stays raised, so their keys are never minted again).
    case inserted(PersistentIdentifiers)
    /// Every model of an entity, to delete at once. The table still has them. The defaults send it
    /// only for an entity without relationships that no relationship names, so no reference to the
    /// deleted models remains; other entities' models are deleted as a ``save(_:)``.
    case deletingEveryModel(of: Schema.Entity)
}

extension SnapshotTable {
    /// Applies a change the table has not taken yet: a save's inserts, updates and deletes, or the
    /// deletion of every model of an entity. An ``TableChange/inserted(_:)`` change is in the table
    /// already, so applying it does nothing.
    public mutating func apply(_ change: TableChange) {
        switch change {
        case .save(let prepared): apply(prepared)
        case .inserted: break
        case .deletingEveryModel(let entity): deleteEveryModel(of: entity.name)
        }
    }

    /// Undoes what a change did to the table before it was kept: the models an
    /// ``TableChange/inserted(_:)`` change added are removed. Other changes are not applied until
    /// they are kept, so taking them back does nothing.
    public mutating func takeBack(_ change: TableChange) {
        if case .inserted(let ids) = change, !ids.isEmpty { delete(Array(ids)) }
    }
}

/// A ``TableBackedStore`` that keeps each write as the change it makes, as a log does: the
/// persistence hook ``commit(author:_:)`` is all a store supplies to get `save`, `erase` and the
/// batch operations (`DataStoreBatching`).
///
/// Where a ``TableWritingStore`` is handed the table after a write, whole, a logging store is
/// handed the ``TableChange`` before the table takes it, so a save costs what it changes and not the
/// size of the store. The defaults prepare each write against the table (validating it, minting
/// identifiers and checking unique values and a save's expected values) inside the hook, and throw
/// before anything is changed when a write is refused.
///
/// History is the store's own: a log reads its records back as transactions (`HistoryProviding`),
/// so this protocol adds none.
public protocol TableLoggingStore: TableBackedStore, DataStoreBatching {
    /// Runs one write: under the store's write lock, calls `write` with the live table, keeps the
    /// change it returns, applies it to the table, and returns once the change is as durable as the
    /// store promises.
    ///
    /// When keeping the change fails, call ``SnapshotTable/takeBack(_:)`` on the table, leave the
    /// table as it was and throw: the store must be exactly as before the write.
    ///
    /// - Parameters:
    ///   - author: The author the write's editing state names, for the store to record.
    ///   - write: The kit's write. It returns the change (`nil` when it changes nothing: keep
    ///     nothing) and a result to hand back, and throws only before it changes the table, or after
    ///     taking its own changes back.
    /// - Returns: `write`'s result, and the number of the transaction that keeps the change (`nil`
    ///   when there was none), which the defaults give the context as the save's history token.
    func commit<Result>(
        author: String?, _ write: (inout SnapshotTable) throws -> (change: TableChange?, result: Result)
    ) throws -> (result: Result, transaction: Int64?)
}

extension TableLoggingStore {
    /// Saves atomically, enforcing uniqueness, as one change.
    ///
    /// A save of only new models goes through the table's batch insert, which reads them a chunk at a
    /// time (`DataStoreSaveChangesRequest.forEachInsertedChunk(_:)`), and reaches the hook as
    /// ``TableChange/inserted(_:)``; other saves are prepared and reach it as ``TableChange/save(_:)``.
    @inlinable
    public func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        let identifier = self.identifier
        if request.updated.isEmpty, request.deleted.isEmpty {
            let batch = request.insertedBatch()
            let (ids, number) = try commit(author: request.editingState.author) { table in
                let ids = try table.insert(batch, storeIdentifier: identifier)
                return (ids.isEmpty ? nil : .inserted(ids), ids)
            }
            return DataStoreSaveChangesResult(
                for: identifier, inserted: request, identifiers: ids, historyToken: token(number))
        }
        let (prepared, number) = try commit(author: request.editingState.author) { table in
            let prepared = try table.prepare(request, storeIdentifier: identifier)
            return (.save(prepared), prepared)
        }
        return prepared.result(for: identifier, historyToken: token(number))
    }

    /// Deletes every model, as one change of their deletions (``eraseModels()``). The key counter
    /// stays, so identifiers of erased models are never minted again.
    @inlinable
    public func erase() throws {
        _ = try eraseModels()
    }

    /// Deletes every model as one change of their deletions, and returns the number of the
    /// transaction that keeps it (`nil` when there was nothing to delete). For a store whose
    /// `erase()` also clears what it keeps beside the models, such as its history.
    @inlinable
    public func eraseModels() throws -> Int64? {
        let identifier = self.identifier
        return try commit(author: nil) { table in
            let all = table.allSnapshots
            guard !all.isEmpty else { return (nil, ()) }
            let prepared = try table.prepare(
                DataStoreSaveChangesRequest(editingState: EditingState(), inserted: [], updated: [], deleted: all),
                storeIdentifier: identifier)
            return (.save(prepared), ())
        }.transaction
    }

    /// Deletes models by identifier, as one change; unknown identifiers are ignored.
    @inlinable
    public func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        let identifier = self.identifier
        _ = try commit(author: request.editingState.author) { table in
            let doomed = request.identifiers.compactMap { table.snapshot(for: $0) }
            guard !doomed.isEmpty else { return (nil, ()) }
            let prepared = try table.prepare(
                DataStoreSaveChangesRequest(
                    editingState: request.editingState, inserted: [], updated: [], deleted: doomed),
                storeIdentifier: identifier)
            return (.save(prepared), ())
        }
    }

    /// Deletes every model of `T`'s entity, as one change, and returns their identifiers.
    ///
    /// For an entity without relationships that no relationship names, the change is
    /// ``TableChange/deletingEveryModel(of:)``, which needs no snapshot per model; otherwise it is a
    /// save of the deletions.
    @inlinable
    public func deleteEveryModel<T: PersistentModel>(
        _ request: DataStoreDeleteEveryModelRequest<T>
    ) throws -> PersistentIdentifiers {
        let name = Schema.entityName(for: T.self)
        guard let entity = schema.entity(named: name) else { return [] }
        let related = !entity.relationships.isEmpty || schema.isReferenced(name)
        let identifier = self.identifier
        return try commit(author: request.editingState.author) { table in
            let identifiers = table.identifiers(of: name)
            guard !identifiers.isEmpty else { return (nil, identifiers) }
            guard related else { return (.deletingEveryModel(of: entity), identifiers) }
            let prepared = try table.prepare(
                DataStoreSaveChangesRequest(
                    editingState: request.editingState, inserted: [], updated: [],
                    deleted: identifiers.compactMap { table.snapshot(for: $0) }),
                storeIdentifier: identifier)
            return (.save(prepared), identifiers)
        }.result
    }

    /// Sets values on models by identifier, as one change, enforcing uniqueness; unknown identifiers
    /// are ignored.
    @inlinable
    public func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        let identifier = self.identifier
        _ = try commit(author: request.editingState.author) { table in
            let updated = try table.prepareUpdate(request.identifiers, values: request.values)
            guard !updated.isEmpty else { return (nil, ()) }
            let prepared = try table.prepare(
                DataStoreSaveChangesRequest(
                    editingState: request.editingState, inserted: [], updated: updated, deleted: []),
                storeIdentifier: identifier)
            return (.save(prepared), ())
        }
    }

    /// Inserts snapshots as one change, enforcing uniqueness, and returns their permanent identifiers
    /// in order. The snapshots go into the table's columns a chunk at a time as the request yields
    /// them, and reach the hook as ``TableChange/inserted(_:)``.
    @inlinable
    public func insert(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> PersistentIdentifiers {
        let identifier = self.identifier
        return try commit(author: request.editingState.author) { table in
            let ids = try table.insert(request, storeIdentifier: identifier)
            return (ids.isEmpty ? nil : .inserted(ids), ids)
        }.result
    }

    /// The history token of transaction `number` of this store.
    @inlinable
    func token(_ number: Int64?) -> DefaultHistoryToken? {
        number.map { DefaultHistoryToken(storeIdentifier: identifier, transactionNumber: $0) }
    }
}
