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

    /// A fetch, as a pipeline of named steps, each in its own file of this folder:
    /// 1. plan: what runs in the store, on snapshots and on models (`Fetch+Plan.swift`);
    /// 2. store stage: the store's answer, through its ``StoreChannel`` (`Fetch+StoreStage.swift`);
    /// 3. snapshot stage: what the store could not run, on snapshots (`Fetch+SnapshotStage.swift`);
    /// 4. materialize: models for the snapshots (`Fetch+Materialize.swift`);
    /// 5. model stage: what only models can answer, and the unsaved changes (`Fetch+ModelStage.swift`);
    /// 6. prefetch: the related models the descriptor names (`Fetch+Prefetch.swift`).
    private func executeQuery<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, countOnly: Bool, identifiersOnly: Bool
    ) throws -> FetchOutput<T> {
        let entity = try entity(of: T.self)
        let channel = try container.channel(for: entity.name)
        let pending = descriptor.includePendingChanges ? pendingModels(of: T.self) : []
        // `count != 0`, not `isEmpty`, on arrays of `T` here and in the fetch's other generic steps:
        // unspecialized, `isEmpty` is `Collection`'s, which looks up the array type's metadata.
        let hasPending = pending.count != 0 || (descriptor.includePendingChanges && hasDeletions(of: entity.name))
        var plan = try plan(
            descriptor, entity: entity, channel: channel, hasPending: hasPending, mergesPending: pending.count != 0,
            reusing: container.fetchPlans)

        let modelsWanted = !countOnly && !identifiersOnly
        if !modelsWanted, !hasPending,
            let answer = try storeAnswer(descriptor, plan: plan, channel: channel, countOnly: countOnly)
        {
            return FetchOutput(identifiers: answer.identifiers, count: answer.count)
        }
        let fetched = try storeStage(
            descriptor, plan: &plan, entity: entity, channel: channel, narrows: modelsWanted && !hasPending)
        let snapshots = try snapshotStage(fetched.snapshots, descriptor, plan: plan)

        // Without a models stage the snapshots are the result: count or list identifiers without creating models.
        if !modelsWanted && plan.modelsStage == nil {
            let ids = identifiersOnly ? snapshots.map(\.persistentIdentifier) : []
            return FetchOutput(identifiers: ids, count: snapshots.count)
        }
        // Counting and listing identifiers must not leave models behind: release the ones loaded only for this.
        let transient = modelsWanted ? [] : snapshots.map(\.persistentIdentifier).filter { registry[$0] == nil }
        defer { releaseUnchanged(transient) }
        let unfetched = fetched.omitsUnrequested ? fetched.unfetchedSlots : nil
        var models = try materialize(snapshots, as: T.self, unfetched: unfetched)
        models = try modelStage(models, descriptor, plan: plan, pending: pending)
        if modelsWanted { try prefetchRelationships(of: models, for: descriptor) }
        let ids = identifiersOnly ? models.map(\.persistentModelID) : []
        return FetchOutput(models: models, identifiers: ids, count: models.count)
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
}
