import Foundation

extension ModelContext {
    /// Posted before a context saves; `object` is the context. No `userInfo`.
    public static let willSave = Notification.Name("ModelStore.ModelContext.willSave")
    /// Posted after a context saved; `object` is the context; `userInfo` holds the changed
    /// identifiers under ``NotificationKey`` raw values.
    public static let didSave = Notification.Name("ModelStore.ModelContext.didSave")

    /// The `userInfo` keys of ``didSave``.
    public enum NotificationKey: String, Sendable {
        /// `[PersistentIdentifier]` of inserted models (permanent identifiers).
        case insertedIdentifiers
        /// `[PersistentIdentifier]` of updated models.
        case updatedIdentifiers
        /// `[PersistentIdentifier]` of deleted models.
        case deletedIdentifiers
        /// Present (`true`) when every identifier of the container may have changed, as after `erase()`.
        case invalidatedAllIdentifiers
    }

    /// Stores every pending insert, change and delete.
    ///
    /// Applies delete rules (`.cascade`, `.nullify`, `.deny`), checks relationship counts and
    /// uniqueness, then saves each store atomically. If anything fails, nothing of the save is
    /// stored and the context keeps its pending changes, so the caller can fix them or ``rollback()``.
    public func save() throws {
        processPendingChanges()
        guard hasChanges else { return }
        let changed = changedModels.models.filter { $0.persistentBackingData.state == .registered }
        try commit(inserted: insertedModels.models, changed: changed, deleted: deletedModels.models)
        insertedModels.removeAll()
        changedModels.removeAll()
        deletedModels.removeAll()
    }

    /// A model whose relationship to deleted models is cleared by a `.nullify` rule.
    private struct Nullification {
        let model: any PersistentModel
        let field: RelationshipAccessor
        let removed: any PersistentModel
    }

    func commit(inserted: [any PersistentModel], changed: [any PersistentModel], deleted requested: [any PersistentModel]) throws {
        // 1. Delete rules: the cascade closure, deny checks and nullifications, computed without mutating anything.
        var deleted = OrderedModels()
        var worklist = requested
        var denials: [(model: any PersistentModel, field: RelationshipAccessor, related: [any PersistentModel])] = []
        var nullifications: [Nullification] = []
        while let model = worklist.popLast() {
            guard !deleted.contains(model) else { continue }
            deleted.append(model)
            guard let layout = ModelLayout.of(existential: type(of: model)) else { continue }
            for field in layout.relationships {
                let related = field.models(of: model).compactMap { $0 as? any PersistentModel }
                guard !related.isEmpty else { continue }
                switch field.deleteRule {
                case .cascade: worklist.append(contentsOf: related)
                case .deny: denials.append((model, field, related))
                case .nullify:
                    if let inverse = field.inverse {
                        nullifications += related.map { Nullification(model: $0, field: inverse, removed: model) }
                    }
                case .noAction: break
                }
            }
        }
        for denial in denials {
            let blocking = denial.related.filter { !deleted.contains($0) }
            guard !blocking.isEmpty else { continue }
            let entity = denial.model.persistentModelID.entityName
            throw DataStoreError(
                .denyRuleViolation,
                "cannot delete \(denial.model.persistentModelID): its relationship '\(entity).\(denial.field.name)' still refers to \(blocking.count) model(s) and its delete rule is .deny",
                remedy: "Delete or detach the related '\(denial.field.destinationEntityName)' models first",
                entityName: entity, propertyNames: [denial.field.name])
        }

        // 2. Snapshots of everything the save touches.
        var insertedSnapshots: [DefaultSnapshot] = []
        var updatedSnapshots: [PersistentIdentifier: DefaultSnapshot] = [:]
        var updatedOrder: [PersistentIdentifier] = []
        var deletedSnapshots: [DefaultSnapshot] = []
        var layouts: LayoutCache?
        insertedSnapshots.reserveCapacity(inserted.count)
        for model in inserted where deleted.isEmpty || !deleted.contains(model) {
            insertedSnapshots.append(try snapshot(of: model, layouts: &layouts))
        }
        for model in changed where deleted.isEmpty || !deleted.contains(model) {
            let snapshot = try snapshot(of: model, layouts: &layouts)
            updatedSnapshots[snapshot.persistentIdentifier] = snapshot
            updatedOrder.append(snapshot.persistentIdentifier)
        }
        for nullification in nullifications where !deleted.contains(nullification.model) {
            let model = nullification.model
            guard model.persistentBackingData.state != .inserted else { continue }  // its snapshot is built from memory
            let id = model.persistentModelID
            var snapshot = try updatedSnapshots[id] ?? snapshot(of: model)
            let removedID = nullification.removed.persistentModelID
            switch snapshot.values[nullification.field.slot] {
            case .reference(let ref) where ref == removedID: snapshot.values[nullification.field.slot] = .null
            case .references(let refs): snapshot.values[nullification.field.slot] = .references(refs.filter { $0 != removedID })
            default: break
            }
            if updatedSnapshots[id] == nil { updatedOrder.append(id) }
            updatedSnapshots[id] = snapshot
        }
        for model in deleted.models where model.persistentBackingData.state != .inserted && model.persistentBackingData.state != .detached {
            let backing = model.persistentBackingData
            guard let layout = ModelLayout.of(existential: type(of: model)), let entity = container.schema.entity(named: layout.entityName) else { continue }
            let values = backing.savedValues ?? layout.values(of: model)
            deletedSnapshots.append(DefaultSnapshot(persistentIdentifier: model.persistentModelID, entity: entity, values: values))
        }
        let updatedList = updatedOrder.compactMap { updatedSnapshots[$0] }
        try checkRelationshipCounts(insertedSnapshots + updatedList)
        try checkUniqueness(inserted: insertedSnapshots, updated: updatedList, deleted: deletedSnapshots)

        // 3. One atomic save per store.
        NotificationCenter.default.post(name: Self.willSave, object: self)
        var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
        var reregister: [PersistentIdentifier: DefaultSnapshot] = [:]
        let stores = container.stores
        for store in stores {
            // With one store, everything belongs to it: no per-snapshot lookup.
            func owned(_ snapshots: [DefaultSnapshot]) -> [DefaultSnapshot] {
                stores.count == 1 ? snapshots : snapshots.filter { (try? container.store(for: $0.entity.name)) === store }
            }
            let request = DataStoreSaveChangesRequest<DefaultSnapshot>(
                editingState: editingState,
                inserted: owned(insertedSnapshots), updated: owned(updatedList), deleted: owned(deletedSnapshots))
            guard !(request.inserted.isEmpty && request.updated.isEmpty && request.deleted.isEmpty) else { continue }
            let result = try store.saveDefault(request)
            if remapped.isEmpty { remapped = result.remappedIdentifiers } else { remapped.merge(result.remappedIdentifiers) { $1 } }
            reregister.merge(result.snapshotsToReregister) { $1 }
        }

        // 4. The store has it: bring the models in step.
        for nullification in nullifications where !deleted.contains(nullification.model) {
            nullification.field.unlink(nullification.removed, from: nullification.model)
        }
        var insertedIDs: [PersistentIdentifier] = []
        for snapshot in insertedSnapshots {
            guard let model = registry.removeValue(forKey: snapshot.persistentIdentifier) else { continue }
            let permanent = remapped[snapshot.persistentIdentifier] ?? snapshot.persistentIdentifier
            let backing = model.persistentBackingData
            backing.persistentIdentifier = permanent
            backing.state = .registered
            backing.isChanged = false
            backing.savedValues = snapshot.copy(persistentIdentifier: permanent, remappedIdentifiers: remapped).values
            registry[permanent] = model
            insertedIDs.append(permanent)
        }
        for snapshot in updatedList {
            guard let model = registry[snapshot.persistentIdentifier] else { continue }
            let backing = model.persistentBackingData
            backing.isChanged = false
            backing.savedValues = snapshot.copy(persistentIdentifier: snapshot.persistentIdentifier, remappedIdentifiers: remapped).values
        }
        for (id, snapshot) in reregister {
            guard let model = registry[id], let layout = ModelLayout.of(existential: type(of: model)) else { continue }
            try? layout.apply(snapshot.values, to: model)
            model.persistentBackingData.savedValues = snapshot.values
        }
        let deletedIDs = deletedSnapshots.map(\.persistentIdentifier)
        for model in deleted.models {
            insertedModels.remove(model)
            changedModels.remove(model)
            detach(model)
        }
        for model in changedModels.models where model.persistentBackingData.state == .registered {
            // Models touched only by nullification are saved now.
            if updatedSnapshots[model.persistentModelID] != nil { model.persistentBackingData.isChanged = false }
        }
        NotificationCenter.default.post(name: Self.didSave, object: self, userInfo: [
            NotificationKey.insertedIdentifiers.rawValue: insertedIDs,
            NotificationKey.updatedIdentifiers.rawValue: updatedList.map(\.persistentIdentifier),
            NotificationKey.deletedIdentifiers.rawValue: deletedIDs,
        ])
    }

    /// The snapshot of a model's current values.
    func snapshot(of model: any PersistentModel) throws -> DefaultSnapshot {
        var layouts: LayoutCache?
        return try snapshot(of: model, layouts: &layouts)
    }

    /// The snapshot of a model's current values, with the layout and entity of the last type seen
    /// kept in `layouts`: a save of many models of one type looks them up once.
    func snapshot(of model: any PersistentModel, layouts: inout LayoutCache?) throws -> DefaultSnapshot {
        let type = ObjectIdentifier(Swift.type(of: model))
        let cache: LayoutCache
        if let layouts, layouts.type == type {
            cache = layouts
        } else {
            guard let layout = ModelLayout.of(existential: Swift.type(of: model)),
                  let entity = container.schema.entity(named: layout.entityName)
            else {
                throw DataStoreError(.notFound, "'\(Swift.type(of: model))' is not in the container's schema",
                                     remedy: "Pass it to ModelContainer(for:configurations:)")
            }
            cache = LayoutCache(type: type, layout: layout, entity: entity)
            layouts = cache
        }
        let id = model.persistentBackingData.identifier(entityName: cache.entity.name)
        return DefaultSnapshot(persistentIdentifier: id, entity: cache.entity, values: cache.layout.values(of: model))
    }

    /// The layout and entity of the model type a save handled last.
    struct LayoutCache {
        let type: ObjectIdentifier
        let layout: ModelLayout
        let entity: Schema.Entity
    }

    private func checkRelationshipCounts(_ snapshots: [DefaultSnapshot]) throws {
        for snapshot in snapshots {
            for relationship in snapshot.entity.relationships
            where relationship.minimumModelCount > 0 || relationship.maximumModelCount > 0 {
                let count = snapshot.values[relationship.slot].referencedIdentifiers.count
                let tooFew = relationship.minimumModelCount > 0 && count < relationship.minimumModelCount
                let tooMany = relationship.maximumModelCount > 0 && count > relationship.maximumModelCount
                if tooFew || tooMany {
                    throw DataStoreError(
                        .relationshipCountViolation,
                        "\(snapshot.persistentIdentifier) has \(count) model(s) in '\(snapshot.entity.name).\(relationship.name)', outside \(relationship.minimumModelCount)...\(relationship.maximumModelCount == 0 ? "∞" : String(relationship.maximumModelCount))",
                        remedy: "Add or remove related models before saving",
                        entityName: snapshot.entity.name, propertyNames: [relationship.name])
                }
            }
        }
    }

    /// Checks unique constraints for stores that don't enforce them natively, so every adapter
    /// rejects duplicates before anything is written.
    func checkUniqueness(inserted: [DefaultSnapshot], updated: [DefaultSnapshot], deleted: [DefaultSnapshot]) throws {
        var unenforced = Set<String>()
        var seen = Set<ObjectIdentifier>()
        for snapshot in [inserted, updated].joined() where seen.insert(ObjectIdentifier(snapshot.entity)).inserted {
            let entity = snapshot.entity
            guard !entity.uniquenessConstraints.isEmpty,
                  try container.store(for: entity.name).queryCapabilitiesIfAny?.enforcesUniqueness != true
            else { continue }
            unenforced.insert(entity.name)
        }
        // Stores that enforce uniqueness check it themselves, atomically with the write.
        guard !unenforced.isEmpty else { return }
        let vacated = Set(deleted.map(\.persistentIdentifier))
        let changing = Dictionary((inserted + updated).map { ($0.persistentIdentifier, $0) }, uniquingKeysWith: { $1 })
        for entityName in unenforced.sorted() {
            let store = try container.store(for: entityName)
            // The store's current rows, with this save's changes laid over them.
            var rows: [PersistentIdentifier: DefaultSnapshot] = [:]
            let entity = try self.entity(named: entityName)
            for snapshot in try storedSnapshots(of: entity, in: store) { rows[snapshot.persistentIdentifier] = snapshot }
            for id in vacated { rows[id] = nil }
            for (id, snapshot) in changing where snapshot.entity.name == entityName { rows[id] = snapshot }
            var table = SnapshotTable(schema: container.schema)
            do {
                try table.load(Array(rows.values).sorted { $0.persistentIdentifier < $1.persistentIdentifier })
            } catch var error as DataStoreError where error.code == .corrupted {
                // Find the pair to report it precisely.
                error = uniquenessError(entity: entity, rows: Array(rows.values)) ?? error
                throw error
            }
        }
    }

    private func uniquenessError(entity: Schema.Entity, rows: [DefaultSnapshot]) -> DataStoreError? {
        for names in entity.uniquenessConstraints {
            var seen: [[StoreValue]: PersistentIdentifier] = [:]
            for row in rows.sorted(by: { $0.persistentIdentifier < $1.persistentIdentifier }) {
                let key = names.map { row.values[entity.slot(of: $0)!] }
                if key.contains(where: \.isNull) { continue }
                if seen[key] != nil {
                    return DataStoreError(
                        .uniqueConstraintViolation,
                        "another '\(entity.name)' already has the same \(names.map { "'\($0)'" }.joined(separator: ", "))",
                        remedy: "Change the value, or fetch and update the existing model instead of inserting a new one",
                        entityName: entity.name, propertyNames: names, conflictingValues: key)
                }
                seen[key] = row.persistentIdentifier
            }
        }
        return nil
    }

    func storedSnapshots(of entity: Schema.Entity, in store: any DataStore) throws -> [DefaultSnapshot] {
        func open<M: PersistentModel>(_ type: M.Type) throws -> [DefaultSnapshot] {
            var descriptor = FetchDescriptor<M>()
            descriptor.includePendingChanges = false
            let query = store.queryCapabilitiesIfAny.map { _ in StoreQuery(entityName: entity.name) }
            return try store.fetchDefault(DataStoreFetchRequest(descriptor: descriptor, editingState: editingState, query: query)).snapshots
        }
        return try open(entity.modelType)
    }
}
