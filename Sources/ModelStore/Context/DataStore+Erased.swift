import Foundation

// Calls the context makes on `any DataStore`, converting to and from the context's snapshot form.
extension DataStore {
    func fetchDefault<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) throws -> (
        snapshots: [DefaultSnapshot], related: [PersistentIdentifier: DefaultSnapshot], omitsUnrequested: Bool
    ) {
        let result = try fetch(request)
        // Only a query that asked for fewer properties can get fewer.
        let omits = result.omitsUnrequestedProperties && request.query?.propertiesToFetch != nil
        if Snapshot.self == DefaultSnapshot.self {
            return (
                unsafeBitCast(result.fetchedSnapshots, to: [DefaultSnapshot].self),
                unsafeBitCast(result.relatedSnapshots, to: [PersistentIdentifier: DefaultSnapshot].self), omits
            )
        }
        return (
            result.fetchedSnapshots.map(\.defaultSnapshot), result.relatedSnapshots.mapValues(\.defaultSnapshot),
            omits
        )
    }

    /// Throws ``DataStoreError/Code/readOnly`` when the store's configuration does not allow saves.
    func requireAllowsSave(_ action: @autoclosure () -> String) throws {
        guard configuration.allowsSave else {
            throw DataStoreError.readOnly(store: configuration.name, refusing: action())
        }
    }

    func saveDefault(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try requireAllowsSave("a save")
        var converted = DataStoreSaveChangesRequest<Snapshot>(
            editingState: request.editingState,
            inserted: request.inserted.map(Snapshot.init), updated: request.updated.map(Snapshot.init),
            deleted: request.deleted.map(Snapshot.init))
        converted.expectedValues = request.expectedValues
        let result = try save(converted)
        return DataStoreSaveChangesResult(
            for: result.storeIdentifier, remappedIdentifiers: result.remappedIdentifiers,
            snapshotsToReregister: result.snapshotsToReregister.mapValues { $0.defaultSnapshot },
            historyToken: result.historyToken)
    }

    func cachedDefault(_ ids: [PersistentIdentifier], editingState: EditingState) throws -> [PersistentIdentifier:
        DefaultSnapshot]
    {
        try cachedSnapshots(for: ids, editingState: editingState).mapValues { $0.defaultSnapshot }
    }

    var queryCapabilitiesIfAny: QueryCapabilities? { (self as? any DataStoreQuerying)?.queryCapabilities }

    /// Whether the store can take part in a save across several stores.
    var takesPartInTwoPhaseSaves: Bool { self is any DataStoreTwoPhaseSaving }

    /// Prepares this store's part of a save across stores, in the context's snapshot form.
    func prepareDefault(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> ErasedPreparedSave {
        try requireAllowsSave("a save")
        guard let twoPhase = self as? any DataStoreTwoPhaseSaving else {
            throw DataStoreError(
                .unsupportedFeature, "the store '\(identifier)' cannot take part in a save across stores")
        }
        return try twoPhase.prepareConverted(request)
    }
}

extension DataStoreTwoPhaseSaving {
    fileprivate func prepareConverted(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws
        -> ErasedPreparedSave
    {
        var converted = DataStoreSaveChangesRequest<Snapshot>(
            editingState: request.editingState,
            inserted: request.inserted.map(Snapshot.init), updated: request.updated.map(Snapshot.init),
            deleted: request.deleted.map(Snapshot.init))
        converted.expectedValues = request.expectedValues
        let part = try prepareSave(converted)
        let result = part.result
        return ErasedPreparedSave(
            result: DataStoreSaveChangesResult(
                for: result.storeIdentifier, remappedIdentifiers: result.remappedIdentifiers,
                snapshotsToReregister: result.snapshotsToReregister.mapValues { $0.defaultSnapshot },
                historyToken: result.historyToken),
            commit: part.commit, abort: part.abort, finish: part.finish)
    }
}

/// One store's prepared part of a save across stores, in the context's snapshot form.
struct ErasedPreparedSave {
    let result: DataStoreSaveChangesResult<DefaultSnapshot>
    let commit: () throws -> Void
    let abort: () -> Void
    let finish: () -> Void
}

extension DataStoreBatching {
    func batchInsertDefault(_ snapshots: [DefaultSnapshot], editingState: EditingState) throws -> [PersistentIdentifier]
    {
        try insert(DataStoreBatchInsertRequest(snapshots: snapshots.map(Snapshot.init), editingState: editingState))
    }
}
