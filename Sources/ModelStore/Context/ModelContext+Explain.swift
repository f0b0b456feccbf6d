import Foundation

extension ModelContext {
    /// What a fetch of this descriptor would run where: in the store, on snapshots, or on models,
    /// and which index the store would use. Runs nothing and changes nothing.
    ///
    /// The plan depends on the context's unsaved changes as a fetch's does. See
    /// ``QueryExplanation`` for how to read the result. Throws what the fetch would throw before
    /// reading anything (``DataStoreError/invalidPredicate`` for a key path that is not stored).
    public func explain<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> QueryExplanation {
        let entity = try entity(of: T.self)
        let entityName = entity.name
        let channel = try container.channel(for: entityName)
        let pending = descriptor.includePendingChanges ? pendingModels(of: T.self) : []
        let hasPending = !pending.isEmpty || (descriptor.includePendingChanges && hasDeletions(of: entityName))
        // Planned afresh, not from the kept plans: the explanation prints the predicate's translation.
        let plan = try plan(
            descriptor, entity: entity, channel: channel, hasPending: hasPending, mergesPending: !pending.isEmpty,
            reusing: nil)
        let stages = plan.stages
        let storeIndex = container.channels.firstIndex { $0 === channel }
        let capabilities = channel.capabilities

        var renderer = PredicateRenderer(schema: container.schema)
        var conditions: [QueryExplanation.Condition] = []
        var notes: [String] = []
        if let translation = plan.translation {
            _ = renderer.name(of: translation.variable)
            for (index, conjunct) in translation.conjuncts.enumerated() {
                let expression = renderer.render(conjunct.expression)
                if capabilities == nil {
                    conditions.append(
                        .init(
                            expression: expression, filter: conjunct.filter, location: .store, isInexact: false,
                            reason: "in the descriptor; evaluated on models if the store throws preferInMemoryFilter"))
                    continue
                }
                let placement = plan.placements.first { $0.index == index }
                let location: QueryExplanation.Location =
                    switch placement?.place {
                    case .store?, .storeInexact?: .store
                    case .snapshots?: .snapshots
                    case .models?, nil: .models
                    }
                conditions.append(
                    .init(
                        expression: expression, filter: conjunct.filter, location: location,
                        isInexact: placement?.place == .storeInexact, reason: placement?.reason))
            }
        }

        let sortLocation: QueryExplanation.Location
        var sortKeys: [StoreSortKey]?
        if descriptor.sortBy.isEmpty {
            sortLocation = .none
        } else if capabilities == nil {
            sortLocation = .store
            notes.append("the store gets the SortDescriptors; if it throws preferInMemorySort the context sorts models")
        } else if plan.sortsModels {
            sortLocation = .models
        } else if let keys = plan.snapshotSort {
            sortLocation = .snapshots
            sortKeys = keys
        } else {
            sortLocation = .store
            sortKeys = plan.query?.sort
        }
        if !pending.isEmpty && !descriptor.sortBy.isEmpty {
            notes.append("unsaved changes of '\(entityName)' are merged in, so the context sorts the models again")
        }

        let hasWindow = descriptor.fetchLimit != nil || (descriptor.fetchOffset ?? 0) > 0
        let windowLocation: QueryExplanation.Location
        if stages.contains(.window(.models)) {
            windowLocation = .models
        } else if stages.contains(.window(.snapshots)) {
            windowLocation = .snapshots
        } else {
            windowLocation = hasWindow ? .store : .none
        }
        if hasPending {
            notes.append("the context has unsaved changes of '\(entityName)'; they are part of the result")
        }
        if capabilities == nil {
            notes.append("SwiftData-style store: it runs the descriptor, or asks for in-memory filtering or sorting")
        }

        return QueryExplanation(
            entityName: entityName,
            storeName: storeIndex.map { container.configurations[$0].name } ?? "?",
            storeType: String(describing: type(of: channel.store)),
            capabilities: capabilities,
            storeQuery: plan.query,
            accessPath: plan.query.flatMap { channel.accessPath(for: $0) },
            conditions: conditions,
            snapshotFilter: plan.snapshotFilter,
            evaluatesPredicateOnModels: plan.filtersModels,
            sortLocation: sortLocation,
            sortKeys: sortKeys,
            windowLocation: windowLocation,
            notes: notes,
            stages: stages)
    }
}

extension ModelContainer {
    /// What a fetch of this descriptor would run where, for a context with no unsaved changes.
    ///
    /// The same as ``ModelContext/explain(_:)`` on a fresh context; see ``QueryExplanation``.
    public func explain<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> QueryExplanation {
        try ModelContext(self).explain(descriptor)
    }
}
