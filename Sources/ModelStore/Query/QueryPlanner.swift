import Foundation

/// How one fetch is split between the store and the context.
struct QueryPlan<T: PersistentModel> {
    /// Whether the store runs store-neutral queries (``DataStoreQuerying``).
    var isQuerying: Bool
    /// The query sent to a querying store.
    var query: StoreQuery?
    /// What a SwiftData-style store is asked for.
    var storeDescriptor: FetchDescriptor<T>
    /// Conditions evaluated on snapshots after the store returns them.
    var snapshotResidual: StoreFilter?
    /// Whether the descriptor's predicate is evaluated on models after materialising.
    var filtersInMemory: Bool
    /// Whether the context sorts.
    var sortsInMemory: Bool
    /// Whether the context applies offset and limit.
    var windowsInMemory: Bool
    let entity: Schema.Entity

    /// Whether the store does everything, so counts and identifiers can come from it directly.
    var isComplete: Bool { !filtersInMemory && !sortsInMemory && !windowsInMemory && snapshotResidual == nil }

    /// Offset and limit can't be pushed when the context adds or removes results afterwards.
    mutating func keepWindowInMemory() {
        guard !windowsInMemory else { return }
        windowsInMemory = true
        storeDescriptor.fetchLimit = nil
        storeDescriptor.fetchOffset = nil
        query?.offset = 0
        query?.limit = nil
    }

    /// The store asked for in-memory filtering (or sorting, with `keepFilter`): ask it for less.
    mutating func fallBackToMemory(keepFilter: Bool = false) {
        var fallback = FetchDescriptor<T>(predicate: keepFilter ? storeDescriptor.predicate : nil)
        fallback.includePendingChanges = storeDescriptor.includePendingChanges
        if !keepFilter { filtersInMemory = storeDescriptor.predicate != nil || filtersInMemory }
        storeDescriptor = fallback
        sortsInMemory = true
        windowsInMemory = true
    }

    func request(_ descriptor: FetchDescriptor<T>, editingState: EditingState) -> DataStoreFetchRequest<T> {
        DataStoreFetchRequest(descriptor: isQuerying ? descriptor : storeDescriptor, editingState: editingState, query: query)
    }

    func filterSnapshots(_ snapshots: [DefaultSnapshot]) throws -> [DefaultSnapshot] {
        guard let snapshotResidual else { return snapshots }
        let evaluator = try SnapshotEvaluator(filter: snapshotResidual, entity: entity)
        return snapshots.filter(evaluator.matches)
    }

    func modelPredicate(_ descriptor: FetchDescriptor<T>) -> Predicate<T>? {
        filtersInMemory ? descriptor.predicate : nil
    }
}

/// Splits fetches between stores and the context.
enum QueryPlanner {
    static func plan<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, entity: Schema.Entity, store: any DataStore
    ) throws -> QueryPlan<T> {
        let hasWindow = descriptor.fetchLimit != nil || (descriptor.fetchOffset ?? 0) > 0
        guard store.queryCapabilitiesIfAny != nil else {
            // A SwiftData-style store gets the whole descriptor, or throws preferInMemory*.
            return QueryPlan(
                isQuerying: false, query: nil, storeDescriptor: descriptor, snapshotResidual: nil,
                filtersInMemory: false, sortsInMemory: false, windowsInMemory: false, entity: entity)
        }
        let simple = descriptor.predicate == nil && descriptor.sortBy.isEmpty
        let query = StoreQuery(
            entityName: entity.name, filter: nil, sort: [],
            offset: simple ? descriptor.fetchOffset ?? 0 : 0, limit: simple ? descriptor.fetchLimit : nil)
        return QueryPlan(
            isQuerying: true, query: query, storeDescriptor: descriptor, snapshotResidual: nil,
            filtersInMemory: descriptor.predicate != nil, sortsInMemory: !descriptor.sortBy.isEmpty,
            windowsInMemory: !simple && hasWindow, entity: entity)
    }
}
