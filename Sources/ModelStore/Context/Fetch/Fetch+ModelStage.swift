import Foundation

// Fetch, step 5: what only models can answer, and this context's unsaved changes.
extension ModelContext {
    /// What only models can answer: conditions that do not translate, the unsaved changes of this
    /// context (pending inserts added, changed models re-checked, deleted ones dropped), a sort on
    /// models, and the window when it comes last.
    @inline(__always)
    func modelStage<T: PersistentModel>(
        _ models: [T], _ descriptor: FetchDescriptor<T>, plan: FetchPlan<T>, pending: [T]
    ) throws -> [T] {
        let modelsStage = plan.modelsStage
        // Only a registered model can be deleted: a context without pending deletions has none to drop.
        let dropsDeleted = descriptor.includePendingChanges && !deletedModels.isEmpty
        // Without a models stage (so no pending model of the entity, and no window on models),
        // only deletions could change the result.
        if modelsStage == nil && !dropsDeleted && pending.count == 0 { return models }
        var models = models
        if dropsDeleted {
            models.removeAll { $0.persistentBackingData.state == .deleted }
        }
        if modelsStage?.filters == true, let predicate = descriptor.predicate {
            models = try models.filter { model in
                // Without pending changes, a changed model is judged by its saved values.
                if !descriptor.includePendingChanges, model.persistentBackingData.isChanged,
                    let saved = model.persistentBackingData.savedValues(of: model, layout: storageLayout(of: model))
                {
                    return try evaluate(predicate, scratchModel(of: T.self, values: saved), reporting: model)
                }
                return try evaluate(predicate, model)
            }
        }
        if pending.count != 0 && descriptor.sortBy.count != 0 {
            // Everything is sorted again below, from the order a fetch without a store sort starts
            // from (identifier order), so that ties with NaN fall the same way whatever the store did.
            models = models.map { ($0, $0.persistentModelID) }.sorted { $0.1 < $1.1 }.map(\.0)
        }
        if pending.count != 0, let predicate = descriptor.predicate {
            // Changed models are re-checked against their current values; inserted ones are added.
            let returned = Set(models.map { ObjectIdentifier($0) })
            models = try models.filter { model in
                guard model.persistentBackingData.isChanged else { return true }
                return try evaluate(predicate, model)
            }
            for model in pending where !returned.contains(ObjectIdentifier(model)) {
                if try evaluate(predicate, model) { models.append(model) }
            }
        } else if pending.count != 0 {
            let returned = Set(models.map { ObjectIdentifier($0) })
            models.append(contentsOf: pending.filter { !returned.contains(ObjectIdentifier($0)) })
        }
        if modelsStage?.sorts == true {
            Self.sort(&models, by: descriptor.sortBy)
        }
        if plan.windowStage == .models {
            models = SnapshotOrdering.window(models, offset: descriptor.fetchOffset ?? 0, limit: descriptor.fetchLimit)
        }
        return models
    }

    /// `Predicate.evaluate`, with a failure reported as ``DataStoreError/invalidPredicate`` naming the
    /// part of the predicate that failed and the model (`reporting`, when evaluating a stand-in).
    func evaluate<T: PersistentModel>(_ predicate: Predicate<T>, _ model: T, reporting: T? = nil) throws -> Bool {
        do {
            return try predicate.evaluate(model)
        } catch {
            throw PredicateDiagnosis.error(
                for: predicate, input: model, id: (reporting ?? model).persistentModelID, schema: container.schema,
                underlying: error)
        }
    }

    /// Sorts models by descriptors, breaking ties by identifier so every store yields one order.
    static func sort<T: PersistentModel>(_ models: inout [T], by descriptors: [SortDescriptor<T>]) {
        let keyed = models.map { ($0, $0.persistentModelID) }
        let sorted = keyed.sorted { lhs, rhs in
            for descriptor in descriptors {
                switch descriptor.compare(lhs.0, rhs.0) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return lhs.1 < rhs.1
        }
        models = sorted.map(\.0)
    }

    /// An unregistered model holding stored values, for evaluating predicates against saved state.
    func scratchModel<T: PersistentModel>(of type: T.Type, values: [StoreValue]) throws -> T {
        let entity = try entity(of: T.self)
        guard let layout = entity.layout(forValues: values), let model = layout.modelType.init() as? T else {
            throw Self.unknownClass(in: values, of: entity)
        }
        try layout.apply(values, to: model)
        model.persistentBackingData.membership = membership
        return model
    }
}
