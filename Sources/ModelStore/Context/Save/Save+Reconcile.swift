import Foundation

// Save, step 6: the models take the stores' answer (identifiers, saved values, detached deletions).
extension ModelContext {
    /// Brings the models in step with what the stores now hold; returns the inserted models' identifiers.
    func bringModelsInStep(with changes: Changes, written: Written, deletion: Deletion)
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
                    backing.keepSavedValues(stored.values)
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
        // Whether the saved values of a model can be its own (the layout of the type seen last).
        var lastType: ObjectIdentifier?
        var holdsValues = false
        func modelHoldsSavedValues(_ model: any PersistentModel) -> Bool {
            let type = ObjectIdentifier(Swift.type(of: model))
            if type != lastType {
                lastType = type
                holdsValues = storageLayout(of: model)?.savedValuesAreModelValues ?? false
            }
            return holdsValues
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
            if modelHoldsSavedValues(model) {
                // The model's values are what the store took: it keeps no copy until it changes.
                backing.markSavedValuesHeldByModel()
            } else {
                // Only references change under the mapping: without relationships the values stand.
                backing.keepSavedValues(
                    changes.inserted[index].entity.relationships.isEmpty
                        ? changes.inserted[index].values
                        : changes.inserted[index].copy(persistentIdentifier: permanent, remappedIdentifiers: remapped)
                            .values)
            }
            if registry.hasFiledTemporaries { renamed.append((temporary, model)) }
            insertedIDs.append(permanent)
        }
        // New models are filed under their permanent identifiers now, once each (see ModelRegistry).
        registry.refile(renamed: renamed)
        for snapshot in changes.updated where changes.nullifiedOnly[snapshot.persistentIdentifier] == nil {
            guard let model = registry[snapshot.persistentIdentifier] else { continue }
            let backing = model.persistentBackingData
            backing.isChanged = false
            if modelHoldsSavedValues(model) {
                // A merged snapshot's values are loaded into the model below, so it holds what was written.
                backing.markSavedValuesHeldByModel()
            } else {
                backing.keepSavedValues(
                    snapshot.copy(persistentIdentifier: snapshot.persistentIdentifier, remappedIdentifiers: remapped)
                        .values)
            }
        }
        for (id, snapshot) in changes.merged {
            guard let model = registry[id], let layout = storageLayout(of: model) else { continue }
            try? layout.reload(snapshot.values, into: model)
        }
        for (id, snapshot) in written.reregister {
            guard let model = registry[id], let layout = storageLayout(of: model) else { continue }
            try? layout.reload(snapshot.values, into: model)
            model.persistentBackingData.keepSavedValues(snapshot.values)
        }
        for model in deletion.models.models {
            insertedModels.remove(model)
            changedModels.remove(model)
            deletedModels.remove(model)
            detach(model)
        }
        return insertedIDs
    }
}
