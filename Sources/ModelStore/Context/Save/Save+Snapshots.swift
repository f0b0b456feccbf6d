import Foundation

// Save, step 2: the snapshots of the inserted, changed and deleted models.
extension ModelContext {
    /// The snapshots a save writes.
    struct Changes {
        var inserted: [DefaultSnapshot] = []
        /// The model of each of ``inserted``, in the same order.
        var insertedModels: [any PersistentModel] = []
        var updated: [DefaultSnapshot] = []
        var deleted: [DefaultSnapshot] = []
        /// Models outside the save whose stored references a nullify rule clears, with what is written for them.
        var nullifiedOnly: [PersistentIdentifier: DefaultSnapshot] = [:]
        /// Updated snapshots whose attributes the merge policy took from the store (see ``MergePolicy``).
        var merged: [PersistentIdentifier: DefaultSnapshot] = [:]
        /// The stored values the conflict check read, which the store compares again as it writes
        /// (``DataStoreSaveChangesRequest/expectedValues``).
        var expected: [PersistentIdentifier: [StoreValue]] = [:]

        /// Whether ``inserted`` stays empty and the store reads the inserted models' snapshots a chunk
        /// at a time, made from ``insertedModels`` as it reads them (see `insertsInChunks(_:)`).
        var insertsInChunks = false

        /// How many models the save inserts.
        var insertedCount: Int { insertsInChunks ? insertedModels.count : inserted.count }

        /// Whether the save writes nothing.
        var isEmpty: Bool { insertedCount == 0 && updated.isEmpty && deleted.isEmpty }

        /// How many models the save inserts, updates and deletes, for the debug log.
        var summary: String { "\(insertedCount) inserted, \(updated.count) updated, \(deleted.count) deleted" }

        /// A save request for these snapshots (all of the changes, or one store's part of them),
        /// with the expected values of its updated models.
        func request(
            _ editingState: EditingState, inserted: [DefaultSnapshot], updated: [DefaultSnapshot],
            deleted: [DefaultSnapshot]
        ) -> DataStoreSaveChangesRequest<DefaultSnapshot> {
            var request = DataStoreSaveChangesRequest(
                editingState: editingState, inserted: inserted, updated: updated, deleted: deleted)
            if !expected.isEmpty {
                for snapshot in updated {
                    let id = snapshot.persistentIdentifier
                    if let values = expected[id] { request.expectedValues[id] = values }
                }
            }
            return request
        }
    }

    /// Snapshots of everything the save touches. References to deleted models are removed from
    /// every snapshot written; a model outside the save that a nullify rule changes is written from
    /// its saved values, so none of its other unsaved edits goes with it.
    ///
    /// With `chunks` on, a save of new models only whose snapshots can be made later without fail
    /// (`insertsInChunks(_:)`) makes none here: the store reads them a chunk at a time.
    func snapshots(
        inserted: consuming [any PersistentModel], changed: [any PersistentModel], deletion: Deletion, chunks: Bool
    ) throws -> Changes {
        var changes = Changes()
        if chunks, changed.isEmpty, deletion.models.isEmpty, try insertsInChunks(inserted) {
            changes.insertedModels = consume inserted
            changes.insertsInChunks = true
            return changes
        }
        var layouts: LayoutCache?
        let deleted = deletion.identifiers
        changes.inserted.reserveCapacity(inserted.count)
        if deletion.models.isEmpty {
            // Every inserted model is saved: the list is the caller's, shared rather than copied.
            changes.insertedModels = inserted
            for model in inserted { changes.inserted.append(try snapshot(of: model, layouts: &layouts)) }
        } else {
            for model in inserted where !deletion.contains(model) {
                var snapshot = try snapshot(of: model, layouts: &layouts)
                snapshot.removeReferences(to: deleted)
                changes.inserted.append(snapshot)
                changes.insertedModels.append(model)
            }
        }
        var updatedIDs = Set<PersistentIdentifier>()
        for model in changed where deletion.models.isEmpty || !deletion.contains(model) {
            var snapshot = try snapshot(of: model, layouts: &layouts)
            snapshot.removeReferences(to: deleted)
            if updatedIDs.insert(snapshot.persistentIdentifier).inserted { changes.updated.append(snapshot) }
        }
        for nullification in deletion.nullifications where !deletion.contains(nullification.model) {
            let model = nullification.model
            let id = model.persistentModelID
            // A new model's snapshot (if it is in this save) already lost the reference; a stored one
            // not in this save is written from what the store has.
            guard !id.isTemporary, !updatedIDs.contains(id), let layout = storageLayout(of: model),
                let saved = model.persistentBackingData.savedValues(of: model, layout: layout),
                let entity = container.schema.entity(named: layout.entityName)
            else { continue }
            var snapshot = DefaultSnapshot(persistentIdentifier: id, entity: entity, values: saved)
            snapshot.removeReferences(to: deleted)
            updatedIDs.insert(id)
            changes.updated.append(snapshot)
            changes.nullifiedOnly[id] = snapshot
        }
        for model in deletion.models.models where !model.persistentModelID.isTemporary {
            let backing = model.persistentBackingData
            guard let layout = storageLayout(of: model),
                let entity = container.schema.entity(named: layout.entityName)
            else { continue }
            let values = try backing.savedValues(of: model, layout: layout) ?? layout.values(of: model)
            changes.deleted.append(
                DefaultSnapshot(persistentIdentifier: model.persistentModelID, entity: entity, values: values))
        }
        return changes
    }

    /// The snapshot of a model's current values.
    func snapshot(of model: any PersistentModel) throws -> DefaultSnapshot {
        var layouts: LayoutCache?
        return try snapshot(of: model, layouts: &layouts)
    }

    /// The snapshot of a model's current values, with the layout and entity of the last type seen
    /// kept in `layouts`: a save of many models of one type looks them up once.
    func snapshot(of model: any PersistentModel, layouts: inout LayoutCache?) throws -> DefaultSnapshot {
        let cache = try layout(of: model, layouts: &layouts)
        let backing = model.persistentBackingData
        // Never store initial values over attributes a fetch left out: load them, or fail the save.
        if backing.unfetchedSlots != nil { try backing.loadUnfetchedValues(of: model) }
        let id = backing.identifier(entityName: cache.entity.name)
        return DefaultSnapshot(
            persistentIdentifier: id, entity: cache.entity, values: try cache.layout.values(of: model))
    }

    /// The layout and entity of a model's type, from `layouts` when it is of the type seen last;
    /// throws when the type cannot be saved (not in the schema, or an abstract class).
    func layout(of model: any PersistentModel, layouts: inout LayoutCache?) throws -> LayoutCache {
        let type = ObjectIdentifier(Swift.type(of: model))
        let cache: LayoutCache
        if let layouts, layouts.type == type {
            cache = layouts
        } else {
            guard let layout = storageLayout(of: model),
                let entity = container.schema.entity(named: layout.entityName)
            else {
                throw DataStoreError(
                    .notFound, "'\(Swift.type(of: model))' is not in the container's schema",
                    remedy: "Pass it to ModelContainer(for:configurations:)")
            }
            try Self.check(Swift.type(of: model), is: entity)
            if let modelClass = entity.classes.first(where: { $0.modelType == Swift.type(of: model) }),
                modelClass.isAbstract
            {
                let concrete = entity.classNames(inheritingFrom: modelClass.name).dropFirst().filter { name in
                    !entity.classes.contains { $0.name == name && $0.isAbstract }
                }
                throw DataStoreError(
                    .invalidValue,
                    "'\(modelClass.name)' is an abstract model class: a model of exactly it cannot be saved",
                    remedy: concrete.isEmpty
                        ? "Remove '\(modelClass.name)' from abstractClasses, or add a subclass to save instead"
                        : "Insert a model of a subclass (\(concrete.map { "'\($0)'" }.joined(separator: ", "))) instead",
                    entityName: entity.name)
            }
            cache = LayoutCache(type: type, layout: layout, entity: entity)
            layouts = cache
        }
        return cache
    }

    /// The layout and entity of the model type a save handled last.
    struct LayoutCache {
        let type: ObjectIdentifier
        let layout: ModelLayout
        let entity: Schema.Entity
    }
}
