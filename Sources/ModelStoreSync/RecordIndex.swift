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
    /// The global identifiers of records another index made and its save will insert, held here
    /// as they will be stored (see ``carry(_:)``).
    private(set) var carried = Set<String>()
    /// The models of carried records whose identifiers the replica derived from their keys.
    private var carriedRederivable = Set<PersistentIdentifier>()

    /// The records of these global identifiers, in whichever record entity holds them.
    static func load(globalIDs: [String], store: SyncStore) throws -> RecordIndex {
        var index = RecordIndex()
        try index.add(globalIDs: globalIDs, store: store)
        return index
    }

    mutating func add(globalIDs: [String], store: SyncStore) throws {
        // Most of a step's identifiers are often known already (an acknowledgement's all are).
        var seen = Set<String>()
        let wanted = globalIDs.filter { byGlobal[$0] == nil && seen.insert($0).inserted }
        guard !wanted.isEmpty else { return }
        reserve(wanted.count)
        let plan = Self.lookup(of: wanted)
        for entity in store.schema.syncedEntities {
            let recordEntity = SyncMetadata.recordEntityName(for: entity.name)
            for snapshot in try Self.records(holding: wanted, plan: plan, in: recordEntity, store: store) {
                remember(SyncRecord(snapshot: snapshot))
            }
        }
    }

    /// How ``records(holding:in:store:)`` reads a batch of global identifiers.
    enum Lookup: Equatable {
        /// As a list (`globalID IN (…)`): a probe of the index per identifier.
        case list
        /// As the range of `globalID` from the least to the greatest, in one probe, reading at
        /// most `limit` records.
        case range(String, String, limit: Int)
    }

    /// Batches of fewer identifiers than this are read as a list.
    static let leastRangeLookup = 16

    /// A range for a batch whose identifiers sort close together: the ones a replica derives from
    /// a run of nearby keys of one entity (``ReplicaGlobalIDs``) share their high half and differ in
    /// the key in their low half, so the records between the least and the greatest are about as
    /// many as the identifiers (a first push or a repeated one reads its pages so). Any other batch
    /// (identifiers minted at random, derived from keys far apart, or written otherwise) is a list.
    static func lookup(of globals: [String]) -> Lookup {
        guard globals.count >= leastRangeLookup, let first = bits(of: globals[0]) else { return .list }
        // Written alike with one high half, identifiers sort as their low halves.
        var least = (low: first.low, position: 0)
        var greatest = least
        for position in globals.indices.dropFirst() {
            guard let next = bits(of: globals[position]), next.high == first.high else { return .list }
            if next.low < least.low { least = (next.low, position) }
            if next.low > greatest.low { greatest = (next.low, position) }
        }
        // Keys at most four apart on average: the range holds at most four records per identifier.
        guard greatest.low - least.low < UInt64(4 * globals.count) else { return .list }
        return .range(globals[least.position], globals[greatest.position], limit: 4 * globals.count + leastRangeLookup)
    }

    /// The two halves of an identifier written as the engine writes one (``SyncCoding/uuidString(_:)``:
    /// 36 characters, digits `0`–`9` and `A`–`F` in groups of 8, 4, 4, 4 and 12); `nil` for any other
    /// text. Cheaper than ``ReplicaGlobalIDs/halves(of:)``, which reads every form.
    static func bits(of text: String) -> (high: UInt64, low: UInt64)? {
        let read = text.utf8.withContiguousStorageIfAvailable { utf8 -> (high: UInt64, low: UInt64)? in
            guard utf8.count == 36 else { return nil }
            var high: UInt64 = 0
            var low: UInt64 = 0
            var digits = 0
            for position in 0..<36 {
                let character = utf8[position]
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard character == UInt8(ascii: "-") else { return nil }
                    continue
                }
                let value: UInt8
                if character &- UInt8(ascii: "0") < 10 {
                    value = character &- UInt8(ascii: "0")
                } else if character &- UInt8(ascii: "A") < 6 {
                    value = character &- UInt8(ascii: "A") &+ 10
                } else {
                    return nil
                }
                if digits < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
                digits += 1
            }
            return (high, low)
        }
        return read ?? nil
    }

    /// The records of `recordEntity` whose `globalID` is one of `globals`, read as ``lookup(of:)``
    /// says. A range compares text as Swift does (every store does), so it holds every record
    /// wanted; one that holds more records than its limit (other text sorts between two identifiers)
    /// is read again as a list.
    static func records(holding globals: [String], in recordEntity: String, store: SyncStore) throws
        -> [DefaultSnapshot]
    {
        try records(holding: globals, plan: lookup(of: globals), in: recordEntity, store: store)
    }

    private static func records(
        holding globals: [String], plan: Lookup, in recordEntity: String, store: SyncStore
    ) throws -> [DefaultSnapshot] {
        if case .range(let least, let greatest, let limit) = plan {
            let range = StoreRange(lower: .string(least), upper: .string(greatest), includesUpper: true)
            let found = try store.fetch(recordEntity, filter: .range(StorePath("globalID"), range), limit: limit)
            if found.isEmpty { return [] }
            if found.count < limit {
                let wanted = Set(globals)
                return found.filter { wanted.contains($0["globalID"]?.stringValue ?? "") }
            }
        }
        return try store.fetch(recordEntity, where: "globalID", in: globals.map(StoreValue.string))
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
                let held = try Self.records(holding: Array(derived.values), in: recordEntity, store: store)
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
        giveIdentifiers(saved, result, carriedOnly: false)
        let savedGlobals = Set(saved.compactMap { $0["globalID"]?.stringValue })
        derivedRecordInserts.removeAll { savedGlobals.contains($0["globalID"]?.stringValue ?? "") }
        rederivable.subtract(savedGlobals)
    }

    /// Holds the records `other` made for models that had none (``derivedRecordInserts``), which
    /// its save inserts, as records this index knows: a step made ready before that save (the next
    /// page of a pipelined push) names those models by the same identifiers and makes no second
    /// record for them. ``carriedRecordsSaved(_:_:)`` gives them their permanent identifiers.
    mutating func carry(_ other: RecordIndex) {
        for snapshot in other.derivedRecordInserts {
            let record = SyncRecord(snapshot: snapshot)
            guard byGlobal[record.globalID] == nil else { continue }
            remember(record)
            carried.insert(record.globalID)
            if other.rederivable.contains(record.globalID), let model = record.model {
                carriedRederivable.insert(model)
            }
        }
    }

    /// Gives the carried records (``carry(_:)``) among `inserted`, the records the save `result`
    /// inserted (in its request's order), the permanent identifiers it gave them.
    mutating func carriedRecordsSaved(
        _ inserted: [DefaultSnapshot], _ result: DataStoreSaveChangesResult<DefaultSnapshot>
    ) {
        guard !carried.isEmpty else { return }
        giveIdentifiers(inserted, result, carriedOnly: true)
        carried = []
    }

    /// Gives the records this index holds of `saved`, the records the save `result` inserted (in its
    /// request's order), the permanent identifiers it gave them; with `carriedOnly`, only carried
    /// records that are the very ones saved.
    private mutating func giveIdentifiers(
        _ saved: [DefaultSnapshot], _ result: DataStoreSaveChangesResult<DefaultSnapshot>, carriedOnly: Bool
    ) {
        let minted =
            result.mintedIdentifiersInRequestOrder
            ?? saved.map { result.remappedIdentifiers[$0.persistentIdentifier] }
        for (snapshot, id) in zip(saved, minted) {
            guard let id, let global = snapshot["globalID"]?.stringValue, var record = byGlobal[global] else {
                continue
            }
            let same = record.snapshot.persistentIdentifier == snapshot.persistentIdentifier
            guard !carriedOnly || (carried.contains(global) && same) else { continue }
            record.snapshot.persistentIdentifier = id
            byGlobal[global] = record
        }
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
        // Carried records wait for the save of the index that made them.
        for model in carriedRederivable where models.contains(model) {
            if let key = model.primaryKey.intValue { keys[model.entityName, default: []].append(key) }
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
