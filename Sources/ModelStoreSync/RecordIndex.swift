import Foundation
import ModelStore

/// The records of the models a step works on, found by global identifier or by model, and the
/// records the step adds or changes, written with its save.
struct RecordIndex {
    private(set) var byGlobal: [String: SyncRecord] = [:]
    private var modelByGlobal: [String: PersistentIdentifier] = [:]
    private var globalByModel: [PersistentIdentifier: String] = [:]
    /// Records made for models that had none, to save with the step.
    var derivedRecordInserts: [DefaultSnapshot] = []
    /// Records the step changed outside its own lists.
    var recordUpdates: [DefaultSnapshot] = []
    /// Records the step deletes outside its own lists.
    var recordDeletes: [DefaultSnapshot] = []
    /// The global identifiers of ``derivedRecordInserts`` that the replica derived from their
    /// models' keys (``ReplicaGlobalIDs``) and so derives again after a crash.
    var rederivable = Set<String>()
    /// Pulled models that a local model took over because it held the same unique values.
    var adoptedByUnique = Set<String>()
    /// Pulled models that an equal local model took over when this replica first joined.
    var adoptedAsEqual = Set<String>()

    /// The records of these global identifiers, in whichever record entity holds them.
    static func load(globalIDs: [String], store: SyncStore) throws -> RecordIndex {
        var index = RecordIndex()
        try index.add(globalIDs: globalIDs, store: store)
        return index
    }

    mutating func add(globalIDs: [String], store: SyncStore) throws {
        let wanted = Array(Set(globalIDs).subtracting(byGlobal.keys))
        guard !wanted.isEmpty else { return }
        let values = wanted.map(StoreValue.string)
        reserve(wanted.count)
        for entity in store.schema.syncedEntities {
            let recordEntity = SyncMetadata.recordEntityName(for: entity.name)
            for snapshot in try store.fetch(recordEntity, where: "globalID", in: values) {
                remember(SyncRecord(snapshot: snapshot))
            }
        }
    }

    /// Room for `more` records, so that a step's look-up does not grow the tables record by record.
    private mutating func reserve(_ more: Int) {
        byGlobal.reserveCapacity(byGlobal.count + more)
        modelByGlobal.reserveCapacity(modelByGlobal.count + more)
        globalByModel.reserveCapacity(globalByModel.count + more)
    }

    mutating func remember(_ record: SyncRecord) {
        remember(record, globalID: record.globalID, model: record.model)
    }

    /// ``remember(_:)`` of a record just made with this global identifier and model, which it
    /// then need not read back from the record's values.
    private mutating func remember(_ record: SyncRecord, globalID: String, model: PersistentIdentifier?) {
        byGlobal[globalID] = record
        if let model {
            modelByGlobal[globalID] = model
            globalByModel[model] = globalID
        }
    }

    func record(of global: String) -> SyncRecord? { byGlobal[global] }
    func model(of global: String) -> PersistentIdentifier? { modelByGlobal[global] }
    func global(of model: PersistentIdentifier) -> String? { globalByModel[model] }

    /// The local model a global reference names, if this side has it.
    func localID(_ reference: PersistentIdentifier) -> PersistentIdentifier? {
        guard case .string(let global) = reference.primaryKey else { return nil }
        return modelByGlobal[global]
    }

    /// Gives a model about to be inserted a temporary identifier under its global identifier.
    mutating func assignTemporary(_ global: String, entity: String) {
        let id = PersistentIdentifier.temporary(entityName: entity)
        modelByGlobal[global] = id
        globalByModel[id] = global
    }

    /// Points a global identifier at a model (after a save gave it its permanent identifier).
    mutating func link(_ global: String, to model: PersistentIdentifier) {
        if let old = modelByGlobal[global] { globalByModel[old] = nil }
        modelByGlobal[global] = model
        globalByModel[model] = global
    }

    /// Forgets that a global identifier names `model` (a model deleted here).
    mutating func unlink(model: PersistentIdentifier) {
        guard let global = globalByModel.removeValue(forKey: model) else { return }
        modelByGlobal[global] = nil
    }

    /// Forgets the models of `models`' keys that are not there (deleted here, their records still
    /// naming them).
    mutating func unlinkMissing(from models: [PersistentIdentifier: DefaultSnapshot]) {
        for (global, model) in modelByGlobal where !model.isTemporary && models[model] == nil {
            modelByGlobal[global] = nil
            globalByModel[model] = nil
        }
    }

    /// The live models the loaded records point at, by identifier.
    func models(store: SyncStore) throws -> [PersistentIdentifier: DefaultSnapshot] {
        var found: [PersistentIdentifier: DefaultSnapshot] = [:]
        let live = modelByGlobal.values.filter { !$0.isTemporary }
        for (entity, ids) in Dictionary(grouping: live, by: \.entityName) {
            let read = try store.snapshots(ids, entityName: entity)
            // Entities hold distinct models: the first one's need no merge.
            if found.isEmpty { found = read } else { found.merge(read) { $1 } }
        }
        return found
    }

    /// The global identifiers of these models, from their records; a model without one gets
    /// `mint(model)`, and a record for it is added to ``derivedRecordInserts``.
    ///
    /// With `deriving`, a model with an integer key gets the identifier the replica derives from it
    /// instead, unless a record holds that identifier already (another model's, after its key was
    /// used again): its record joins ``rederivable``, whose records may wait for the save that
    /// acknowledges their push.
    mutating func globalIDs(
        for ids: [PersistentIdentifier], store: SyncStore, deriving: ReplicaGlobalIDs? = nil,
        mint: (PersistentIdentifier) -> String
    ) throws -> [PersistentIdentifier: String] {
        let unknown = Array(Set(ids.filter { globalByModel[$0] == nil && !$0.isTemporary }))
        reserve(unknown.count)
        for (entity, models) in Dictionary(grouping: unknown, by: \.entityName) {
            let recordEntity = SyncMetadata.recordEntityName(for: entity)
            for snapshot in try store.fetch(recordEntity, where: "model", in: models.map(StoreValue.reference)) {
                remember(SyncRecord(snapshot: snapshot))
            }
            // A model read before its record was looked up may have been deleted in between by
            // another process (which clears the record's reference): only a model that still
            // exists now, and so existed at the look-up, truly has no record. The others get no
            // identifier; their deletion is in the history.
            let missing = models.filter { globalByModel[$0] == nil }
            guard !missing.isEmpty else { continue }
            let present = try store.existing(missing, entityName: entity)
            var derived: [PersistentIdentifier: String] = [:]
            if let deriving {
                for model in missing where present.contains(model) { derived[model] = deriving.globalID(of: model) }
            }
            if !derived.isEmpty {
                let held = try store.fetch(recordEntity, where: "globalID", in: derived.values.map(StoreValue.string))
                let taken = Set(held.map { SyncRecord(snapshot: $0).globalID })
                derived = derived.filter { !taken.contains($0.value) && byGlobal[$0.value] == nil }
            }
            let slots = try SyncRecordSlots(try store.entity(recordEntity))
            let noStamps = SyncCoding.encodeStamps([:])
            derivedRecordInserts.reserveCapacity(derivedRecordInserts.count + missing.count)
            for model in missing where present.contains(model) {
                let global = derived[model] ?? mint(model)
                if derived[model] != nil { rederivable.insert(global) }
                let record = SyncRecord.new(
                    slots: slots, globalID: global, model: model, base: Data(), stamps: noStamps)
                derivedRecordInserts.append(record.snapshot)
                remember(record, globalID: global, model: model)
            }
        }
        var result: [PersistentIdentifier: String] = [:]
        for id in ids { if let global = globalByModel[id] { result[id] = global } }
        return result
    }

    /// Takes the permanent identifiers the save `result` gave `saved`, the first records it
    /// inserted (in that order, stored as they are: it re-registered nothing), and removes them
    /// from ``derivedRecordInserts``: the index then holds those records as stored.
    mutating func derivedRecordsSaved(_ saved: [DefaultSnapshot], _ result: DataStoreSaveChangesResult<DefaultSnapshot>)
    {
        let minted =
            result.mintedIdentifiersInRequestOrder
            ?? saved.map { result.remappedIdentifiers[$0.persistentIdentifier] }
        let savedGlobals = Set(saved.compactMap { $0["globalID"]?.stringValue })
        for (snapshot, id) in zip(saved, minted) {
            guard let id, let global = snapshot["globalID"]?.stringValue, var record = byGlobal[global] else {
                continue
            }
            record.snapshot.persistentIdentifier = id
            byGlobal[global] = record
        }
        derivedRecordInserts.removeAll { savedGlobals.contains($0["globalID"]?.stringValue ?? "") }
        rederivable.subtract(savedGlobals)
    }

    /// The keys of `models` whose records wait for their acknowledgement (``rederivable``), by entity.
    ///
    /// Every record of ``derivedRecordInserts`` belongs to the entity of its model (both places that
    /// make them, ``globalIDs(for:store:deriving:mint:)`` and the engine's reclaiming of derived
    /// identifiers, take the record entity from the model's), so the model names the entity.
    func rederivableKeys(among models: Set<PersistentIdentifier>) -> [String: [Int64]] {
        var keys: [String: [Int64]] = [:]
        for snapshot in derivedRecordInserts {
            let record = SyncRecord(snapshot: snapshot)
            guard rederivable.contains(record.globalID), let model = record.model, models.contains(model),
                let key = model.primaryKey.intValue
            else { continue }
            keys[model.entityName, default: []].append(key)
        }
        return keys
    }

    /// Models' values in sync form, by identifier.
    mutating func syncValues(
        of models: [PersistentIdentifier: DefaultSnapshot], store: SyncStore, deriving: ReplicaGlobalIDs? = nil,
        mint: (PersistentIdentifier) -> String
    ) throws -> [PersistentIdentifier: [String: StoreValue]] {
        let globals = try relatedGlobalIDs(of: models.values, store: store, deriving: deriving, mint: mint)
        return models.mapValues { model in
            SyncValues.values(of: model, carrying: store.owning[model.entity.name] ?? []) { globals[$0] }
        }
    }

    /// The global identifiers of the models these models link to through the relationships sync
    /// carries: what ``syncValues(of:store:deriving:mint:)`` names them by (for a caller that reads
    /// a few values with ``SyncValues/value(named:of:carrying:globalID:)`` instead).
    mutating func relatedGlobalIDs(
        of models: some Collection<DefaultSnapshot>, store: SyncStore, deriving: ReplicaGlobalIDs? = nil,
        mint: (PersistentIdentifier) -> String
    ) throws -> [PersistentIdentifier: String] {
        let related = models.flatMap {
            SyncValues.localReferences(of: $0, carrying: store.owning[$0.entity.name] ?? [])
        }
        return try globalIDs(for: related, store: store, deriving: deriving, mint: mint)
    }
}

extension SyncRecord {
    /// The app entity the record belongs to.
    var entityName: String { String(snapshot.entity.name.dropFirst(SyncMetadata.recordPrefix.count)) }
}
