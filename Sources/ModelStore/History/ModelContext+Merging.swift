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
            guard let current = try? container.channels[index].cachedSnapshots(ids, editingState: editingState) else {
                continue
            }
            for id in ids {
                guard let model = registry[id] else { continue }
                let backing = model.persistentBackingData
                guard backing.state == .registered, !backing.isChanged else { continue }
                if let snapshot = current[id] {
                    guard let layout = storageLayout(of: model),
                        !Self.isStored(snapshot.values, as: backing, of: model, layout: layout)
                    else { continue }
                    try? layout.reload(snapshot.values, into: model)
                    backing.keepSavedValues(snapshot.values)
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
}
