import Foundation

/// How one fetch is split between the store, the snapshots it returns, and the models.
struct FetchPlan<T: PersistentModel> {
    let entity: Schema.Entity
    /// Whether the store runs store-neutral queries (``DataStoreQuerying``).
    let isQuerying: Bool
    /// The query sent to a querying store.
    var query: StoreQuery?
    /// What a SwiftData-style store is asked for.
    var storeDescriptor: FetchDescriptor<T>
    /// Conditions the context evaluates on the snapshots the store returns: those the store cannot
    /// run, and those it runs inexactly.
    var snapshotFilter: StoreFilter?
    /// The sort the context applies to snapshots, when it translates but the store does not sort.
    var snapshotSort: [StoreSortKey]?
    /// Whether the whole predicate is evaluated on materialised models.
    var filtersModels: Bool
    /// Whether models are sorted with the descriptor's `SortDescriptor`s.
    var sortsModels: Bool
    /// Whether the context applies offset and limit.
    var windowsInMemory: Bool
    /// What happened to each top-level conjunct, for explanations.
    var placements: [ConjunctPlacement]
    /// The translated predicate, for explanations.
    var translation: TranslatedPredicate?
    /// Whether the context's unsaved changes (inserts, changes or deletes) of the entity take part.
    var hasPendingChanges = false
    /// Whether unsaved inserted or changed models of the entity are merged into the result.
    var mergesPendingModels = false
    /// Whether the descriptor sorts.
    var isSorted = false

    /// The stages the fetch runs, in order: the one list that fetch executes and explain prints.
    var stages: [QueryStage] {
        var stages: [QueryStage] = [.store]
        if snapshotFilter != nil || snapshotSort != nil {
            stages.append(.snapshots(filters: snapshotFilter != nil, sorts: snapshotSort != nil))
        }
        let onModels = filtersModels || sortsModels || hasPendingChanges
        if windowsInMemory && !onModels { stages.append(.window(.snapshots)) }
        if onModels {
            stages.append(
                .models(
                    filters: filtersModels, mergesPendingChanges: hasPendingChanges,
                    sorts: sortsModels || (mergesPendingModels && isSorted)))
        }
        if windowsInMemory && onModels { stages.append(.window(.models)) }
        return stages
    }

    /// The models stage, if the fetch has one: the ``QueryStage/models(filters:mergesPendingChanges:sorts:)``
    /// stage of ``stages``, read without building the list.
    var modelsStage: (filters: Bool, mergesPendingChanges: Bool, sorts: Bool)? {
        guard filtersModels || sortsModels || hasPendingChanges else { return nil }
        return (filtersModels, hasPendingChanges, sortsModels || (mergesPendingModels && isSorted))
    }

    /// Where the context applies offset and limit, if it does: the ``QueryStage/window(_:)`` stage
    /// of ``stages``, read without building the list.
    var windowStage: QueryExplanation.Location? {
        guard windowsInMemory else { return nil }
        return filtersModels || sortsModels || hasPendingChanges ? .models : .snapshots
    }

    /// Whether the store does everything, so counts and identifiers can come from it directly.
    var storeDoesEverything: Bool {
        !filtersModels && !sortsModels && !windowsInMemory && snapshotFilter == nil && snapshotSort == nil
    }

    /// Offset and limit can't be pushed when the context adds or removes results afterwards.
    mutating func keepWindowInMemory() {
        guard !windowsInMemory else { return }
        let hasWindow =
            storeDescriptor.fetchLimit != nil || (storeDescriptor.fetchOffset ?? 0) > 0
            || query?.limit != nil || (query?.offset ?? 0) > 0
        guard hasWindow else { return }
        windowsInMemory = true
        storeDescriptor.fetchLimit = nil
        storeDescriptor.fetchOffset = nil
        query?.offset = 0
        query?.limit = nil
    }

    /// The SwiftData-style store asked for in-memory filtering (or sorting, with `keepFilter`): ask it for less.
    mutating func fallBackToMemory(keepFilter: Bool = false) {
        var fallback = FetchDescriptor<T>(predicate: keepFilter ? storeDescriptor.predicate : nil)
        fallback.includePendingChanges = storeDescriptor.includePendingChanges
        if !keepFilter { filtersModels = storeDescriptor.predicate != nil || filtersModels }
        sortsModels = sortsModels || !storeDescriptor.sortBy.isEmpty
        windowsInMemory = windowsInMemory || storeDescriptor.fetchLimit != nil || (storeDescriptor.fetchOffset ?? 0) > 0
        storeDescriptor = fallback
    }

    func request(_ descriptor: FetchDescriptor<T>, editingState: EditingState) -> DataStoreFetchRequest<T> {
        DataStoreFetchRequest(
            descriptor: isQuerying ? descriptor : storeDescriptor, editingState: editingState, query: query)
    }

    /// The snapshots that pass ``snapshotFilter``, sorted by ``snapshotSort``.
    func refine(_ snapshots: [DefaultSnapshot], schema: Schema) throws -> [DefaultSnapshot] {
        var result = snapshots
        if let snapshotFilter {
            let matches = try CompiledFilter(schema: schema, resolve: nil).compile(snapshotFilter, entity: entity)
            result = result.filter(matches)
        }
        if let snapshotSort { try SnapshotOrdering.sort(&result, by: snapshotSort, entity: entity) }
        return result
    }
}

/// Where one conjunct of a predicate runs.
struct ConjunctPlacement {
    enum Place { case store, storeInexact, snapshots, models }
    let index: Int
    let place: Place
    let reason: String?
}

/// Splits fetches between stores and the context.
///
/// The predicate's top-level conjunction is split: each conjunct that translates goes to the store
/// if the store runs its kinds (exactly, or inexactly with a re-check on snapshots), else to the
/// context's `SnapshotEvaluator`; a conjunct that does not translate makes the context evaluate
/// the whole predicate on models. Conjuncts after one that may throw on models stay on models too,
/// so that a fetch fails exactly where the Swift predicate would. SwiftData-style stores receive
/// the descriptor unchanged.
enum QueryPlanner {
    /// What the planner knows about the context's state.
    struct Context {
        /// Whether unsaved changes (inserts, changes or deletes) of the fetched entity take part in the fetch.
        var hasPendingChanges: Bool
        /// Whether unsaved inserted or changed models of the fetched entity are merged into the result.
        var mergesPendingModels: Bool
        /// Entities with unsaved changes that take part in the fetch.
        var pendingEntities: Set<String>
        /// Whether an entity lives in the same store as the fetched one.
        var isInSameStore: (String) -> Bool
    }

    static func plan<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, entity: Schema.Entity, channel: StoreChannel, schema: Schema,
        context: Context
    ) throws -> FetchPlan<T> {
        var plan = try planWithoutContext(
            descriptor, entity: entity, channel: channel, schema: schema, context: context)
        plan.hasPendingChanges = context.hasPendingChanges
        plan.mergesPendingModels = context.mergesPendingModels
        plan.isSorted = !descriptor.sortBy.isEmpty
        return plan
    }

    /// The condition that keeps only models of `type` and its subclasses in its hierarchy's entity;
    /// empty when the fetched type is the entity's root, whose fetch returns every class.
    static func classFilter(_ type: any PersistentModel.Type, entity: Schema.Entity) -> [StoreFilter] {
        guard ObjectIdentifier(type) != ObjectIdentifier(entity.modelType) else { return [] }
        return entity.classFilter(type).map { [$0] } ?? []
    }

    private static func planWithoutContext<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, entity: Schema.Entity, channel: StoreChannel, schema: Schema,
        context: Context
    ) throws -> FetchPlan<T> {
        // Translating checks the predicate for every store: a bad key path fails the same way everywhere.
        let translation = try descriptor.predicate.map { try TranslatedPredicate($0, entity: entity, schema: schema) }
        guard let querying = channel.querying, let capabilities = channel.capabilities else {
            // A SwiftData-style store gets the whole descriptor, or throws preferInMemory*.
            // Such a store reads the root's entity whole: a subclass's models are picked from its snapshots.
            let classFilter = Self.classFilter(T.self, entity: entity)
            var plan = FetchPlan<T>(
                entity: entity, isQuerying: false, query: nil, storeDescriptor: descriptor,
                snapshotFilter: StoreFilter.conjunction(classFilter), snapshotSort: nil, filtersModels: false,
                sortsModels: false, windowsInMemory: false, placements: [], translation: translation)
            if context.hasPendingChanges || !classFilter.isEmpty { plan.keepWindowInMemory() }
            return plan
        }

        var pushed: [StoreFilter] = []
        var onSnapshots: [StoreFilter] = []
        var filtersModels = false
        // Whether a condition goes to the store that the context checks again (on snapshots or models).
        var pushesInexact = false
        var placements: [ConjunctPlacement] = []
        let conjuncts = translation?.conjuncts ?? []
        let firstThrowing = conjuncts.firstIndex { $0.filter == nil && $0.mayThrow } ?? conjuncts.count
        for (index, conjunct) in conjuncts.enumerated() {
            func place(_ where: ConjunctPlacement.Place, _ reason: String? = nil) {
                placements.append(.init(index: index, place: `where`, reason: reason))
            }
            guard let filter = conjunct.filter else {
                filtersModels = true
                place(.models, conjunct.opaqueReason ?? "not translatable to a store filter")
                continue
            }
            if filter == .constant(true) {
                place(.store, "always true")
                continue
            }
            if index > firstThrowing {
                place(.models, "follows a condition that may fail on models, so it must not filter rows first")
                continue
            }
            if !conjunct.reachedEntities.isDisjoint(with: context.pendingEntities) {
                filtersModels = true
                place(.models, "reads related models with unsaved changes")
                continue
            }
            if filter.traversesRelationships, !conjunct.reachedEntities.allSatisfy(context.isInSameStore) {
                filtersModels = true
                place(.models, "reads related models held by another store")
                continue
            }
            // The store's own answer is the split: it receives exactly what it said it runs.
            let missing = filter.kinds.subtracting(capabilities.filters)
            switch querying.pushDown(filter, entityName: entity.name) {
            case .exact:
                pushed.append(filter)
                place(.store)
            case .inexact:
                pushed.append(filter)
                pushesInexact = true
                if filter.traversesRelationships {
                    // Re-checking it needs related models: the whole predicate runs on models.
                    filtersModels = true
                } else {
                    onSnapshots.append(filter)
                }
                place(.storeInexact, "the store runs \(missing.isEmpty ? "this condition" : "\(missing)") inexactly")
            case .unsupported:
                let what = missing.isEmpty ? "this condition on these properties and operands" : "\(missing)"
                if !filter.traversesRelationships {
                    onSnapshots.append(filter)
                    place(.snapshots, "the store does not run \(what)")
                } else {
                    filtersModels = true
                    place(.models, "the store does not run \(what) through relationships")
                }
            }
        }

        // A fetch of a subclass reads its hierarchy's entity, restricted to the class and its subclasses.
        let classFilter = Self.classFilter(T.self, entity: entity)
        var query = StoreQuery(entityName: entity.name, filter: StoreFilter.conjunction(classFilter + pushed))
        // The store may then return what its native query selects for those conditions.
        query.allowsInexactMatches = pushesInexact
        let snapshotFilter = StoreFilter.conjunction(onSnapshots)
        var snapshotSort: [StoreSortKey]?
        var sortsModels = false
        if !descriptor.sortBy.isEmpty {
            if let keys = SortTranslation.keys(descriptor.sortBy, entity: entity) {
                // A NaN ties with every number, so a floating-point sort is not a strict order and
                // sorting does not commute with filtering: it must follow every filter, as on models.
                let floating = keys.contains { key in
                    switch entity.attribute(named: key.property)?.valueType.unwrapped {
                    case .double?, .float?: true
                    default: false
                    }
                }
                let filteredLater = snapshotFilter != nil || filtersModels
                let storeSorts =
                    capabilities.sorting && querying.sortsExactly(by: keys, entityName: entity.name)
                if storeSorts && !(floating && filteredLater) {
                    query.sort = keys
                } else if floating && filtersModels {
                    sortsModels = true
                } else {
                    snapshotSort = keys
                }
            } else {
                sortsModels = true
            }
        }
        let offset = descriptor.fetchOffset ?? 0
        let hasWindow = descriptor.fetchLimit != nil || offset > 0
        var windowsInMemory = false
        if hasWindow {
            let nothingLeft = snapshotFilter == nil && !filtersModels && !sortsModels && snapshotSort == nil
            if capabilities.offsetAndLimit && nothingLeft && !context.hasPendingChanges {
                query.offset = offset
                query.limit = descriptor.fetchLimit
            } else {
                windowsInMemory = true
            }
        }
        return FetchPlan(
            entity: entity, isQuerying: true, query: query, storeDescriptor: descriptor, snapshotFilter: snapshotFilter,
            snapshotSort: snapshotSort, filtersModels: filtersModels, sortsModels: sortsModels,
            windowsInMemory: windowsInMemory, placements: placements, translation: translation)
    }
}
