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
        /// `[DefaultHistoryToken]`: the tokens of the transactions the save recorded, one per store
        /// that keeps history (``HistoryProviding``). Absent when no store recorded one.
        case historyTokens
    }

    /// Stores every pending insert, change and delete.
    ///
    /// Applies delete rules (`.cascade`, `.nullify`, `.deny`), checks relationship counts and
    /// uniqueness, then saves: each store atomically, and a save across several stores all or
    /// nothing (see ``DataStoreTwoPhaseSaving``). If anything fails, nothing of the save is stored
    /// and the context keeps its pending changes, so the caller can fix them or ``rollback()``.
    ///
    /// After a save no stored model refers to a model the save deleted: every reference to it is
    /// removed, in the store and in memory.
    public func save() throws {
        if automaticallyMergesChanges { mergePendingChanges() }
        processPendingChanges()
        guard hasChanges else { return }
        if duplicateInsertPolicy == .upsert && storesEnforceUniqueness {
            // Upserts are the rare case: save as is, and only when a unique value is taken fold the
            // inserted duplicates into the models that have them and save again. A failed save
            // stores nothing, in every store, so the second save starts from the same state.
            do {
                return try commitPendingChanges()
            } catch let error as DataStoreError where error.code == .uniqueConstraintViolation {
                guard try resolveDuplicateInserts() else { throw error }
            }
        } else {
            try resolveDuplicateInserts()
        }
        try commitPendingChanges()
    }

    /// Whether every store checks uniqueness itself, atomically with its write, and throws
    /// ``DataStoreError/Code/uniqueConstraintViolation``: then a save can try its inserts before
    /// looking for stored duplicates.
    private var storesEnforceUniqueness: Bool {
        container.stores.allSatisfy { $0.queryCapabilitiesIfAny?.enforcesUniqueness == true }
    }

    /// Commits every pending insert, change and delete, and clears the lists.
    private func commitPendingChanges() throws {
        let changed = changedModels.models.filter { $0.persistentBackingData.state == .registered }
        try commit(inserted: insertedModels.models, changed: changed, deleted: deletedModels.models)
        insertedModels.removeAll()
        changedModels.removeAll()
        deletedModels.removeAll()
    }

    /// Saves these inserts, changes and deletes, in steps: delete rules, snapshots, checks, the
    /// stores, then the models. Models outside the three lists keep their pending changes.
    func commit(
        inserted: [any PersistentModel], changed: [any PersistentModel], deleted requested: [any PersistentModel]
    ) throws {
        guard DebugLog.level > 0 else {
            let prepared = try prepareCommit(inserted: inserted, changed: changed, deleted: requested)
            return finishCommit(prepared, written: try write(prepared.changes))
        }
        let start = ContinuousClock.now
        do {
            let prepared = try prepareCommit(inserted: inserted, changed: changed, deleted: requested)
            finishCommit(prepared, written: try write(prepared.changes))
            let changes = prepared.changes
            DebugLog.write(
                1,
                "save: \(changes.inserted.count) inserted, \(changes.updated.count) updated, "
                    + "\(changes.deleted.count) deleted in \(DebugLog.milliseconds(since: start))")
        } catch {
            DebugLog.write(1, "save failed after \(DebugLog.milliseconds(since: start)), nothing stored: \(error)")
            throw error
        }
    }

    /// A save's steps before the stores: delete rules, snapshots and checks (what ``commit`` and the
    /// asynchronous save share).
    struct PreparedCommit {
        let deletion: Deletion
        let changes: Changes
    }

    /// Steps 1 and 2 and the checks; posts ``willSave``.
    func prepareCommit(
        inserted: [any PersistentModel], changed: [any PersistentModel], deleted requested: [any PersistentModel]
    ) throws -> PreparedCommit {
        let deletion = try collectDeletions(requested)
        if let failure = faultFailures.values.min(by: { $0.message < $1.message }) { throw failure }
        var changes = try snapshots(inserted: inserted, changed: changed, deletion: deletion)
        try resolveConflicts(in: &changes)
        try checkRelationshipCounts(changes.inserted + changes.updated)
        try checkUniqueness(inserted: changes.inserted, updated: changes.updated, deleted: changes.deleted)
        NotificationCenter.default.post(name: Self.willSave, object: self)
        return PreparedCommit(deletion: deletion, changes: changes)
    }

    /// Step 4 after the stores wrote; posts ``didSave``.
    func finishCommit(_ prepared: PreparedCommit, written: Written) {
        let changes = prepared.changes
        let insertedIDs = bringModelsInStep(with: changes, written: written, deletion: prepared.deletion)
        didSave(
            inserted: insertedIDs, updated: changes.updated.map(\.persistentIdentifier),
            deleted: changes.deleted.map(\.persistentIdentifier), historyTokens: written.historyTokens)
    }

    /// Posts ``didSave`` and publishes the change to the container's ``ModelContainer/changes``.
    func didSave(
        inserted: [PersistentIdentifier], updated: [PersistentIdentifier], deleted: [PersistentIdentifier],
        historyTokens: [DefaultHistoryToken]
    ) {
        Self.postDidSave(
            object: self, inserted: inserted, updated: updated, deleted: deleted, historyTokens: historyTokens)
        container.changeHub.publish(
            ModelContainerChange(
                inserted: inserted, updated: updated, deleted: deleted, author: author, historyTokens: historyTokens,
                origin: .context(editingState.id)))
    }

    /// Posts ``didSave`` with its `userInfo` keys, for `object`: a context, or a container after an
    /// erase (with ``NotificationKey/invalidatedAllIdentifiers``).
    static func postDidSave(
        object: AnyObject, inserted: [PersistentIdentifier] = [], updated: [PersistentIdentifier] = [],
        deleted: [PersistentIdentifier] = [], historyTokens: [DefaultHistoryToken] = [],
        invalidatesAllIdentifiers: Bool = false
    ) {
        var userInfo: [String: Any] = [
            NotificationKey.insertedIdentifiers.rawValue: inserted,
            NotificationKey.updatedIdentifiers.rawValue: updated,
            NotificationKey.deletedIdentifiers.rawValue: deleted,
        ]
        if !historyTokens.isEmpty { userInfo[NotificationKey.historyTokens.rawValue] = historyTokens }
        if invalidatesAllIdentifiers { userInfo[NotificationKey.invalidatedAllIdentifiers.rawValue] = true }
        NotificationCenter.default.post(name: didSave, object: object, userInfo: userInfo)
    }

    // MARK: Step 1: delete rules

    /// A model whose relationship to a deleted model is cleared by a `.nullify` rule.
    struct Nullification {
        let model: any PersistentModel
        let field: RelationshipAccessor
    }

    /// What a save deletes: the requested models, everything their cascades reach, and the
    /// references the nullify rules clear. Saved and never-saved models alike.
    struct Deletion {
        var models = OrderedModels()
        var identifiers: Set<PersistentIdentifier> = []
        var objects: Set<ObjectIdentifier> = []
        var nullifications: [Nullification] = []

        func contains(_ model: any PersistentModel) -> Bool { models.contains(model) }
    }

    /// The cascade closure, deny checks and nullifications of a save, computed without changing anything.
    private func collectDeletions(_ requested: [any PersistentModel]) throws -> Deletion {
        var deletion = Deletion()
        guard !requested.isEmpty else { return deletion }
        var worklist = requested
        var denials: [(model: any PersistentModel, field: RelationshipAccessor, related: [any PersistentModel])] = []
        while let model = worklist.popLast() {
            guard !deletion.contains(model) else { continue }
            deletion.models.append(model)
            deletion.identifiers.insert(model.persistentModelID)
            deletion.objects.insert(ObjectIdentifier(model))
            guard let layout = storageLayout(of: model) else { continue }
            for field in layout.relationships {
                let related = field.models(of: model).compactMap { $0 as? any PersistentModel }
                guard !related.isEmpty else { continue }
                switch field.deleteRule {
                case .cascade: worklist.append(contentsOf: related)
                case .deny: denials.append((model, field, related))
                case .nullify:
                    if let inverse = field.inverse {
                        deletion.nullifications += related.map { Nullification(model: $0, field: inverse) }
                    }
                case .noAction: break
                }
            }
        }
        for denial in denials {
            let blocking = denial.related.filter { !deletion.contains($0) }
            guard !blocking.isEmpty else { continue }
            let entity = denial.model.persistentModelID.entityName
            throw DataStoreError(
                .denyRuleViolation,
                "cannot delete \(denial.model.persistentModelID): its relationship '\(entity).\(denial.field.name)' still refers to \(blocking.count) model(s) and its delete rule is .deny",
                remedy: "Delete or detach the related '\(denial.field.destinationEntityName)' models first",
                entityName: entity, propertyNames: [denial.field.name])
        }
        return deletion
    }

    // MARK: Step 2: snapshots

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
    private func snapshots(
        inserted: [any PersistentModel], changed: [any PersistentModel], deletion: Deletion
    ) throws -> Changes {
        var changes = Changes()
        var layouts: LayoutCache?
        let deleted = deletion.identifiers
        changes.inserted.reserveCapacity(inserted.count)
        changes.insertedModels.reserveCapacity(inserted.count)
        for model in inserted where deletion.models.isEmpty || !deletion.contains(model) {
            var snapshot = try snapshot(of: model, layouts: &layouts)
            snapshot.removeReferences(to: deleted)
            changes.inserted.append(snapshot)
            changes.insertedModels.append(model)
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
            guard !id.isTemporary, !updatedIDs.contains(id), let saved = model.persistentBackingData.savedValues,
                let layout = storageLayout(of: model),
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
            let values = try backing.savedValues ?? layout.values(of: model)
            changes.deleted.append(
                DefaultSnapshot(persistentIdentifier: model.persistentModelID, entity: entity, values: values))
        }
        return changes
    }

    // MARK: Step 3: the stores

    /// What the stores returned.
    struct Written {
        /// Each result's permanent identifiers, read only as far as the models need them.
        var mappings: [IdentifierMapping] = []
        var reregister: [PersistentIdentifier: DefaultSnapshot] = [:]
        var historyTokens: [DefaultHistoryToken] = []

        mutating func add(_ result: DataStoreSaveChangesResult<DefaultSnapshot>) {
            if let token = result.historyToken { historyTokens.append(token) }
            mappings.append(result.mapping)
            reregister.merge(result.snapshotsToReregister) { $1 }
        }

        /// The permanent identifier of every inserted model by its temporary one, from every store.
        var remapped: [PersistentIdentifier: PersistentIdentifier] {
            if mappings.count == 1 { return mappings[0].dictionary }
            return mappings.reduce(into: [:]) { all, mapping in all.merge(mapping.dictionary) { $1 } }
        }

        /// When one store took the whole save and listed its permanent identifiers in the request's
        /// order (which is ``Changes/inserted``'s): that list, `nil` for an insert that kept its own.
        var mintedInOrder: [PersistentIdentifier?]? { mappings.count == 1 ? mappings[0].minted : nil }
    }

    /// Writes the changes: one atomic save when one store is involved; otherwise a two-phase save
    /// across the stores, or an error before anything is written when a store cannot take part.
    private func write(_ changes: Changes) throws -> Written {
        var written = Written()
        let stores = container.stores
        if stores.count == 1 {
            let request = changes.request(
                editingState, inserted: changes.inserted, updated: changes.updated, deleted: changes.deleted)
            if !(request.inserted.isEmpty && request.updated.isEmpty && request.deleted.isEmpty) {
                written.add(try stores[0].saveErased(request))
            }
            return written
        }
        var parts = [(inserted: [DefaultSnapshot], updated: [DefaultSnapshot], deleted: [DefaultSnapshot])](
            repeating: ([], [], []), count: stores.count)
        for snapshot in changes.inserted {
            parts[try container.storeIndex(for: snapshot.entity.name)].inserted.append(snapshot)
        }
        for snapshot in changes.updated {
            parts[try container.storeIndex(for: snapshot.entity.name)].updated.append(snapshot)
        }
        for snapshot in changes.deleted {
            parts[try container.storeIndex(for: snapshot.entity.name)].deleted.append(snapshot)
        }
        let requests = parts.indices.compactMap {
            index -> (store: Int, request: DataStoreSaveChangesRequest<DefaultSnapshot>)? in
            let part = parts[index]
            guard !(part.inserted.isEmpty && part.updated.isEmpty && part.deleted.isEmpty) else { return nil }
            return (
                index,
                changes.request(editingState, inserted: part.inserted, updated: part.updated, deleted: part.deleted)
            )
        }
        if requests.count == 1, let only = requests.first {
            written.add(try stores[only.store].saveErased(only.request))
            return written
        }
        guard !requests.isEmpty else { return written }
        for (index, _) in requests { try stores[index].requireAllowsSave("a save") }
        let unable = requests.filter { !stores[$0.store].takesPartInTwoPhaseSaves }.map {
            container.configurations[$0.store].name
        }
        if !unable.isEmpty {
            let involved = requests.map { "'\(container.configurations[$0.store].name)'" }.joined(separator: ", ")
            throw DataStoreError(
                .unsupportedFeature,
                "this save changes models in \(requests.count) stores (\(involved)), and \(unable.map { "'\($0)'" }.joined(separator: ", ")) cannot take part in a save across stores, so it would not be all or nothing",
                remedy:
                    "Save the changes of each store on their own (one save() per store), or give the store's adapter a DataStoreTwoPhaseSaving conformance"
            )
        }
        var prepared: [ErasedPreparedSave] = []
        do {
            for (index, request) in requests { prepared.append(try stores[index].prepareErased(request)) }
            for part in prepared { try part.commit() }
        } catch {
            for part in prepared.reversed() { part.abort() }
            throw error
        }
        for part in prepared {
            part.finish()
            written.add(part.result)
        }
        return written
    }

    // MARK: Step 4: the models

    /// Brings the models in step with what the stores now hold; returns the inserted models' identifiers.
    private func bringModelsInStep(with changes: Changes, written: Written, deletion: Deletion)
        -> [PersistentIdentifier]
    {
        // The permanent identifiers by position when the store gave them so; the mapping by
        // temporary identifier only when references must be rewritten or there is no such list.
        let minted = written.mintedInOrder.flatMap { $0.count == changes.inserted.count ? $0 : nil }
        let refers =
            changes.inserted.contains { !$0.entity.relationships.isEmpty }
            || changes.updated.contains { !$0.entity.relationships.isEmpty }
        let remapped = minted == nil || refers ? written.remapped : [:]
        if !deletion.models.isEmpty {
            // No model refers to a deleted one any more, on either side.
            for nullification in deletion.nullifications where !deletion.contains(nullification.model) {
                let model = nullification.model
                let backing = model.persistentBackingData
                let wasChanged = backing.isChanged
                nullification.field.removeReferences(to: deletion, of: model)
                if let stored = changes.nullifiedOnly[model.persistentModelID] {
                    backing.savedValues = stored.values
                    if !wasChanged {
                        backing.isChanged = false
                        changedModels.remove(model)
                    }
                }
            }
            for snapshot in changes.inserted + changes.updated {
                guard let model = registry[snapshot.persistentIdentifier],
                    let layout = storageLayout(of: model)
                else { continue }
                for field in layout.relationships { field.removeReferences(to: deletion, of: model) }
            }
        }
        var insertedIDs: [PersistentIdentifier] = []
        insertedIDs.reserveCapacity(changes.inserted.count)
        var renamed: [(PersistentIdentifier, any PersistentModel)] = []
        for index in changes.inserted.indices {
            // The snapshot is read in place (`changes.inserted[index]`), not copied out.
            let model = changes.insertedModels[index]
            let temporary = changes.inserted[index].persistentIdentifier
            let backing = model.persistentBackingData
            // A model no longer registered here (detached during the save) keeps what it has.
            guard backing.membership === membership, backing.persistentIdentifier == temporary else { continue }
            let permanent = (minted.map { $0[index] } ?? remapped[temporary]) ?? temporary
            backing.persistentIdentifier = permanent
            backing.state = .registered
            backing.isChanged = false
            // Only references change under the mapping: without relationships the values stand.
            backing.savedValues =
                changes.inserted[index].entity.relationships.isEmpty
                ? changes.inserted[index].values
                : changes.inserted[index].copy(persistentIdentifier: permanent, remappedIdentifiers: remapped).values
            if registry.hasFiledTemporaries { renamed.append((temporary, model)) }
            insertedIDs.append(permanent)
        }
        // New models are filed under their permanent identifiers now, once each (see ModelRegistry).
        registry.refile(renamed: renamed)
        for snapshot in changes.updated where changes.nullifiedOnly[snapshot.persistentIdentifier] == nil {
            guard let model = registry[snapshot.persistentIdentifier] else { continue }
            let backing = model.persistentBackingData
            backing.isChanged = false
            backing.savedValues =
                snapshot.copy(persistentIdentifier: snapshot.persistentIdentifier, remappedIdentifiers: remapped).values
        }
        for (id, snapshot) in changes.merged {
            guard let model = registry[id], let layout = storageLayout(of: model) else { continue }
            try? layout.reload(snapshot.values, into: model)
        }
        for (id, snapshot) in written.reregister {
            guard let model = registry[id], let layout = storageLayout(of: model) else { continue }
            try? layout.reload(snapshot.values, into: model)
            model.persistentBackingData.savedValues = snapshot.values
        }
        for model in deletion.models.models {
            insertedModels.remove(model)
            changedModels.remove(model)
            deletedModels.remove(model)
            detach(model)
        }
        return insertedIDs
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
        let backing = model.persistentBackingData
        // Never store initial values over attributes a fetch left out: load them, or fail the save.
        if backing.unfetchedSlots != nil { try backing.loadUnfetchedValues(of: model) }
        let id = backing.identifier(entityName: cache.entity.name)
        return DefaultSnapshot(
            persistentIdentifier: id, entity: cache.entity, values: try cache.layout.values(of: model))
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
        var last: Schema.Entity?
        // Runs of snapshots share an entity: each run's is looked up once.
        for snapshot in [inserted, updated].joined() where snapshot.entity !== last {
            last = snapshot.entity
            guard seen.insert(ObjectIdentifier(snapshot.entity)).inserted else { continue }
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
            // The store's rows that this save keeps as they are, checked with the save's changes by the
            // same checker the stores use.
            let entity = try self.entity(named: entityName)
            let kept = try storedSnapshots(of: entity, in: store).filter {
                !vacated.contains($0.persistentIdentifier) && changing[$0.persistentIdentifier] == nil
            }
            let claims = changing.values.filter { $0.entity.name == entityName }
                .sorted { $0.persistentIdentifier < $1.persistentIdentifier }
            try UniquenessCheck(entity: entity).check(claims: claims, kept: kept)
        }
    }

    func storedSnapshots(of entity: Schema.Entity, in store: any DataStore) throws -> [DefaultSnapshot] {
        func open<M: PersistentModel>(_ type: M.Type) throws -> [DefaultSnapshot] {
            var descriptor = FetchDescriptor<M>()
            descriptor.includePendingChanges = false
            let query = store.queryCapabilitiesIfAny.map { _ in StoreQuery(entityName: entity.name) }
            return try store.fetchErased(
                DataStoreFetchRequest(descriptor: descriptor, editingState: editingState, query: query)
            ).snapshots
        }
        return try open(entity.modelType)
    }
}
