import Foundation

// Save, step 3: the merge policy meets changes another side saved since this context read them.
extension ModelContext {
    /// Applies ``mergePolicy`` to the updated snapshots of a save whose models another side changed
    /// since this context read them; returns the snapshots whose values the merge changed.
    func resolveConflicts(in changes: inout Changes) throws {
        guard mergePolicy != .objectTrumps, !changes.updated.isEmpty else { return }
        var byStore: [Int: [Int]] = [:]
        for (position, snapshot) in changes.updated.enumerated()
        where changes.nullifiedOnly[snapshot.persistentIdentifier] == nil {
            guard let index = try? container.storeIndex(for: snapshot.entity.name) else { continue }
            byStore[index, default: []].append(position)
        }
        var conflicts: [(id: PersistentIdentifier, entity: String, attributes: [String])] = []
        for (index, positions) in byStore.sorted(by: { $0.key < $1.key }) {
            let channel = container.channels[index]
            if mergePolicy == .error && channel.store.checksExpectedValues {
                // The store compares what this context read with what it holds as it writes.
                for position in positions {
                    let id = changes.updated[position].persistentIdentifier
                    if let model = registry[id],
                        let read = model.persistentBackingData.savedValues(of: model, layout: storageLayout(of: model))
                    {
                        changes.expected[id] = read
                    }
                }
                continue
            }
            let ids = positions.map { changes.updated[$0].persistentIdentifier }
            let current = try channel.cachedSnapshots(ids, editingState: editingState)
            guard !current.isEmpty else { continue }  // a store without a cache: nothing to compare with
            for position in positions {
                var snapshot = changes.updated[position]
                let id = snapshot.persistentIdentifier
                guard let stored = current[id], let model = registry[id],
                    let read = model.persistentBackingData.savedValues(of: model, layout: storageLayout(of: model))
                else { continue }
                // The store checks again under its write's lock that nothing changed since this read.
                changes.expected[id] = stored.values
                let theirs = snapshot.entity.attributes(differingBetween: read, and: stored.values)
                guard !theirs.isEmpty else { continue }
                switch mergePolicy {
                case .error:
                    conflicts.append((id, snapshot.entity.name, theirs.map(\.name)))
                case .storeTrumps, .mergeByProperty:
                    for attribute in theirs {
                        let mine = !snapshot.values[attribute.slot].isIdentical(to: read[attribute.slot])
                        if mergePolicy == .storeTrumps || !mine {
                            snapshot.values[attribute.slot] = stored.values[attribute.slot]
                        }
                    }
                    changes.updated[position] = snapshot
                    changes.merged[id] = snapshot
                case .objectTrumps:
                    break
                }
            }
        }
        guard let first = conflicts.first else { return }
        throw DataStoreError.conflict(
            conflicts.map { ($0.id, $0.attributes) }, entityName: first.entity, propertyNames: first.attributes)
    }
}
