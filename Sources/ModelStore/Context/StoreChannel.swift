import Foundation

/// One store as a context talks to it, made once when the container opens the store.
///
/// A store speaks one of several dialects: a SwiftData-style store takes whole descriptors and may
/// answer "filter in memory" or "sort in memory"; a querying store (``DataStoreQuerying``) takes
/// store-neutral queries; an asynchronous store (``DataStoreAsynchronous``) is awaited; and each
/// has its own snapshot type. The channel settles all of that when it is made (which optional
/// protocols the store conforms to, its query capabilities) and converts snapshots to and from
/// ``DefaultSnapshot``, so the context asks every store the same questions in one form, and
/// answers with one path whatever the store is.
final class StoreChannel: Sendable {
    /// The store.
    let store: any DataStore
    /// What a querying store runs; `nil` for a SwiftData-style store, which takes descriptors.
    let capabilities: QueryCapabilities?
    /// The store's history, when it keeps one.
    let history: (any HistoryProviding)?
    /// The store as a querying store, when it is one.
    let querying: (any DataStoreQuerying)?
    private let batching: (any DataStoreBatching)?
    private let twoPhase: (any DataStoreTwoPhaseSaving)?
    private let asynchronous: (any DataStoreAsynchronous)?

    /// A channel to `store`.
    init(_ store: any DataStore) {
        self.store = store
        querying = store as? any DataStoreQuerying
        capabilities = querying?.queryCapabilities
        history = store as? any HistoryProviding
        batching = store as? any DataStoreBatching
        twoPhase = store as? any DataStoreTwoPhaseSaving
        asynchronous = store as? any DataStoreAsynchronous
    }

    /// Whether the store checks uniqueness constraints itself, atomically with its writes.
    var enforcesUniqueness: Bool { capabilities?.enforcesUniqueness == true }
    /// Whether the store's work is awaited (``DataStoreAsynchronous``).
    var isAsynchronous: Bool { asynchronous != nil }
    /// Whether the store takes batch inserts, updates and deletes (``DataStoreBatching``).
    var takesBatches: Bool { batching != nil }
    /// Whether the store can take part in a save across several stores.
    var takesPartInTwoPhaseSaves: Bool { twoPhase != nil }

    /// Throws ``DataStoreError/Code/readOnly`` when the store's configuration does not allow saves.
    func requireAllowsSave(_ action: @autoclosure () -> String) throws {
        try store.requireAllowsSave(action())
    }

    // MARK: Reads

    /// What a fetch returned, in the context's snapshot form.
    struct Fetched {
        /// The snapshots, in the store's order.
        var snapshots: [DefaultSnapshot]
        /// Whether the store left out the attributes the query's `propertiesToFetch` does not name.
        var omitsUnrequested: Bool
    }

    /// The snapshots a request selects, as the store answers it.
    @inline(__always)
    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Fetched {
        let result = try store.fetchErased(request)
        return Fetched(snapshots: result.snapshots, omitsUnrequested: result.omitsUnrequested)
    }

    /// The snapshots of a planned fetch. A SwiftData-style store that asks for in-memory filtering
    /// or sorting is asked again for less, and the plan records what is left for the context.
    @inline(__always)
    func fetch<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, plan: inout FetchPlan<T>, editingState: EditingState
    ) throws -> Fetched {
        do {
            return try fetch(plan.request(descriptor, editingState: editingState))
        } catch DataStoreError.preferInMemoryFilter {
            plan.fallBackToMemory()
            return try fetch(plan.request(descriptor, editingState: editingState))
        } catch DataStoreError.preferInMemorySort {
            plan.fallBackToMemory(keepFilter: true)
            do {
                return try fetch(plan.request(descriptor, editingState: editingState))
            } catch DataStoreError.preferInMemoryFilter {
                plan.fallBackToMemory()
                return try fetch(plan.request(descriptor, editingState: editingState))
            }
        }
    }

    /// How many models the request matches, or `nil` when the store asks the context to filter or
    /// sort in memory (the context then counts what a fetch returns).
    func count<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int? {
        do {
            return try store.fetchCount(request)
        } catch DataStoreError.preferInMemoryFilter, DataStoreError.preferInMemorySort {
            return nil
        }
    }

    /// The identifiers the request selects, in order, or `nil` when the store asks the context to
    /// filter or sort in memory.
    func identifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier]? {
        do {
            return try store.fetchIdentifiers(request)
        } catch DataStoreError.preferInMemoryFilter, DataStoreError.preferInMemorySort {
            return nil
        }
    }

    /// The stored snapshots of an entity that `query` selects (every one when `query` is `nil`, or
    /// when the store takes no queries), in stored state: no editing state's pending changes.
    func storedSnapshots(
        of entity: Schema.Entity, matching query: StoreQuery? = nil, editingState: EditingState
    ) throws -> [DefaultSnapshot] {
        func open<M: PersistentModel>(_ type: M.Type) throws -> [DefaultSnapshot] {
            var descriptor = FetchDescriptor<M>()
            descriptor.includePendingChanges = false
            return try fetch(storedRequest(descriptor, entity: entity, query: query, editingState: editingState))
                .snapshots
        }
        return try open(entity.modelType)
    }

    /// The stored snapshots with these identifiers, by identifier: the store's cache first, then
    /// one fetch for the rest (by identifier where the store runs that filter). Identifiers the
    /// store lacks are left out.
    func storedSnapshots(
        identifiedBy ids: [PersistentIdentifier], of entity: Schema.Entity, editingState: EditingState
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        var found = try cachedSnapshots(ids, editingState: editingState)
        let missing = ids.filter { found[$0] == nil }
        guard !missing.isEmpty else { return found }
        let wanted = Set(missing)
        func open<M: PersistentModel>(_ type: M.Type) throws -> [DefaultSnapshot] {
            var descriptor = FetchDescriptor<M>(predicate: #Predicate<M> { wanted.contains($0.persistentModelID) })
            descriptor.includePendingChanges = false
            // A querying store gets the identifiers if it runs them; otherwise every row is read.
            let query = capabilities.map { capabilities in
                StoreQuery(
                    entityName: entity.name,
                    filter: capabilities.filters.contains(.identifiers) ? .identifiers(wanted) : nil)
            }
            do {
                return try fetch(
                    DataStoreFetchRequest(descriptor: descriptor, editingState: editingState, query: query)
                )
                .snapshots
            } catch DataStoreError.preferInMemoryFilter {
                descriptor.predicate = nil
                return try fetch(DataStoreFetchRequest(descriptor: descriptor, editingState: editingState)).snapshots
            }
        }
        for snapshot in try open(entity.modelType)
        where snapshot.entity.name == entity.name && wanted.contains(snapshot.persistentIdentifier) {
            found[snapshot.persistentIdentifier] = snapshot
        }
        return found
    }

    /// The snapshots the store holds in its cache for these identifiers (see
    /// ``DataStore/cachedSnapshots(for:editingState:)``).
    func cachedSnapshots(_ ids: [PersistentIdentifier], editingState: EditingState) throws
        -> [PersistentIdentifier: DefaultSnapshot]
    {
        try store.cachedErased(ids, editingState: editingState)
    }

    /// How a querying store would find the rows of `query` (an index, a scan), for ``ModelContext/explain(_:)``.
    func accessPath(for query: StoreQuery) -> StoreAccessPath? { querying?.accessPath(for: query) }

    /// The request that reads stored snapshots of `entity`: `query`, or every row.
    private func storedRequest<M: PersistentModel>(
        _ descriptor: FetchDescriptor<M>, entity: Schema.Entity, query: StoreQuery?, editingState: EditingState
    ) -> DataStoreFetchRequest<M> {
        let query = query ?? capabilities.map { _ in StoreQuery(entityName: entity.name) }
        return DataStoreFetchRequest(descriptor: descriptor, editingState: editingState, query: query)
    }

    // MARK: Writes

    /// Stores inserts, updates and deletes atomically, in the context's snapshot form.
    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws
        -> DataStoreSaveChangesResult<DefaultSnapshot>
    {
        try store.saveErased(request)
    }

    /// Prepares this store's part of a save across stores.
    func prepare(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> ErasedPreparedSave {
        try requireAllowsSave("a save")
        guard let twoPhase else {
            throw DataStoreError(
                .unsupportedFeature, "the store '\(store.identifier)' cannot take part in a save across stores")
        }
        return try twoPhase.prepareConverted(request)
    }

    /// Inserts a batch of snapshots with the store's batch insert; ``takesBatches`` must be true.
    func insert(batch request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> PersistentIdentifiers {
        guard let batching else { throw Self.noBatches(store) }
        return try batching.batchInsertErased(request)
    }

    /// Deletes every model of an entity with the store's batch delete; ``takesBatches`` must be true.
    func deleteEveryModel<T: PersistentModel>(_ request: DataStoreDeleteEveryModelRequest<T>) throws
        -> PersistentIdentifiers
    {
        guard let batching else { throw Self.noBatches(store) }
        return try batching.deleteEveryModel(request)
    }

    /// Deletes the models a batch delete names; ``takesBatches`` must be true.
    func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        guard let batching else { throw Self.noBatches(store) }
        try batching.delete(request)
    }

    /// Sets values on the models a batch update names; ``takesBatches`` must be true.
    func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        guard let batching else { throw Self.noBatches(store) }
        try batching.update(request)
    }

    private static func noBatches(_ store: any DataStore) -> DataStoreError {
        DataStoreError(.unsupportedFeature, "the store '\(store.identifier)' takes no batches")
    }

    // MARK: Awaited forms

    /// ``fetch(_:)``'s snapshots, awaiting an asynchronous store (any other store answers at once).
    func fetchAsync<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) async throws -> [DefaultSnapshot] {
        guard let asynchronous else { return try fetch(request).snapshots }
        return try await asynchronous.fetchErasedAsync(request)
    }

    /// ``count(_:)``, awaiting an asynchronous store.
    func countAsync<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) async throws -> Int? {
        guard let asynchronous else { return try count(request) }
        do {
            return try await asynchronous.fetchCount(request)
        } catch DataStoreError.preferInMemoryFilter, DataStoreError.preferInMemorySort {
            return nil
        }
    }

    /// ``identifiers(_:)``, awaiting an asynchronous store.
    func identifiersAsync<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) async throws
        -> [PersistentIdentifier]?
    {
        guard let asynchronous else { return try identifiers(request) }
        do {
            return try await asynchronous.fetchIdentifiers(request)
        } catch DataStoreError.preferInMemoryFilter, DataStoreError.preferInMemorySort {
            return nil
        }
    }

    /// ``storedSnapshots(of:matching:editingState:)``, awaiting an asynchronous store.
    func storedSnapshotsAsync(
        of entity: Schema.Entity, matching query: StoreQuery? = nil, editingState: EditingState
    ) async throws -> [DefaultSnapshot] {
        func open<M: PersistentModel>(_ type: M.Type) async throws -> [DefaultSnapshot] {
            var descriptor = FetchDescriptor<M>()
            descriptor.includePendingChanges = false
            return try await fetchAsync(
                storedRequest(descriptor, entity: entity, query: query, editingState: editingState))
        }
        return try await open(entity.modelType)
    }

    /// ``save(_:)``, awaiting an asynchronous store.
    func saveAsync(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) async throws
        -> DataStoreSaveChangesResult<DefaultSnapshot>
    {
        guard let asynchronous else { return try save(request) }
        return try await asynchronous.saveErasedAsync(request)
    }
}

// The conversions behind a channel: each call converts to and from ``DefaultSnapshot``, the context's
// snapshot form (`…Erased`). Sync and tools that read a store in that form use them too.
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

}

extension DataStoreTwoPhaseSaving {
    func prepareConverted(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws
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

extension DataStoreAsynchronous {
    func fetchErasedAsync<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) async throws -> [DefaultSnapshot] {
        let result: DataStoreFetchResult<T, Snapshot> = try await fetch(request)
        return result.fetchedSnapshots.map(\.defaultSnapshot)
    }

    func saveErasedAsync(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) async throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try requireAllowsSave("a save")
        let result: DataStoreSaveChangesResult<Snapshot> = try await save(request.converted(to: Snapshot.self))
        return result.inDefaultForm
    }
}
