import Foundation

// Fetch, step 1: the plan splits a descriptor between the store, the snapshots and the models.
extension ModelContext {
    /// The plan of a fetch given this context's pending changes.
    ///
    /// With `cache`, a fetch without unsaved changes taking part reuses the plan kept for its
    /// descriptor's shape, or keeps the one it makes (see ``FetchPlanCache``). Every caller says
    /// which: a fetch passes the container's cache, and only `explain` passes `nil` (a kept plan
    /// holds no translation to print).
    func plan<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, entity: Schema.Entity, channel: StoreChannel, hasPending: Bool,
        mergesPending: Bool, reusing cache: FetchPlanCache?
    ) throws -> FetchPlan<T> {
        var pendingEntities: Set<String> = []
        if descriptor.includePendingChanges {
            // One list after another: joining them would make a new list on every fetch.
            for model in insertedModels.models { pendingEntities.insert(model.persistentModelID.entityName) }
            for model in changedModels.models { pendingEntities.insert(model.persistentModelID.entityName) }
            for model in deletedModels.models { pendingEntities.insert(model.persistentModelID.entityName) }
        }
        guard let cache, !hasPending, pendingEntities.isEmpty, let key = FetchPlanCache.key(descriptor) else {
            return try plan(
                descriptor, entity: entity, channel: channel, pendingEntities: pendingEntities,
                hasPending: hasPending, mergesPending: mergesPending)
        }
        if var kept = cache.plan(key, descriptor: descriptor, entity: entity) {
            kept.isSorted = descriptor.sortBy.count != 0
            return kept
        }
        let plan = try plan(
            descriptor, entity: entity, channel: channel, pendingEntities: pendingEntities,
            hasPending: hasPending, mergesPending: mergesPending)
        cache.keep(plan, key: key)
        return plan
    }

    private func plan<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, entity: Schema.Entity, channel: StoreChannel, pendingEntities: Set<String>,
        hasPending: Bool, mergesPending: Bool
    ) throws -> FetchPlan<T> {
        let container = self.container
        let context = QueryPlanner.Context(
            hasPendingChanges: hasPending, mergesPendingModels: mergesPending, pendingEntities: pendingEntities,
            isInSameStore: { name in (try? container.channel(for: name)) === channel })
        return try QueryPlanner.plan(
            descriptor, entity: entity, channel: channel, schema: container.schema, context: context)
    }
}
