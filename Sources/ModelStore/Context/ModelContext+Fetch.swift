import Foundation

extension ModelContext {
    /// The models that match a descriptor, in its order.
    ///
    /// The predicate and sort run in the store as far as the store can run them; the context
    /// evaluates the rest in memory, then applies offset and limit. With
    /// ``FetchDescriptor/includePendingChanges`` (the default), unsaved inserts, changes and
    /// deletes of this context are reflected.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        if automaticallyMergesChanges { mergePendingChanges() }
        return try execute(descriptor).models
    }

    /// How many models match a descriptor (after offset and limit), without materialising them
    /// when the store can count.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        try execute(descriptor, countOnly: true).count
    }

    /// The identifiers of the models that match a descriptor, in its order.
    public func fetchIdentifiers<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>
    ) throws -> [PersistentIdentifier] {
        try execute(descriptor, identifiersOnly: true).identifiers
    }

    /// Calls `block` with each matching model, loading `batchSize` models at a time and releasing
    /// each batch before the next, so the whole result is never in memory at once.
    ///
    /// Models the block changes or keeps a reference to stay registered (so a later change to one
    /// is saved); the others are released.
    public func enumerate<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int = 5000, allowEscapingMutations: Bool = false,
        block: (T) throws -> Void
    ) throws {
        let ids = try fetchIdentifiers(descriptor)
        let size = max(batchSize, 1)
        var start = 0
        while start < ids.count {
            let chunk = Array(ids[start..<min(start + size, ids.count)])
            start += size
            let before = Set(chunk.filter { registry[$0] != nil })
            let loaded = try loadModels(chunk, as: T.self).map(\.persistentModelID).filter { !before.contains($0) }
            for id in chunk {
                guard let model = registry[id] as? T else { continue }
                try block(model)
            }
            releaseUnreferenced(loaded)
        }
    }

    // MARK: Execution

    struct FetchOutput<T> {
        var models: [T] = []
        var identifiers: [PersistentIdentifier] = []
        var count = 0
    }

    func execute<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, countOnly: Bool = false, identifiersOnly: Bool = false
    ) throws -> FetchOutput<T> {
        guard DebugLog.level > 0 else {
            return try executeQuery(descriptor, countOnly: countOnly, identifiersOnly: identifiersOnly)
        }
        let start = ContinuousClock.now
        let kind = countOnly ? "fetchCount" : identifiersOnly ? "fetchIdentifiers" : "fetch"
        if DebugLog.level >= 2, let plan = try? explain(descriptor) {
            DebugLog.write(2, "\(kind) \(T.self) plan:\n\(plan)")
        }
        do {
            let output = try executeQuery(descriptor, countOnly: countOnly, identifiersOnly: identifiersOnly)
            let count = countOnly ? output.count : identifiersOnly ? output.identifiers.count : output.models.count
            DebugLog.write(1, "\(kind) \(T.self): \(count) in \(DebugLog.milliseconds(since: start))")
            return output
        } catch {
            DebugLog.write(1, "\(kind) \(T.self) failed after \(DebugLog.milliseconds(since: start)): \(error)")
            throw error
        }
    }

    private func executeQuery<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, countOnly: Bool, identifiersOnly: Bool
    ) throws -> FetchOutput<T> {
        let entity = try entity(of: T.self)
        let entityName = entity.name
        let store = try container.store(for: entityName)
        let pending = descriptor.includePendingChanges ? pendingModels(of: T.self) : []
        let hasPending = !pending.isEmpty || (descriptor.includePendingChanges && hasDeletions(of: entityName))
        var plan = try plan(
            descriptor, entity: entity, store: store, hasPending: hasPending, mergesPending: !pending.isEmpty,
            reusing: container.fetchPlans)

        // The store does all of it: count and identifiers need no snapshots or models.
        if plan.storeDoesEverything && !hasPending && (countOnly || identifiersOnly) {
            let request = plan.request(descriptor, editingState: editingState)
            do {
                if countOnly { return FetchOutput(count: try store.fetchCount(request)) }
                let ids = try store.fetchIdentifiers(request)
                return FetchOutput(identifiers: ids, count: ids.count)
            } catch DataStoreError.preferInMemoryFilter, DataStoreError.preferInMemorySort {
                // A SwiftData-style store: take the general path, which falls back to memory.
            }
        }

        // Fewer properties only when the store runs the whole query: nothing after it reads the others.
        let unfetched =
            countOnly || identifiersOnly || hasPending || !plan.storeDoesEverything || plan.query == nil
            ? nil : Self.unfetchedSlots(descriptor.propertiesToFetch, entity: entity)
        if let unfetched {
            plan.query?.propertiesToFetch = entity.attributes.filter { !unfetched.contains($0.slot) }.map(\.name)
        }
        var (snapshots, omitted) = try fetchSnapshots(descriptor, plan: &plan, store: store)
        for snapshot in snapshots where snapshot.entity.name != entityName {
            throw DataStoreError(
                .corrupted, "the store returned a '\(snapshot.entity.name)' snapshot for a fetch of '\(entityName)'",
                remedy: "Fix the adapter: fetch must return only snapshots of the requested entity",
                entityName: entityName)
        }
        // What the store could not run, and re-checks of what it ran inexactly, run on snapshots,
        // before any model exists.
        snapshots = try plan.refine(snapshots, schema: container.schema)

        // Without a models stage the snapshots are the result: window them, and count or list
        // identifiers without creating models.
        let stages = plan.stages
        let modelsStage = plan.modelsStage
        if stages.contains(.window(.snapshots)) {
            snapshots = SnapshotOrdering.window(
                snapshots, offset: descriptor.fetchOffset ?? 0, limit: descriptor.fetchLimit)
        }
        if (countOnly || identifiersOnly) && modelsStage == nil {
            let ids = identifiersOnly ? snapshots.map(\.persistentIdentifier) : []
            return FetchOutput(identifiers: ids, count: snapshots.count)
        }

        // Counting and listing identifiers must not leave models behind: release the ones loaded only for this.
        let transient =
            (countOnly || identifiersOnly)
            ? snapshots.map(\.persistentIdentifier).filter { registry[$0] == nil } : []
        defer { releaseUnchanged(transient) }
        var models = try materialize(snapshots, as: T.self, unfetched: omitted ? unfetched : nil)
        // Only a registered model can be deleted: a context without pending deletions has none to drop.
        if descriptor.includePendingChanges, !deletedModels.isEmpty {
            models.removeAll { $0.persistentBackingData.state == .deleted }
        }
        if modelsStage?.filters == true, let predicate = descriptor.predicate {
            models = try models.filter { model in
                // Without pending changes, a changed model is judged by its saved values.
                if !descriptor.includePendingChanges, model.persistentBackingData.isChanged,
                    let saved = model.persistentBackingData.savedValues
                {
                    return try evaluate(predicate, scratchModel(of: T.self, values: saved), reporting: model)
                }
                return try evaluate(predicate, model)
            }
        }
        if !pending.isEmpty && !descriptor.sortBy.isEmpty {
            // Everything is sorted again below, from the order a fetch without a store sort starts
            // from (identifier order), so that ties with NaN fall the same way whatever the store did.
            models = models.map { ($0, $0.persistentModelID) }.sorted { $0.1 < $1.1 }.map(\.0)
        }
        if !pending.isEmpty, let predicate = descriptor.predicate {
            // Changed models are re-checked against their current values; inserted ones are added.
            let returned = Set(models.map { ObjectIdentifier($0) })
            models = try models.filter { model in
                guard model.persistentBackingData.isChanged else { return true }
                return try evaluate(predicate, model)
            }
            for model in pending where !returned.contains(ObjectIdentifier(model)) {
                if try evaluate(predicate, model) { models.append(model) }
            }
        } else if !pending.isEmpty {
            let returned = Set(models.map { ObjectIdentifier($0) })
            models.append(contentsOf: pending.filter { !returned.contains(ObjectIdentifier($0)) })
        }
        if modelsStage?.sorts == true {
            Self.sort(&models, by: descriptor.sortBy)
        }
        if stages.contains(.window(.models)) {
            models = SnapshotOrdering.window(models, offset: descriptor.fetchOffset ?? 0, limit: descriptor.fetchLimit)
        }
        if !countOnly && !identifiersOnly { try prefetchRelationships(of: models, for: descriptor) }
        let ids = identifiersOnly ? models.map(\.persistentModelID) : []
        return FetchOutput(models: models, identifiers: ids, count: models.count)
    }

    /// The plan of a fetch given this context's pending changes.
    ///
    /// With `cache`, a fetch without unsaved changes taking part reuses the plan kept for its
    /// descriptor's shape, or keeps the one it makes (see ``FetchPlanCache``).
    func plan<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, entity: Schema.Entity, store: any DataStore, hasPending: Bool,
        mergesPending: Bool, reusing cache: FetchPlanCache? = nil
    ) throws -> FetchPlan<T> {
        var pendingEntities: Set<String> = []
        if descriptor.includePendingChanges {
            // One list after another: joining them would make a new list on every fetch.
            for model in insertedModels.models { pendingEntities.insert(model.persistentModelID.entityName) }
            for model in changedModels.models { pendingEntities.insert(model.persistentModelID.entityName) }
            for model in deletedModels.models { pendingEntities.insert(model.persistentModelID.entityName) }
        }
        let keyed = cache != nil && !hasPending && pendingEntities.isEmpty ? FetchPlanCache.key(descriptor) : nil
        if let cache, let (key, shape) = keyed {
            if let kept = cache.plan(key, shape: shape, descriptor: descriptor, entity: entity) {
                var plan = kept
                plan.isSorted = !descriptor.sortBy.isEmpty
                return plan
            }
        }
        let plan = try plan(
            descriptor, entity: entity, store: store, pendingEntities: pendingEntities,
            hasPending: hasPending, mergesPending: mergesPending)
        if let cache, let (key, shape) = keyed { cache.keep(plan, key: key, shape: shape) }
        return plan
    }

    private func plan<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, entity: Schema.Entity, store: any DataStore, pendingEntities: Set<String>,
        hasPending: Bool, mergesPending: Bool
    ) throws -> FetchPlan<T> {
        let container = self.container
        let context = QueryPlanner.Context(
            hasPendingChanges: hasPending, mergesPendingModels: mergesPending, pendingEntities: pendingEntities,
            isInSameStore: { name in (try? container.store(for: name)) === store })
        return try QueryPlanner.plan(
            descriptor, entity: entity, store: store, schema: container.schema, context: context)
    }

    /// The snapshots the store returns for a plan; a SwiftData-style store that asks for in-memory
    /// filtering or sorting is asked again for less, and the plan records what is left to do.
    ///
    /// Also returns whether the store left out the attributes the query's `propertiesToFetch` does
    /// not name (see ``DataStoreFetchResult/omitsUnrequestedProperties``).
    private func fetchSnapshots<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, plan: inout FetchPlan<T>, store: any DataStore
    ) throws -> (snapshots: [DefaultSnapshot], omitsUnrequested: Bool) {
        func fetch() throws -> (snapshots: [DefaultSnapshot], omitsUnrequested: Bool) {
            let result = try store.fetchErased(plan.request(descriptor, editingState: editingState))
            return (result.snapshots, result.omitsUnrequested)
        }
        do {
            return try fetch()
        } catch DataStoreError.preferInMemoryFilter {
            plan.fallBackToMemory()
            return try fetch()
        } catch DataStoreError.preferInMemorySort {
            plan.fallBackToMemory(keepFilter: true)
            do {
                return try fetch()
            } catch DataStoreError.preferInMemoryFilter {
                plan.fallBackToMemory()
                return try fetch()
            }
        }
    }

    /// The slots of the attributes `propertiesToFetch` leaves out, or `nil` when it leaves none out
    /// (it is empty, or names every attribute). Relationships are always fetched.
    static func unfetchedSlots<T>(
        _ propertiesToFetch: [any PartialKeyPath<T> & Sendable], entity: Schema.Entity
    ) -> [Int]? {
        // A hierarchy's models load whole: the class of each decides which slots are its own.
        guard !propertiesToFetch.isEmpty, entity.classAttribute == nil else { return nil }
        let named = Set(propertiesToFetch.compactMap { entity.propertyName(for: $0) })
        let slots = entity.attributes.filter { !named.contains($0.name) }.map(\.slot)
        return slots.isEmpty ? nil : slots
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

    /// Unregisters the models with these identifiers that have no unsaved changes.
    func releaseUnchanged(_ ids: [PersistentIdentifier]) {
        for id in ids {
            guard let model = registry[id], !model.hasChanges else { continue }
            registry[id] = nil
            model.persistentBackingData.state = .detached
            model.persistentBackingData.membership = containerMembership
        }
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

    /// The entity of a model type, found through its cached layout (naming a type is slow).
    @usableFromInline
    func entity<T: PersistentModel>(of type: T.Type) throws -> Schema.Entity {
        let entity = try entity(named: ModelLayout.of(T.self)?.entityName ?? Schema.entityName(for: T.self))
        try Self.check(T.self, is: entity)
        return entity
    }

    /// Throws unless `type` is the model type the container's schema has for `entity`: another
    /// type of the same name (a model of another schema version, say) would read and write the
    /// entity's values in the wrong places.
    static func check(_ type: any PersistentModel.Type, is entity: Schema.Entity) throws {
        guard ObjectIdentifier(type) != ObjectIdentifier(entity.modelType) else { return }
        if entity.classAttribute != nil
            || ObjectIdentifier(Schema.rootType(of: type)) == ObjectIdentifier(entity.modelType)
        {
            if entity.layout(for: type) != nil { return }
            throw DataStoreError(
                .notFound,
                "'\(String(reflecting: type))' is a subclass of '\(String(reflecting: entity.modelType))' that the container's schema does not list",
                remedy:
                    "Add \(Schema.className(for: type)).self to the model types of the container's schema; a schema cannot find subclasses by itself",
                entityName: entity.name)
        }
        throw DataStoreError(
            .notFound,
            "'\(String(reflecting: type))' is not the container's model type for the entity '\(entity.name)' "
                + "('\(String(reflecting: entity.modelType))'): two model types share the entity name",
            remedy:
                "Use the model type of the container's schema; in a migration stage, the types of the stage's "
                + "own schema version (the old one in willMigrate, the new one in didMigrate)",
            entityName: entity.name)
    }

    func entity(named name: String) throws -> Schema.Entity {
        guard let entity = container.schema.entity(named: name) else {
            throw DataStoreError(.notFound, "the container's schema has no entity '\(name)'", entityName: name)
        }
        return entity
    }

    /// Inserted and changed models of a type (the pending changes a fetch must see).
    func pendingModels<T: PersistentModel>(of type: T.Type) -> [T] {
        var result: [T] = []
        for model in insertedModels.models { if let model = model as? T { result.append(model) } }
        for model in changedModels.models {
            if let model = model as? T, model.persistentBackingData.state == .registered { result.append(model) }
        }
        return result
    }

    func hasDeletions(of entityName: String) -> Bool {
        deletedModels.models.contains { $0.persistentModelID.entityName == entityName }
    }

    // MARK: Materialising

    /// Models for snapshots: the registered object for an identifier if there is one (refreshed
    /// unless it has unsaved changes), else a new model registered in this context.
    ///
    /// With `unfetched`, the snapshots hold default values in those attribute slots (the store read
    /// only the others): a new model leaves them unloaded until one is read (see
    /// ``BackingData/loadUnfetchedValues(of:)``), and a registered one takes the fetched values only.
    func materialize<T: PersistentModel>(
        _ snapshots: [DefaultSnapshot], as type: T.Type, unfetched: [Int]? = nil
    ) throws -> [T] {
        if let first = snapshots.first, first.entity.classAttribute != nil {
            return try materializeClasses(snapshots, as: type, entity: first.entity)
        }
        guard let layout = ModelLayout.of(T.self) else { return [] }
        var models: [T] = []
        models.reserveCapacity(snapshots.count)
        if snapshots.count > 64 { registry.reserveCapacity(snapshots.count, like: snapshots[0].persistentIdentifier) }
        // Into a context that has nothing registered (a fresh context's first fetch) every model is
        // new: each is registered in one hash step, without a look-up before it.
        let everyModelIsNew = registry.count == 0
        let (membership, tracksUndo) = (membership, undoManager != nil)
        // By index, reading only the fields each model needs: a copy of each snapshot (`for snapshot
        // in snapshots`) would retain and release its entity and its values once more per model.
        for index in snapshots.indices {
            let id = snapshots[index].persistentIdentifier
            if !everyModelIsNew, let existing = registry[id] {
                guard let typed = existing as? T else {
                    throw DataStoreError(
                        .corrupted, "\(id) is registered as a '\(Swift.type(of: existing))', not a '\(T.self)'")
                }
                let backing = typed.persistentBackingData
                if let unfetched {
                    if backing.state == .registered && !backing.isChanged {
                        try Self.refresh(typed, layout: layout, from: snapshots[index], unfetched: unfetched)
                    }
                } else if backing.state == .registered && !backing.isChanged
                    && !Self.isStored(snapshots[index].values, as: backing.savedValues)
                {
                    try layout.reload(snapshots[index].values, into: typed)
                    backing.savedValues = snapshots[index].values
                }
                models.append(typed)
                continue
            }
            let model = T()
            let values = snapshots[index].values
            try layout.apply(values, to: model)
            let backing = model.persistentBackingData
            Self.adopt(backing, id: id, values: values, membership: membership, tracksUndo: tracksUndo)
            backing.unfetchedSlots = unfetched
            if let earlier = registry.updateValue(model, forKey: id) {
                // Only when a store returns one identifier twice: keep the object registered first.
                registry[id] = earlier
                guard let typed = earlier as? T else { continue }
                models.append(typed)
                continue
            }
            models.append(model)
        }
        return models
    }

    /// Refreshes a registered, unchanged model from a snapshot that holds only some attributes:
    /// when a fetched value differs from the saved one, the fetched values are loaded and the
    /// others become unloaded, so that they are read again, current, when first accessed.
    private static func refresh(
        _ model: some PersistentModel, layout: ModelLayout, from snapshot: DefaultSnapshot, unfetched: [Int]
    ) throws {
        let backing = model.persistentBackingData
        guard var saved = backing.savedValues, saved.count == snapshot.values.count else { return }
        let skipped = Set(unfetched).union(backing.unfetchedSlots ?? [])
        let changed = snapshot.values.indices.filter {
            !skipped.contains($0) && !snapshot.values[$0].isIdentical(to: saved[$0])
        }
        guard !changed.isEmpty else { return }
        defer { backing.storedValuesDidChange() }
        for slot in snapshot.values.indices where !skipped.contains(slot) {
            try layout.fields[slot].load(snapshot.values[slot], into: model)
            saved[slot] = snapshot.values[slot]
        }
        backing.savedValues = saved
        backing.unfetchedSlots = skipped.sorted()
    }

    /// Whether `saved` holds exactly the stored values `values` (bit for bit, not by `==`).
    static func isStored(_ values: [StoreValue], as saved: [StoreValue]?) -> Bool {
        guard let saved, saved.count == values.count else { return false }
        return zip(values, saved).allSatisfy { $0.isIdentical(to: $1) }
    }

    /// The models with these identifiers, in the same order; identifiers the store lacks are left out.
    func loadModels<T: PersistentModel>(_ ids: [PersistentIdentifier], as type: T.Type) throws -> [T] {
        let missing = ids.filter { registry[$0] == nil && !$0.isTemporary }
        if !missing.isEmpty {
            let entityName = Schema.entityName(for: T.self)
            let store = try container.store(for: entityName)
            var found = try store.cachedErased(missing, editingState: editingState)
            let stillMissing = missing.filter { found[$0] == nil }
            if !stillMissing.isEmpty {
                let idSet = Set(stillMissing)
                var descriptor = FetchDescriptor<T>(predicate: #Predicate<T> { idSet.contains($0.persistentModelID) })
                descriptor.includePendingChanges = false
                // A querying store gets the identifiers if it runs them; otherwise the context picks them out.
                let query = store.queryCapabilitiesIfAny.map { capabilities in
                    StoreQuery(
                        entityName: entityName,
                        filter: capabilities.filters.contains(.identifiers) ? .identifiers(idSet) : nil)
                }
                var snapshots: [DefaultSnapshot]
                do {
                    snapshots = try store.fetchErased(
                        DataStoreFetchRequest(descriptor: descriptor, editingState: editingState, query: query)
                    ).snapshots
                    if query != nil && query?.filter == nil {
                        snapshots = snapshots.filter { idSet.contains($0.persistentIdentifier) }
                    }
                } catch DataStoreError.preferInMemoryFilter {
                    snapshots = try store.fetchErased(
                        DataStoreFetchRequest(descriptor: FetchDescriptor<T>(), editingState: editingState)
                    ).snapshots
                    snapshots = snapshots.filter { idSet.contains($0.persistentIdentifier) }
                }
                for snapshot in snapshots where snapshot.entity.name == entityName {
                    found[snapshot.persistentIdentifier] = snapshot
                }
            }
            _ = try materialize(missing.compactMap { found[$0] }, as: T.self)
        }
        return ids.compactMap { registry[$0] as? T }
    }

}

// MARK: - Relationship faults

/// A relationship of one model object, as a key for the relationship loads that failed.
struct FaultKey: Hashable {
    let model: ObjectIdentifier
    let property: String
}

extension ModelContext {
    /// Loads the models a relationship fault of `owner` refers to, through the owner's context, or
    /// when that context is gone, through a new context on the container the owner came from.
    ///
    /// A model outliving its context keeps reading its relationships this way; the related models it
    /// loads belong to no context that outlives the read, like the owner itself. A model that
    /// outlived its container too stops the program: an empty answer would be wrong.
    static func loadRelated<D: PersistentModel>(
        _ fault: StoreValue, as type: D.Type, of owner: some PersistentModel
    ) throws -> [D] {
        let backing = owner.persistentBackingData
        if let context = backing.context {
            return try context.loadModels(fault.referencedIdentifiers, as: D.self)
        }
        guard let container = backing.container else {
            // Reading on would show an empty relationship that is not empty in the store.
            preconditionFailure(
                "ModelStore: \(owner.persistentModelID) was read after its context and its container were released, "
                    + "so its relationships cannot be loaded. Keep the container (or a context) alive while you use its models."
            )
        }
        return try ModelContext(container).loadModels(fault.referencedIdentifiers, as: D.self)
    }

    /// Records that a relationship of `owner` failed to load, so the next save of its context throws.
    static func faultDidFail(_ owner: some PersistentModel, property: String, error: any Error) {
        let entity = owner.persistentModelID.entityName
        let cause = (error as? DataStoreError)?.message ?? String(describing: error)
        let failure = DataStoreError(
            (error as? DataStoreError)?.code ?? .io,
            "loading the relationship '\(entity).\(property)' of \(owner.persistentModelID) failed: \(cause)",
            remedy: "Read the relationship again once the store answers, or roll back; the stored references are kept",
            entityName: entity, propertyNames: [property])
        guard let context = owner.persistentBackingData.context else {
            // No context will save this model; say so where someone can see it.
            FileHandle.standardError.write(Data("ModelStore: \(failure)\n".utf8))
            return
        }
        context.faultFailures[FaultKey(model: ObjectIdentifier(owner), property: property)] = failure
    }

    /// Forgets an earlier failure of a relationship that has now loaded.
    func faultDidLoad(_ owner: some PersistentModel, property: String) {
        guard !faultFailures.isEmpty else { return }
        faultFailures[FaultKey(model: ObjectIdentifier(owner), property: property)] = nil
    }

    /// Models for snapshots of an entity that stores a class hierarchy: each made as the class its
    /// snapshot records, registered objects reused as ``materialize(_:as:unfetched:)`` does.
    private func materializeClasses<T: PersistentModel>(
        _ snapshots: [DefaultSnapshot], as type: T.Type, entity: Schema.Entity
    ) throws -> [T] {
        var models: [T] = []
        models.reserveCapacity(snapshots.count)
        if snapshots.count > 64 { registry.reserveCapacity(snapshots.count, like: snapshots[0].persistentIdentifier) }
        // As in `materialize`: into a context with nothing registered, every model is new.
        let everyModelIsNew = registry.count == 0
        let (membership, tracksUndo) = (membership, undoManager != nil)
        let classSlot = entity.classAttribute?.slot ?? 0
        // A hierarchy has a few classes: each one's layout is found once, then by comparing names,
        // which costs less than hashing one.
        var seen: [(name: String, layout: ModelLayout, isFetched: Bool)] = []
        for index in snapshots.indices {
            let id = snapshots[index].persistentIdentifier
            let values = snapshots[index].values
            if !everyModelIsNew, let existing = registry[id] {
                guard let typed = existing as? T else {
                    throw DataStoreError(
                        .corrupted, "\(id) is registered as a '\(Swift.type(of: existing))', not a '\(T.self)'")
                }
                let backing = typed.persistentBackingData
                if backing.state == .registered && !backing.isChanged
                    && !Self.isStored(values, as: backing.savedValues),
                    let layout = storageLayout(of: typed)
                {
                    try layout.reload(values, into: typed)
                    backing.savedValues = values
                }
                models.append(typed)
                continue
            }
            guard classSlot < values.count, case .string(let name) = values[classSlot] else {
                throw Self.unknownClass(in: values, of: entity, id: id)
            }
            var position = 0
            while position < seen.count && seen[position].name != name { position += 1 }
            if position == seen.count {
                guard let layout = entity.layout(forValues: values) else {
                    throw Self.unknownClass(in: values, of: entity, id: id)
                }
                seen.append((name, layout, layout.modelType is T.Type))
            }
            // A store that was given the whole descriptor returns every class: keep the fetched type's.
            let (_, layout, isFetched) = seen[position]
            guard isFetched else { continue }
            let model = unsafeDowncast(layout.modelType.init(), to: T.self)
            try layout.apply(values, to: model)
            Self.adopt(
                model.persistentBackingData, id: id, values: values, membership: membership, tracksUndo: tracksUndo)
            if let earlier = registry.updateValue(model, forKey: id) {
                // Only when a store returns one identifier twice: keep the object registered first.
                registry[id] = earlier
                guard let typed = earlier as? T else { continue }
                models.append(typed)
                continue
            }
            models.append(model)
        }
        return models
    }

    /// Makes a new model's state that of a saved model of this context, holding `values`.
    @inline(__always)
    private static func adopt(
        _ backing: BackingData, id: PersistentIdentifier, values: [StoreValue], membership: ContextMembership,
        tracksUndo: Bool
    ) {
        backing.persistentIdentifier = id
        backing.membership = membership
        backing.tracksUndo = tracksUndo
        backing.state = .registered
        backing.savedValues = values
    }

    /// The error for stored values whose class the entity does not list (or that is not the fetched type).
    static func unknownClass(
        in values: [StoreValue], of entity: Schema.Entity, id: PersistentIdentifier? = nil
    ) -> DataStoreError {
        let recorded = entity.classAttribute.flatMap { $0.slot < values.count ? values[$0.slot] : nil }
        let name = recorded.map { "\($0)" } ?? "nothing"
        return DataStoreError(
            .corrupted,
            "\(id.map { "\($0)" } ?? "a model of '\(entity.name)'") records its class as \(name), which is not a class of the container's schema for '\(entity.name)'",
            remedy:
                "Add the model class to the container's schema (every subclass must be listed), or repair the value of '\(Schema.Entity.classAttributeName)'",
            entityName: entity.name)
    }
}
