import Foundation

// Fetch, step 4: models for the snapshots, registered in this context.
extension ModelContext {
    /// Unregisters the models with these identifiers that have no unsaved changes.
    func releaseUnchanged(_ ids: [PersistentIdentifier]) {
        for id in ids {
            guard let model = registry[id], !model.hasChanges else { continue }
            registry[id] = nil
            model.persistentBackingData.state = .detached
            model.persistentBackingData.membership = containerMembership
        }
    }

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
        // Room for them all at once: growing one step at a time rehashes the table at each doubling.
        if snapshots.count > 1 { registry.reserveCapacity(snapshots.count, like: snapshots[0].persistentIdentifier) }
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
                    && !Self.isStored(snapshots[index].values, as: backing, of: typed, layout: layout)
                {
                    try layout.reload(snapshots[index].values, into: typed)
                    backing.keepSavedValues(snapshots[index].values)
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
        guard var saved = backing.savedValues(of: model, layout: layout), saved.count == snapshot.values.count
        else { return }
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
        backing.keepSavedValues(saved)
        backing.unfetchedSlots = skipped.sorted()
    }

    /// Whether `saved` holds exactly the stored values `values` (bit for bit, not by `==`).
    static func isStored(_ values: [StoreValue], as saved: [StoreValue]?) -> Bool {
        guard let saved, saved.count == values.count else { return false }
        return zip(values, saved).allSatisfy { $0.isIdentical(to: $1) }
    }

    /// Whether a model's saved values are exactly the stored values `values` (bit for bit): its
    /// kept copy, or its own values while it holds them (compared in place, with no copy made).
    static func isStored(
        _ values: [StoreValue], as backing: BackingData, of model: AnyObject, layout: ModelLayout?
    ) -> Bool {
        guard backing.modelHoldsSavedValues else { return isStored(values, as: backing.keptSavedValues) }
        return layout?.holds(values, in: model) ?? false
    }

    /// The models with these identifiers, in the same order; identifiers the store lacks are left out.
    func loadModels<T: PersistentModel>(_ ids: [PersistentIdentifier], as type: T.Type) throws -> [T] {
        let missing = ids.filter { registry[$0] == nil && !$0.isTemporary }
        if !missing.isEmpty {
            let entity = try entity(of: T.self)
            let found = try container.channel(for: entity.name).storedSnapshots(
                identifiedBy: missing, of: entity, editingState: editingState)
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
        // Room for them all at once: growing one step at a time rehashes the table at each doubling.
        if snapshots.count > 1 { registry.reserveCapacity(snapshots.count, like: snapshots[0].persistentIdentifier) }
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
                if backing.state == .registered && !backing.isChanged, let layout = storageLayout(of: typed),
                    !Self.isStored(values, as: backing, of: typed, layout: layout)
                {
                    try layout.reload(values, into: typed)
                    backing.keepSavedValues(values)
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
        backing.keepSavedValues(values)
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
