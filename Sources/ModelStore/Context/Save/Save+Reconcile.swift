import Foundation

// Save, step 6: the models take the stores' answer (identifiers, saved values, detached deletions).
extension ModelContext {
    /// Brings the models in step with what the stores now hold; returns the inserted models' identifiers.
    ///
    /// Once the inserted models have their identifiers and saved values and the registry has filed
    /// them, the inserted snapshots are released (``Changes/inserted`` and the stores' identifier
    /// mappings, which hold them too), before the list of identifiers is made: a large insert's
    /// snapshots and that list are never in memory at once.
    func bringModelsInStep(with changes: inout Changes, written: inout Written, deletion: Deletion)
        -> [PersistentIdentifier]
    {
        // The permanent identifiers by position when the store gave them so; the mapping by
        // temporary identifier only when references must be rewritten or there is no such list.
        let insertedCount = changes.insertedCount
        let minted = written.mintedInOrder.flatMap { $0.count == insertedCount ? $0 : nil }
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
        // The positions of inserted models that were not brought in step (detached during the save).
        var skipped: [Int] = []
        var renamed: [(PersistentIdentifier, any PersistentModel)] = []
        for index in 0..<insertedCount {
            // The snapshot is read in place (`changes.inserted[index]`), not copied out. A save in
            // chunks made its snapshots under the identifiers the models hold.
            let model = changes.insertedModels[index]
            let backing = model.persistentBackingData
            let temporary =
                changes.insertsInChunks ? backing.persistentIdentifier : changes.inserted[index].persistentIdentifier
            // A model no longer registered here (detached during the save) keeps what it has.
            guard backing.membership === membership, let temporary, backing.persistentIdentifier == temporary else {
                skipped.append(index)
                continue
            }
            let permanent = (minted.map { $0[index] } ?? remapped[temporary]) ?? temporary
            backing.persistentIdentifier = permanent
            backing.state = .registered
            backing.isChanged = false
            // A save in chunks takes only models whose saved values are their own.
            if changes.insertsInChunks || modelHoldsSavedValues(model) {
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
        }
        // New models are filed under their permanent identifiers now, once each (see ModelRegistry),
        // before the snapshots go: the registry's pages, which stay, then lie beside the store's
        // rows rather than in the holes the snapshots leave, which the heap can then give back.
        registry.refile(renamed: renamed)
        var savedModels = changes.insertedModels
        changes.inserted = []
        written.mappings = []
        if changes.insertsInChunks, case .identifiers = minted {
            // Every identifier comes from the store's list, and the context's pending inserts are
            // these models, all saved: the lists of them go before the list of identifiers is made
            // (at a million models, 16 MiB each beside its 32 MiB).
            changes.insertedModels = []
            savedModels = []
            if insertedModels.count == insertedCount { insertedModels.removeAll() }
        }
        var insertedIDs: [PersistentIdentifier] = []
        insertedIDs.reserveCapacity(insertedCount - skipped.count)
        var nextSkipped = skipped.startIndex
        for index in 0..<insertedCount {
            if nextSkipped < skipped.endIndex && skipped[nextSkipped] == index {
                nextSkipped += 1
                continue
            }
            // Each model's backing data holds its permanent identifier now; the store's list has it
            // in order, without a read of every model.
            if let minted, let permanent = minted[index] {
                insertedIDs.append(permanent)
            } else if let permanent = savedModels[index].persistentBackingData.persistentIdentifier {
                insertedIDs.append(permanent)
            }
        }
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
