import Foundation

/// How a save resolves a model that another context or process saved since this context read it:
/// the policies Core Data users know (`NSErrorMergePolicy`, `NSMergeByPropertyStoreTrumpMergePolicy`,
/// `NSOverwriteMergePolicy`, `NSMergeByPropertyObjectTrumpMergePolicy`).
///
/// A context detects the conflict by comparing, attribute by attribute, the values it read (or last
/// saved) with the store's current ones, just before it saves. Relationships are always written as
/// the context has them. The check and the write are not one atomic step in every store: two saves
/// racing between them are told apart only by a store that versions its rows (PostgreSQL).
public enum MergePolicy: Sendable, Hashable, CustomStringConvertible {
    /// The save throws ``DataStoreError/Code/conflict`` naming the models and the attributes the
    /// other side changed, and stores nothing.
    case error
    /// For each attribute the other side changed, the stored value wins; the context's changes to
    /// other attributes are saved. The model shows the merged values after the save.
    case storeTrumps
    /// The context's model is saved whole, as if nobody else had changed it (the behaviour without
    /// conflict detection).
    case objectTrumps
    /// Each side keeps the attributes it changed; for an attribute both changed, the context's
    /// value wins. The model shows the merged values after the save.
    case mergeByProperty

    /// The policy's name.
    public var description: String {
        switch self {
        case .error: "error"
        case .storeTrumps: "storeTrumps"
        case .objectTrumps: "objectTrumps"
        case .mergeByProperty: "mergeByProperty"
        }
    }
}

extension ModelContext {
    /// Takes in what other contexts of the container saved since this context last merged (while
    /// ``automaticallyMergesChanges`` is on): registered models without unsaved changes get the
    /// stored values, registered models the store no longer has are forgotten, and models with
    /// unsaved changes keep them (the next save applies ``mergePolicy``).
    ///
    /// The main context merges on the main actor soon after each save. Other contexts merge when
    /// this is called, and at the start of each fetch and save.
    public func mergePendingChanges() {
        let ids = pendingMerges.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
        guard !ids.isEmpty else { return }
        var byStore: [Int: [PersistentIdentifier]] = [:]
        for id in ids where registry[id] != nil {
            guard let index = try? container.storeIndex(for: id.entityName) else { continue }
            byStore[index, default: []].append(id)
        }
        for (index, ids) in byStore {
            let store = container.stores[index]
            guard let current = try? store.cachedErased(ids, editingState: editingState) else { continue }
            for id in ids {
                guard let model = registry[id] else { continue }
                let backing = model.persistentBackingData
                guard backing.state == .registered, !backing.isChanged else { continue }
                if let snapshot = current[id] {
                    guard let layout = storageLayout(of: model),
                        backing.savedValues.map({ !Self.isStored(snapshot.values, as: $0) }) ?? true
                    else { continue }
                    try? layout.reload(snapshot.values, into: model)
                    backing.savedValues = snapshot.values
                } else {
                    detach(model)  // deleted by the other side
                }
            }
        }
    }

    /// Starts or stops feeding ``pendingMerges`` from the container's changes.
    func updateMergeObservation() {
        let hub = container.changeHub
        if let mergeObservation {
            hub.unobserve(mergeObservation)
            self.mergeObservation = nil
        }
        guard automaticallyMergesChanges else { return }
        let own = editingState.id
        let pending = pendingMerges
        let onMainActor = mergesOnMainActor
        mergeObservation = hub.observe { [weak container] change in
            if case .context(let id) = change.origin, id == own { return }
            let ids = change.updatedIdentifiers + change.deletedIdentifiers
            guard !ids.isEmpty else { return }
            pending.withLock { $0.formUnion(ids) }
            if onMainActor { Task { @MainActor in container?.mergeMainContextChanges() } }
        }
    }

    // MARK: Conflicts at save

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
            let store = container.stores[index]
            if mergePolicy == .error && store.checksExpectedValues {
                // The store compares what this context read with what it holds as it writes.
                for position in positions {
                    let id = changes.updated[position].persistentIdentifier
                    if let read = registry[id]?.persistentBackingData.savedValues { changes.expected[id] = read }
                }
                continue
            }
            let ids = positions.map { changes.updated[$0].persistentIdentifier }
            let current = try store.cachedErased(ids, editingState: editingState)
            guard !current.isEmpty else { continue }  // a store without a cache: nothing to compare with
            for position in positions {
                var snapshot = changes.updated[position]
                let id = snapshot.persistentIdentifier
                guard let stored = current[id], let model = registry[id],
                    let read = model.persistentBackingData.savedValues
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
