import Foundation
import ModelStore

/// One side's store as the engine and the host read and write it: snapshots by entity, saves of
/// snapshot lists, and the history, with no model types.
struct SyncStore {
    let store: any DataStore
    let schema: Schema
    let editingState: EditingState
    /// The relationships sync carries, by entity: of each inverse pair one side (the to-one side,
    /// or the first by entity and name), and every relationship without an inverse. The other
    /// side follows from it (``maintainInverses(of:before:)``), so concurrent edits of a link can
    /// never leave its two ends disagreeing.
    let owning: [String: Set<String>]

    init(store: any DataStore, schema: Schema, author: String) {
        self.store = store
        self.schema = schema
        self.editingState = EditingState(author: author)
        var owning: [String: Set<String>] = [:]
        for entity in schema.entities {
            owning[entity.name] = Set(
                entity.relationships.filter { Self.isOwning($0, of: entity, schema: schema) }.map(\.name))
        }
        self.owning = owning
    }

    private static func isOwning(_ relationship: Schema.Relationship, of entity: Schema.Entity, schema: Schema) -> Bool
    {
        guard let inverseName = relationship.inverseName,
            let inverse = schema.entity(named: relationship.destination)?.relationship(named: inverseName)
        else { return true }
        if relationship.isToOne != inverse.isToOne { return relationship.isToOne }
        return (entity.name, relationship.name) <= (relationship.destination, inverse.name)
    }

    func entity(_ name: String) throws -> Schema.Entity {
        guard let entity = schema.entity(named: name) else {
            throw SyncError(
                .schemaMismatch, "the store '\(store.identifier)' has no entity '\(name)'",
                remedy: "Open both stores with the same models")
        }
        return entity
    }

    func fetch(
        _ entityName: String, filter: StoreFilter? = nil, offset: Int = 0, limit: Int? = nil
    ) throws -> [DefaultSnapshot] {
        let request = DataStoreFetchRequest<SchemaOnlyModel>(
            descriptor: FetchDescriptor(), editingState: editingState,
            query: StoreQuery(entityName: entityName, filter: filter, offset: offset, limit: limit))
        return try store.fetchErased(request).snapshots
    }

    func count(_ entityName: String, filter: StoreFilter? = nil) throws -> Int {
        let request = DataStoreFetchRequest<SchemaOnlyModel>(
            descriptor: FetchDescriptor(), editingState: editingState,
            query: StoreQuery(entityName: entityName, filter: filter))
        return try store.fetchCount(request)
    }

    /// The models with these identifiers, by identifier (all of one entity).
    func snapshots(_ ids: [PersistentIdentifier], entityName: String) throws -> [PersistentIdentifier: DefaultSnapshot]
    {
        guard !ids.isEmpty else { return [:] }
        var found: [PersistentIdentifier: DefaultSnapshot] = [:]
        for chunk in ids.chunked(500) {
            for snapshot in try fetch(entityName, filter: .identifiers(Set(chunk))) {
                found[snapshot.persistentIdentifier] = snapshot
            }
        }
        return found
    }

    /// Which of these models (all of one entity) the store has: counted first, and read only when
    /// some are missing.
    func existing(_ ids: [PersistentIdentifier], entityName: String) throws -> Set<PersistentIdentifier> {
        var found = Set<PersistentIdentifier>()
        for chunk in ids.chunked(500) {
            let wanted = Set(chunk)
            if try count(entityName, filter: .identifiers(wanted)) == wanted.count {
                found.formUnion(wanted)
            } else {
                found.formUnion(try fetch(entityName, filter: .identifiers(wanted)).map(\.persistentIdentifier))
            }
        }
        return found
    }

    /// Rows of `entityName` whose `property` is one of `values`.
    func fetch(_ entityName: String, where property: String, in values: [StoreValue]) throws -> [DefaultSnapshot] {
        guard !values.isEmpty else { return [] }
        var found: [DefaultSnapshot] = []
        for chunk in values.chunked(500) {
            found += try fetch(entityName, filter: .isIn(StorePath(property), Array(chunk)))
        }
        return found
    }

    @discardableResult
    func save(
        inserted: [DefaultSnapshot], updated: [DefaultSnapshot], deleted: [DefaultSnapshot],
        expected: [PersistentIdentifier: [StoreValue]] = [:]
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var request = DataStoreSaveChangesRequest<DefaultSnapshot>(
            editingState: editingState, inserted: inserted, updated: updated, deleted: deleted)
        request.expectedValues = expected
        return try store.saveErased(request)
    }

    var history: (any HistoryProviding)? { store as? any HistoryProviding }

    /// Brings the other ends of links in line after the carried sides of `written` changed (their
    /// stored state was `before`; a model missing there is new): a model that now points at a
    /// target is listed by it, and one that no longer does is not. Targets among `written` change
    /// in place; the others are loaded and returned, to be saved with `written`.
    func maintainInverses(
        of written: inout [DefaultSnapshot], before: [PersistentIdentifier: DefaultSnapshot]
    ) throws -> [DefaultSnapshot] {
        // Where each written model is, made on the first edit: most saves change no link with an inverse.
        var position: [PersistentIdentifier: Int]?
        var loaded: [PersistentIdentifier: DefaultSnapshot] = [:]
        var order: [PersistentIdentifier] = []
        func edit(_ id: PersistentIdentifier, _ change: (inout DefaultSnapshot) -> Void) throws {
            if position == nil {
                var made: [PersistentIdentifier: Int] = [:]
                made.reserveCapacity(written.count)
                for (index, snapshot) in written.enumerated() { made[snapshot.persistentIdentifier] = index }
                position = made
            }
            if let index = position?[id] {
                change(&written[index])
            } else if var snapshot = loaded[id] {
                change(&snapshot)
                loaded[id] = snapshot
            } else if var snapshot = try snapshots([id], entityName: id.entityName)[id] {
                change(&snapshot)
                loaded[id] = snapshot
                order.append(id)
            }
        }
        for index in written.indices {
            let model = written[index]
            let id = model.persistentIdentifier
            for relationship in model.entity.relationships
            where owning[model.entity.name]?.contains(relationship.name) ?? false {
                guard let inverseName = relationship.inverseName else { continue }
                let now = Set(SyncValues.referencedGlobalIDs(model.values[relationship.slot]))
                let was = Set(before[id].map { SyncValues.referencedGlobalIDs($0.values[relationship.slot]) } ?? [])
                for target in was.subtracting(now) {
                    try edit(target) { holder in
                        guard let slot = holder.entity.slot(of: inverseName) else { return }
                        switch holder.values[slot] {
                        case .reference(let other) where other == id: holder.values[slot] = .null
                        case .references(let others): holder.values[slot] = .references(others.filter { $0 != id })
                        default: break
                        }
                    }
                }
                for target in now.subtracting(was) {
                    try edit(target) { holder in
                        guard let slot = holder.entity.slot(of: inverseName),
                            case .relationship(let inverse)? = holder.entity.property(named: inverseName)
                        else { return }
                        if inverse.isToOne {
                            holder.values[slot] = .reference(id)
                        } else if case .references(let others) = holder.values[slot] {
                            if !others.contains(id) { holder.values[slot] = .references(others + [id]) }
                        } else {
                            holder.values[slot] = .references([id])
                        }
                    }
                }
            }
        }
        return order.compactMap { loaded[$0] }
    }

    /// Removes the references that models related to `model` hold to it through its
    /// relationships' inverses, as a nullify rule would, so that deleting it leaves none pointing at
    /// nothing. Changed models go into `updated` (an entry already there is changed in place).
    func removeReferences(to model: DefaultSnapshot, from updated: inout [DefaultSnapshot]) throws {
        let id = model.persistentIdentifier
        for relationship in model.entity.relationships {
            guard let inverse = relationship.inverseName else { continue }
            let related = SyncValues.referencedGlobalIDs(model.values[relationship.slot])
            guard !related.isEmpty else { continue }
            let found = try snapshots(related, entityName: relationship.destination)
            for var holder in related.compactMap({ found[$0] }) {
                if let index = updated.firstIndex(where: { $0.persistentIdentifier == holder.persistentIdentifier }) {
                    holder = updated.remove(at: index)
                }
                guard let slot = holder.entity.slot(of: inverse) else { continue }
                switch holder.values[slot] {
                case .reference(let target) where target == id: holder.values[slot] = .null
                case .references(let targets): holder.values[slot] = .references(targets.filter { $0 != id })
                default: break
                }
                updated.append(holder)
            }
        }
    }

    /// The transactions after number `after`, oldest first, at most `limit`.
    func transactions(after: Int64, limit: Int) throws -> [DefaultHistoryTransaction] {
        guard let history else {
            throw SyncError(
                .store, "the store '\(store.identifier)' (\(type(of: store))) keeps no history",
                remedy: "Sync stores whose adapter conforms to HistoryProviding, as every built-in one does")
        }
        let token = DefaultHistoryToken(storeIdentifier: store.identifier, transactionNumber: after)
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.token > token })
        descriptor.fetchLimit = limit
        return try history.fetchHistory(descriptor)
    }

    /// The number of the newest transaction, or 0 when there is none.
    func newestTransaction() throws -> Int64 {
        guard let history else { return 0 }
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(
            sortBy: [SortDescriptor(\.transactionIdentifier, order: .reverse)])
        descriptor.fetchLimit = 1
        return try history.fetchHistory(descriptor).first?.transactionIdentifier ?? 0
    }
}

extension Array {
    func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}

/// The engine's record of one model, decoded from a record snapshot.
struct SyncRecord {
    var snapshot: DefaultSnapshot

    var globalID: String { snapshot["globalID"]?.stringValue ?? "" }
    var model: PersistentIdentifier? {
        if case .reference(let id)? = snapshot["model"] { return id }
        return nil
    }
    var key: String { snapshot["key"]?.stringValue ?? "" }
    var deletedAt: Int64 { snapshot["deletedAt"]?.int64Value ?? 0 }
    var pending: Bool { snapshot["pending"]?.boolValue ?? false }
    var base: [String: StoreValue]? { snapshot["base"]?.dataValue.flatMap(SyncCoding.decodeValues) }
    var stamps: [String: SyncStamp] { snapshot["stamps"]?.dataValue.flatMap(SyncCoding.decodeStamps) ?? [:] }
    /// The base values' blob as stored, undecoded (empty when there is none).
    var storedBase: Data { snapshot["base"]?.dataValue ?? Data() }
    /// The stamps' blob as stored, undecoded (empty when there is none).
    var storedStamps: Data { snapshot["stamps"]?.dataValue ?? Data() }

    mutating func set(_ name: String, _ value: StoreValue) {
        if let slot = snapshot.entity.slot(of: name) { snapshot.values[slot] = value }
    }

    static func new(
        entity: Schema.Entity, globalID: String, model: PersistentIdentifier?, base: [String: StoreValue]?,
        stamps: [String: SyncStamp], pending: Bool = false, key: String = ""
    ) throws -> SyncRecord {
        try new(
            slots: SyncRecordSlots(entity), globalID: globalID, model: model,
            base: base.map(SyncCoding.encodeValues) ?? Data(), stamps: SyncCoding.encodeStamps(stamps),
            pending: pending, key: key)
    }

    /// A new record with its base and stamps encoded already, written into the slots of its entity.
    static func new(
        slots: SyncRecordSlots, globalID: String, model: PersistentIdentifier?, base: Data, stamps: Data,
        pending: Bool = false, key: String = ""
    ) -> SyncRecord {
        var values = slots.initialValues
        values[slots.globalID] = .string(globalID)
        values[slots.model] = model.map(StoreValue.reference) ?? .null
        values[slots.base] = .data(base)
        values[slots.stamps] = .data(stamps)
        values[slots.pending] = .bool(pending)
        values[slots.key] = .string(key)
        values[slots.deletedAt] = .int(0)
        return SyncRecord(
            snapshot: DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: slots.entity.name), entity: slots.entity, values: values))
    }
}

/// Where a record entity keeps each of a record's values, looked up once for the many records a
/// step makes.
struct SyncRecordSlots {
    let entity: Schema.Entity
    let initialValues: [StoreValue]
    let globalID: Int
    let model: Int
    let base: Int
    let stamps: Int
    let pending: Int
    let key: Int
    let deletedAt: Int

    init(_ entity: Schema.Entity) throws {
        func slot(_ name: String) throws -> Int {
            guard let slot = entity.slot(of: name) else {
                throw SyncError(
                    .schemaMismatch, "the record entity '\(entity.name)' has no property '\(name)'",
                    remedy: "Create the container's schema with Schema(...).includingSyncMetadata()")
            }
            return slot
        }
        self.entity = entity
        self.initialValues =
            try DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: entity.name), entity: entity, namedValues: [:]
            ).values
        self.globalID = try slot("globalID")
        self.model = try slot("model")
        self.base = try slot("base")
        self.stamps = try slot("stamps")
        self.pending = try slot("pending")
        self.key = try slot("key")
        self.deletedAt = try slot("deletedAt")
    }
}

/// The stamps blob of the last change a step encoded (``SyncCoding/encodeStamps(_:names:)``),
/// given again to a next change that stamps the same property names with the same stamp: a first
/// push stamps every model of a page alike, and its host and its acknowledgement each write a
/// record per model.
struct SyncStampsBlobs {
    private var last: (stamp: SyncStamp, names: Dictionary<String, StoreValue>.Keys, blob: Data)?

    /// The stamps of a record whose properties `names` all carry `stamp`.
    mutating func encode(_ stamp: SyncStamp, names: Dictionary<String, StoreValue>.Keys) -> Data {
        if let last, last.stamp == stamp, last.names.count == names.count, names.allSatisfy(last.names.contains) {
            return last.blob
        }
        let blob = SyncCoding.encodeStamps(stamp, names: names)
        last = (stamp, names, blob)
        return blob
    }
}

enum SyncCoding {
    static func encode<T: Encodable>(_ value: T) -> Data {
        // Encoding StoreValue dictionaries and stamps cannot fail: every case encodes.
        (try? JSONEncoder().encode(value)) ?? Data()
    }
    /// A record's base values, in the compact form ``SyncRecordCoding`` reads.
    static func encodeValues(_ values: [String: StoreValue]) -> Data { SyncRecordCoding.encode(values) }
    /// A record's stamps, in the compact form ``SyncRecordCoding`` reads.
    static func encodeStamps(_ stamps: [String: SyncStamp]) -> Data { SyncRecordCoding.encode(stamps) }
    /// The stamps of a record whose properties `names` all carry `stamp`, as ``encodeStamps(_:)``
    /// writes them.
    static func encodeStamps(_ stamp: SyncStamp, names: some Collection<String>) -> Data {
        SyncRecordCoding.encode(stamp, names: names)
    }
    static func decodeValues(_ data: Data) -> [String: StoreValue]? { SyncRecordCoding.decodeValues(data) }
    static func decodeStamps(_ data: Data) -> [String: SyncStamp]? { SyncRecordCoding.decodeStamps(data) }
    static func decodeValue(_ data: Data) -> StoreValue? {
        data.isEmpty ? nil : try? JSONDecoder().decode(StoreValue.self, from: data)
    }

    /// A digest of the synced entities' shape, equal on two replicas exactly when they store the
    /// same properties with the same types under the same names.
    static func fingerprint(_ schema: Schema) -> String {
        let entities = schema.storedDescription.entities.filter { !SyncMetadata.isMetadata($0.name) }
            .sorted { $0.name < $1.name }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = (try? encoder.encode(entities)) ?? Data()
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    /// A global identifier derived from a model's identity in the store it was first written to,
    /// for models that reached a remote without the engine (written there directly): every replica
    /// that pulls it derives the same one.
    static func derivedGlobalID(for id: PersistentIdentifier) -> String {
        let text = "\(id.storeIdentifier ?? "")/\(id.entityName)/\(id.primaryKey)"
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in text.utf8 {
            first = (first ^ UInt64(byte)) &* 0x100_0000_01b3
            second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 &+ 0x9e37_79b9
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<8 {
            bytes[index] = UInt8(truncatingIfNeeded: first >> (8 * index))
            bytes[8 + index] = UInt8(truncatingIfNeeded: second >> (8 * index))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x80  // version 8: a custom, derived identifier
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let uuid = UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
                bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
        return uuidString(uuid)
    }

    /// `uuid.uuidString` (upper-case hexadecimal digits in groups of 8, 4, 4, 4 and 12), written
    /// straight from its bytes: Foundation's formats each byte through `printf`, about 7,000
    /// instructions a call, and a first push names every model it pushes.
    static func uuidString(_ uuid: UUID) -> String {
        let digits: StaticString = "0123456789ABCDEF"
        return withUnsafeBytes(of: uuid.uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                digits.withUTF8Buffer { digits in
                    var position = 0
                    for (index, byte) in bytes.enumerated() {
                        if index == 4 || index == 6 || index == 8 || index == 10 {
                            text[position] = UInt8(ascii: "-")
                            position += 1
                        }
                        text[position] = digits[Int(byte >> 4)]
                        text[position + 1] = digits[Int(byte & 0x0F)]
                        position += 2
                    }
                    return position
                }
            }
        }
    }
}

extension StoreValue {
    var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    var int64Value: Int64? { if case .int(let value) = self { value } else { nil } }
    var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
    var dataValue: Data? { if case .data(let value) = self { value } else { nil } }
}

/// Converts between a store's snapshots and the engine's values by name, where relationships name
/// models by global identifier.
struct SyncValues {
    /// Every stored property's value, relationships through `globalID(of:)`; `nil` when a related
    /// model has no global identifier (the caller mints them first).
    static func values(
        of snapshot: DefaultSnapshot, carrying owning: Set<String>, globalID: (PersistentIdentifier) -> String?
    ) -> [String: StoreValue] {
        var values: [String: StoreValue] = [:]
        values.reserveCapacity(snapshot.entity.properties.count)
        for attribute in snapshot.entity.attributes {
            values[attribute.name] = snapshot.values[attribute.slot]
        }
        for relationship in snapshot.entity.relationships where owning.contains(relationship.name) {
            values[relationship.name] = value(of: relationship, in: snapshot, globalID: globalID)
        }
        return values
    }

    /// The value of the property `name` that ``values(of:carrying:globalID:)`` gives (`nil` where it
    /// gives none), without making the others.
    static func value(
        named name: String, of snapshot: DefaultSnapshot, carrying owning: Set<String>,
        globalID: (PersistentIdentifier) -> String?
    ) -> StoreValue? {
        switch snapshot.entity.property(named: name) {
        case .attribute(let attribute): snapshot.values[attribute.slot]
        case .relationship(let relationship) where owning.contains(name):
            value(of: relationship, in: snapshot, globalID: globalID)
        default: nil
        }
    }

    /// A relationship's value, its models named by global reference.
    private static func value(
        of relationship: Schema.Relationship, in snapshot: DefaultSnapshot, globalID: (PersistentIdentifier) -> String?
    ) -> StoreValue {
        switch snapshot.values[relationship.slot] {
        case .reference(let id):
            globalID(id).map { .reference(SyncModelState.reference(to: $0, entity: id.entityName)) } ?? .null
        case .references(let ids):
            .references(
                ids.compactMap { id in globalID(id).map { SyncModelState.reference(to: $0, entity: id.entityName) } }
                    .sorted())
        default:
            relationship.isToOne ? .null : .references([])
        }
    }

    /// The global identifiers a value of a relationship names.
    static func referencedGlobalIDs(_ value: StoreValue) -> [PersistentIdentifier] {
        switch value {
        case .reference(let id): [id]
        case .references(let ids): ids
        default: []
        }
    }

    /// The related models' local identifiers a snapshot names through the relationships sync carries.
    static func localReferences(of snapshot: DefaultSnapshot, carrying owning: Set<String>) -> [PersistentIdentifier] {
        snapshot.entity.relationships.filter { owning.contains($0.name) }.flatMap {
            referencedGlobalIDs(snapshot.values[$0.slot])
        }
    }

    /// Writes values by name into `snapshot`, relationships through `localID(of:)`; references to
    /// models this side does not have are dropped.
    static func write(
        _ values: [String: StoreValue], into snapshot: inout DefaultSnapshot,
        localID: (PersistentIdentifier) -> PersistentIdentifier?
    ) {
        for (name, value) in values {
            guard let property = snapshot.entity.property(named: name) else { continue }
            switch property {
            case .attribute(let attribute):
                snapshot.values[attribute.slot] = value
            case .relationship(let relationship):
                switch value {
                case .reference(let global):
                    snapshot.values[relationship.slot] = localID(global).map(StoreValue.reference) ?? .null
                case .references(let globals):
                    snapshot.values[relationship.slot] = .references(globals.compactMap(localID))
                default:
                    snapshot.values[relationship.slot] = relationship.isToOne ? .null : .references([])
                }
            }
        }
    }
}
