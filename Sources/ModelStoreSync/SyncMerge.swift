import Foundation
import ModelStore

/// The local writes one pulled page turns into: the three-way merge of each remote model with the
/// local one against their last agreed values.
struct MergePlan {
    let configuration: SyncConfiguration
    var inserted: [DefaultSnapshot] = []
    var updated: [DefaultSnapshot] = []
    var deleted: [DefaultSnapshot] = []
    var recordInserts: [DefaultSnapshot] = []
    var recordUpdates: [DefaultSnapshot] = []
    var recordDeletes: [DefaultSnapshot] = []
    var conflicts: [SyncConflict] = []
    /// Remote models that changed something here.
    var applied = 0
    /// The clashes between a delete and an edit this round decided already, by ``decisionKey(_:)``:
    /// a model changed in several transactions can come in two pages of one pull, in the same state,
    /// and its clash is one clash (decided the same way again, recorded once).
    var decidedThisRound = Set<String>()
    /// Where each record entity keeps a record's values, looked up once per entity, not per model.
    private var recordSlots: [String: SyncRecordSlots] = [:]

    init(configuration: SyncConfiguration) { self.configuration = configuration }

    /// The key of a delete-against-edit clash in ``decidedThisRound``.
    static func decisionKey(_ conflict: SyncConflict) -> String? {
        switch conflict.kind {
        case .updateDeleted, .deleteUpdated: "\(conflict.kind):\(conflict.globalID)"
        default: nil
        }
    }

    /// Records a delete-against-edit clash, unless this round decided it already.
    mutating func recordOnce(_ conflict: SyncConflict) {
        if let key = Self.decisionKey(conflict), decidedThisRound.contains(key) { return }
        conflicts.append(conflict)
    }

    /// Deletes a model the remote deleted, and removes the references local models hold to it
    /// (see ``SyncStore/removeReferences(to:from:)``).
    mutating func delete(_ model: DefaultSnapshot, store: SyncStore) throws {
        deleted.append(model)
        try store.removeReferences(to: model, from: &updated)
    }

    /// Remote values as this replica can hold them: references to models it does not have (outside
    /// its scope) left out, so that leaving them out is not taken for a local change.
    static func resolvable(_ values: [String: StoreValue], index: RecordIndex) -> [String: StoreValue] {
        // A model this replica knows (it has its record, even if it deleted the model and has not
        // pushed that yet) stays in the base; only models it never held are left out.
        func known(_ reference: PersistentIdentifier) -> Bool {
            guard case .string(let global) = reference.primaryKey else { return false }
            return index.localID(reference) != nil || index.record(of: global) != nil
        }
        return values.mapValues { value in
            switch value {
            case .reference(let global): known(global) ? value : .null
            case .references(let globals): .references(globals.filter(known))
            default: value
            }
        }
    }

    mutating func merge(
        _ remoteModel: SyncModelState, index: inout RecordIndex, current: [PersistentIdentifier: DefaultSnapshot],
        currentValues: [PersistentIdentifier: [String: StoreValue]], changes: LazyLocalChanges,
        store: SyncStore
    ) throws {
        let global = remoteModel.globalID
        let entity = try store.entity(remoteModel.entity)
        let recordEntity = try store.entity(SyncMetadata.recordEntityName(for: entity.name))
        let record = index.record(of: global)
        let modelID = index.model(of: global)
        let live = modelID.flatMap { current[$0] }
        let deletedHere = record != nil && live == nil && !(modelID?.isTemporary ?? false)

        guard let remote = remoteModel.values else {
            guard let record else { return }
            guard let live, let localValues = currentValues[live.persistentIdentifier] else {
                recordDeletes.append(record.snapshot)  // deleted on both sides
                return
            }
            applied += 1
            let base = record.base
            // Only a changed attribute keeps a model the remote deleted; a new or removed
            // relationship alone does not (the related models stay either way).
            let editedHere =
                base.map { base in entity.attributes.contains { localValues[$0.name] != base[$0.name] } } ?? true
            guard editedHere else {
                try delete(live, store: store)
                recordDeletes.append(record.snapshot)
                return
            }
            if configuration.editBeatsDelete {
                // Kept, and pushed again as a new model under the same identifier.
                var kept = record
                kept.set("base", .data(Data()))
                kept.set("pending", .bool(true))
                recordUpdates.append(kept.snapshot)
                recordOnce(
                    SyncConflict(
                        kind: .updateDeleted, globalID: global, entity: entity.name, base: nil, local: nil,
                        remote: nil, chosen: nil, outcome: "editBeatsDelete"))
            } else {
                try delete(live, store: store)
                recordDeletes.append(record.snapshot)
                recordOnce(
                    SyncConflict(
                        kind: .updateDeleted, globalID: global, entity: entity.name, base: nil, local: nil,
                        remote: nil, chosen: nil, outcome: "deleteBeatsEdit"))
            }
            return
        }

        if deletedHere, var record {
            // Deleted here, not yet pushed.
            // Unchanged there (relationships aside): the delete goes out with the next push.
            guard let base = record.base, entity.attributes.contains(where: { base[$0.name] != remote[$0.name] })
            else { return }
            guard configuration.editBeatsDelete else {
                recordOnce(
                    SyncConflict(
                        kind: .deleteUpdated, globalID: global, entity: entity.name, base: nil, local: nil,
                        remote: nil, chosen: nil, outcome: "deleteBeatsEdit"))
                return
            }
            index.assignTemporary(global, entity: entity.name)
            guard let temporary = index.model(of: global) else { return }
            var snapshot = try DefaultSnapshot(persistentIdentifier: temporary, entity: entity, namedValues: [:])
            SyncValues.write(remote, into: &snapshot, localID: index.localID)
            inserted.append(snapshot)
            record.set("model", .reference(temporary))
            record.set("base", .data(SyncCoding.encodeValues(Self.resolvable(remote, index: index))))
            record.set("stamps", .data(SyncCoding.encodeStamps(remoteModel.stamps)))
            record.set("pending", .bool(false))
            recordUpdates.append(record.snapshot)
            recordOnce(
                SyncConflict(
                    kind: .deleteUpdated, globalID: global, entity: entity.name, base: nil, local: nil, remote: nil,
                    chosen: nil, outcome: "editBeatsDelete"))
            applied += 1
            return
        }

        guard var live, let localValues = currentValues[live.persistentIdentifier] else {
            // New here.
            guard let temporary = modelID, temporary.isTemporary else { return }
            var snapshot = try DefaultSnapshot(persistentIdentifier: temporary, entity: entity, namedValues: [:])
            SyncValues.write(remote, into: &snapshot, localID: index.localID)
            inserted.append(snapshot)
            recordInserts.append(
                try newRecord(
                    entity: recordEntity, globalID: global, model: temporary,
                    base: Self.resolvable(remote, index: index), stamps: remoteModel.stamps, pending: false))
            applied += 1
            return
        }

        // On both sides: merge property by property.
        let adopted = index.adoptedByUnique.contains(global)
        // A model taken over as equal agrees with the remote on what the remote holds.
        let base = adopted ? nil : index.adoptedAsEqual.contains(global) ? remote : record?.base
        var merged = localValues
        var pending = false
        for property in entity.properties {
            let name = property.name
            let mine = localValues[name] ?? .null
            let theirs = remote[name] ?? .null
            guard mine != theirs else { continue }
            let agreed = base?[name]
            if case .references(let theirList) = theirs, case .references(let myList) = mine {
                let baseList: [PersistentIdentifier] =
                    if case .references(let list)? = agreed { list } else { [] }
                let added = Set(myList).subtracting(baseList)
                let removed = Set(baseList).subtracting(myList)
                let result = Set(theirList).union(added).subtracting(removed).sorted()
                merged[name] = .references(result)
                if result != theirList.sorted() { pending = true }
                continue
            }
            if let agreed, agreed == mine {
                merged[name] = theirs
            } else if let agreed, agreed == theirs {
                pending = true
            } else {
                let policy = configuration.policy(entity: entity.name, property: name)
                let clash = SyncClash(
                    globalID: global, entity: entity.name, property: name, base: agreed, local: mine,
                    remote: theirs, localStamp: try changes.stamp(of: live.persistentIdentifier) ?? .zero,
                    remoteStamp: remoteModel.stamps[name] ?? .zero)
                let chosen = policy.decide(clash)
                merged[name] = chosen
                if chosen != theirs { pending = true }
                conflicts.append(
                    SyncConflict(
                        kind: adopted ? .unique : .property, globalID: global, entity: entity.name, property: name,
                        base: agreed, local: mine, remote: theirs, chosen: chosen, outcome: policy.name))
            }
        }
        if merged != localValues {
            SyncValues.write(merged, into: &live, localID: index.localID)
            updated.append(live)
            applied += 1
        }
        if var record, !adopted {
            let newBase = Self.resolvable(remote, index: index)
            // An echo of this replica's own push changes nothing: no write.
            guard newBase != record.base || pending != record.pending || remoteModel.stamps != record.stamps else {
                return
            }
            record.set("base", .data(SyncCoding.encodeValues(newBase)))
            record.set("stamps", .data(SyncCoding.encodeStamps(remoteModel.stamps)))
            record.set("pending", .bool(pending))
            recordUpdates.append(record.snapshot)
        } else {
            recordInserts.append(
                try newRecord(
                    entity: recordEntity, globalID: global, model: live.persistentIdentifier,
                    base: Self.resolvable(remote, index: index), stamps: remoteModel.stamps, pending: pending))
        }
    }

    /// The snapshot of a new record, as ``SyncRecord/new(entity:globalID:model:base:stamps:pending:key:)``
    /// makes it, with the entity's slots looked up once for the page.
    private mutating func newRecord(
        entity: Schema.Entity, globalID: String, model: PersistentIdentifier, base: [String: StoreValue],
        stamps: [String: SyncStamp], pending: Bool
    ) throws -> DefaultSnapshot {
        let slots: SyncRecordSlots
        if let known = recordSlots[entity.name] {
            slots = known
        } else {
            slots = try SyncRecordSlots(entity)
            recordSlots[entity.name] = slots
        }
        return SyncRecord.new(
            slots: slots, globalID: globalID, model: model, base: SyncCoding.encodeValues(base),
            stamps: SyncCoding.encodeStamps(stamps), pending: pending
        ).snapshot
    }
}
