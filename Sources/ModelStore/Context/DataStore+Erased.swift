import Foundation

// Calls the context makes on `any DataStore`, with the store's snapshot type erased: each converts to and
// from ``DefaultSnapshot``, the context's snapshot form (`…Erased`).
extension DataStore {
    package func fetchErased<T: PersistentModel>(
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

    package func saveErased(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try requireAllowsSave("a save")
        return try save(request.converted(to: Snapshot.self)).inDefaultForm
    }

    func cachedErased(_ ids: [PersistentIdentifier], editingState: EditingState) throws -> [PersistentIdentifier:
        DefaultSnapshot]
    {
        try cachedSnapshots(for: ids, editingState: editingState).mapValues { $0.defaultSnapshot }
    }

    var queryCapabilitiesIfAny: QueryCapabilities? { (self as? any DataStoreQuerying)?.queryCapabilities }

    /// Whether the store can take part in a save across several stores.
    var takesPartInTwoPhaseSaves: Bool { self is any DataStoreTwoPhaseSaving }

    /// Prepares this store's part of a save across stores, in the context's snapshot form.
    func prepareErased(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> ErasedPreparedSave {
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
        let part = try prepareSave(request.converted(to: Snapshot.self))
        return ErasedPreparedSave(
            result: part.result.inDefaultForm, commit: part.commit, abort: part.abort, finish: part.finish)
    }
}

extension DataStoreSaveChangesRequest<DefaultSnapshot> {
    /// The request in a store's snapshot form, expected values included.
    func converted<Stored: DataStoreSnapshot>(to type: Stored.Type) -> DataStoreSaveChangesRequest<Stored> {
        // A store of default snapshots takes the request as it is, without a copy of each snapshot.
        if Stored.self == DefaultSnapshot.self {
            return unsafeBitCast(self, to: DataStoreSaveChangesRequest<Stored>.self)
        }
        var converted = DataStoreSaveChangesRequest<Stored>(
            editingState: editingState,
            inserted: inserted.map(Stored.init), updated: updated.map(Stored.init), deleted: deleted.map(Stored.init))
        converted.expectedValues = expectedValues
        return converted
    }
}

extension DataStoreSaveChangesResult {
    /// The result in the context's snapshot form: every field carried over, the history token included.
    var inDefaultForm: DataStoreSaveChangesResult<DefaultSnapshot> {
        var result = DataStoreSaveChangesResult<DefaultSnapshot>(
            for: storeIdentifier, snapshotsToReregister: snapshotsToReregister.mapValues { $0.defaultSnapshot },
            historyToken: historyToken)
        result.mapping = mapping
        return result
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
    func batchInsertErased(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> PersistentIdentifiers {
        // A store of default snapshots takes the request as it is, without a copy of each snapshot;
        // another store's snapshots are converted a chunk at a time, as the store reads them.
        if let same = request as? DataStoreBatchInsertRequest<Snapshot> { return try insert(same) }
        return try insert(
            DataStoreBatchInsertRequest<Snapshot>(
                expectedCount: request.expectedCount, editingState: request.editingState
            ) {
                try request.nextChunk().map(Snapshot.init)
            })
    }
}
