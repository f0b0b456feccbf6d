import Foundation
import ModelStore

/// The compact binary form of a record's base values and stamps, written and read once per synced
/// model on every round, where JSON's coders cost more than the store's own write.
///
/// A blob starts with a format byte, so records written as JSON (which start with `{`) still read.
/// Values: `0xB1`, then a count and that many (name, value) pairs. Stamps: `0xB3`, then a count of
/// distinct stamps and, for each, its milliseconds, counter and replica and the names of the
/// properties stamped with it (a count and that many names): a model's properties mostly share
/// one stamp (all of them after an insert), so the replica's identifier, the longest part, is
/// written once instead of once per property. Stamps written as `0xB2` (a count and that many
/// (name, milliseconds, counter, replica)) still read. Counts, lengths and counters are LEB128;
/// other numbers are little-endian fixed width; names and strings UTF-8 with their length first.
/// Values of the kinds a model's attributes rarely hold (decimal, URL, array, dictionary,
/// references) are embedded as their JSON form.
enum SyncRecordCoding {
    private static let valuesFormat: UInt8 = 0xB1
    private static let stampsPerPropertyFormat: UInt8 = 0xB2
    private static let stampsFormat: UInt8 = 0xB3

    static func encode(_ values: [String: StoreValue]) -> Data {
        var writer = Writer()
        writer.bytes.append(valuesFormat)
        writer.values(values)
        return Data(writer.bytes)
    }

    static func encode(_ stamps: [String: SyncStamp]) -> Data {
        var writer = Writer()
        writer.bytes.append(stampsFormat)
        writer.stamps(stamps)
        return Data(writer.bytes)
    }

    /// The stamps of properties `names` that all carry `stamp`: what ``encode(_:)-(Dictionary<String,SyncStamp>)``
    /// writes for them, without the dictionary.
    static func encode(_ stamp: SyncStamp, names: some Collection<String>) -> Data {
        var writer = Writer()
        writer.bytes.append(stampsFormat)
        guard !names.isEmpty else {
            writer.count(0)
            return Data(writer.bytes)
        }
        writer.count(1)
        writer.fixed(UInt64(bitPattern: stamp.milliseconds))
        writer.count(Int(UInt32(bitPattern: stamp.counter)))
        writer.string(stamp.replica)
        writer.count(names.count)
        for name in names { writer.string(name) }
        return Data(writer.bytes)
    }

    /// Values written by ``encode(_:)-(Dictionary<String,StoreValue>)``, or as JSON; `nil` for an
    /// empty or unreadable blob.
    static func decodeValues(_ data: Data) -> [String: StoreValue]? {
        guard let first = data.first else { return nil }
        guard first == valuesFormat else {
            return try? JSONDecoder().decode([String: StoreValue].self, from: data)
        }
        return data.withUnsafeBytes { buffer -> [String: StoreValue]? in
            var reader = Reader(buffer: buffer, position: 1)
            return reader.values()
        }
    }

    /// Stamps written by ``encode(_:)-(Dictionary<String,SyncStamp>)``, or as JSON; `nil` for an
    /// empty or unreadable blob.
    static func decodeStamps(_ data: Data) -> [String: SyncStamp]? {
        guard let first = data.first else { return nil }
        if first == stampsFormat { return decodeGroupedStamps(data) }
        guard first == stampsPerPropertyFormat else {
            return try? JSONDecoder().decode([String: SyncStamp].self, from: data)
        }
        return data.withUnsafeBytes { buffer -> [String: SyncStamp]? in
            var reader = Reader(buffer: buffer, position: 1)
            guard let count = reader.count() else { return nil }
            var stamps: [String: SyncStamp] = [:]
            // A count read from the blob is not trusted: an entry takes eighteen bytes at least.
            stamps.reserveCapacity(min(count, reader.remaining / 18))
            for _ in 0..<count {
                guard let name = reader.string(), let milliseconds = reader.fixed(), let counter = reader.fixed(),
                    let replica = reader.string()
                else { return nil }
                stamps[name] = SyncStamp(
                    milliseconds: Int64(bitPattern: milliseconds),
                    counter: Int32(bitPattern: UInt32(truncatingIfNeeded: counter)), replica: replica)
            }
            return stamps
        }
    }

    /// Stamps in the `0xB3` form: each stamp once, with the names of the properties it stamps.
    private static func decodeGroupedStamps(_ data: Data) -> [String: SyncStamp]? {
        data.withUnsafeBytes { buffer -> [String: SyncStamp]? in
            var reader = Reader(buffer: buffer, position: 1)
            return reader.stamps()
        }
    }

    private enum Tag: UInt8 {
        case null = 0
        case falseValue
        case trueValue
        case int
        case uint
        case double
        case string
        case date
        case data
        case uuid
        case reference
        case json
    }

    private struct Writer {
        var bytes: [UInt8] = []

        init() { bytes.reserveCapacity(128) }

        mutating func count(_ value: Int) {
            var rest = UInt64(value)
            while rest >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            bytes.append(UInt8(rest))
        }

        mutating func fixed(_ value: UInt64) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        mutating func string(_ text: String) {
            var text = text
            text.withUTF8 { utf8 in
                count(utf8.count)
                bytes.append(contentsOf: utf8)
            }
        }

        /// A count of distinct stamps and, for each, its milliseconds, counter and replica and the
        /// names of the properties it stamps (the `0xB3` form after its format byte).
        mutating func stamps(_ stamps: [String: SyncStamp]) {
            // Grouped by comparing with the few groups so far rather than hashing every stamp (its
            // replica's text): a model's properties mostly share one or two stamps. Past eight
            // distinct ones, a dictionary keeps the grouping linear.
            var groups: [(stamp: SyncStamp, names: [String])] = []
            var grouped: [SyncStamp: Int] = [:]
            for (name, stamp) in stamps {
                if groups.count <= 8, let found = groups.firstIndex(where: { $0.stamp == stamp }) {
                    groups[found].names.append(name)
                    continue
                }
                if groups.count > 8, let found = grouped[stamp] {
                    groups[found].names.append(name)
                    continue
                }
                groups.append((stamp, [name]))
                if groups.count == 9 {
                    for (position, group) in groups.enumerated() { grouped[group.stamp] = position }
                } else if groups.count > 9 {
                    grouped[stamp] = groups.count - 1
                }
            }
            count(groups.count)
            for (stamp, names) in groups {
                fixed(UInt64(bitPattern: stamp.milliseconds))
                count(Int(UInt32(bitPattern: stamp.counter)))
                string(stamp.replica)
                count(names.count)
                for name in names { string(name) }
            }
        }

        /// A text that is often the same as the previous one of its kind (`previous`): a repeat is
        /// the length 0 and the flag 1; the empty text the length 0 and the flag 0; any other its
        /// length and UTF-8.
        mutating func repeatable(_ text: String, previous: inout String?) {
            if !text.isEmpty && text == previous {
                count(0)
                bytes.append(1)
                return
            }
            string(text)
            if text.isEmpty { bytes.append(0) }
            previous = text
        }

        /// A count and that many (name, value) pairs.
        mutating func values(_ values: [String: StoreValue]) {
            count(values.count)
            for (name, value) in values {
                string(name)
                self.value(value)
            }
        }

        mutating func value(_ value: StoreValue) {
            switch value {
            case .null: bytes.append(Tag.null.rawValue)
            case .bool(let flag): bytes.append(flag ? Tag.trueValue.rawValue : Tag.falseValue.rawValue)
            case .int(let number):
                bytes.append(Tag.int.rawValue)
                fixed(UInt64(bitPattern: number))
            case .uint(let number):
                bytes.append(Tag.uint.rawValue)
                fixed(number)
            case .double(let number):
                bytes.append(Tag.double.rawValue)
                fixed(number.bitPattern)
            case .string(let text):
                bytes.append(Tag.string.rawValue)
                string(text)
            case .date(let date):
                bytes.append(Tag.date.rawValue)
                fixed(date.timeIntervalSinceReferenceDate.bitPattern)
            case .data(let data):
                bytes.append(Tag.data.rawValue)
                count(data.count)
                bytes.append(contentsOf: data)
            case .uuid(let uuid):
                bytes.append(Tag.uuid.rawValue)
                withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
            case .reference(let id):
                // A global reference: entity and global identifier (the pseudo-store `sync`).
                if id.storeIdentifier == "sync", case .string(let global) = id.primaryKey {
                    bytes.append(Tag.reference.rawValue)
                    string(id.entityName)
                    string(global)
                } else {
                    json(value)
                }
            case .decimal, .url, .array, .dictionary, .references:
                json(value)
            }
        }

        private mutating func json(_ value: StoreValue) {
            bytes.append(Tag.json.rawValue)
            let data = (try? JSONEncoder().encode(value)) ?? Data()
            count(data.count)
            bytes.append(contentsOf: data)
        }
    }

    private struct Reader {
        let buffer: UnsafeRawBufferPointer
        var position: Int

        /// How many bytes are left to read.
        var remaining: Int { buffer.count - position }

        mutating func byte() -> UInt8? {
            guard position < buffer.count else { return nil }
            defer { position += 1 }
            return buffer[position]
        }

        mutating func count() -> Int? {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while let next = byte() {
                result |= UInt64(next & 0x7F) << shift
                if next & 0x80 == 0 { return result <= UInt64(Int.max) ? Int(result) : nil }
                shift += 7
                if shift > 63 { return nil }
            }
            return nil
        }

        mutating func fixed() -> UInt64? {
            guard remaining >= 8 else { return nil }
            var value: UInt64 = 0
            withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: .init(rebasing: buffer[position..<position + 8])) }
            position += 8
            return UInt64(littleEndian: value)
        }

        mutating func bytes(_ count: Int) -> UnsafeRawBufferPointer? {
            guard count >= 0, count <= remaining else { return nil }
            defer { position += count }
            return UnsafeRawBufferPointer(rebasing: buffer[position..<position + count])
        }

        mutating func string() -> String? {
            guard let length = count(), let utf8 = bytes(length) else { return nil }
            return String(decoding: utf8, as: UTF8.self)
        }

        /// What ``Writer/stamps(_:)`` wrote.
        mutating func stamps() -> [String: SyncStamp]? {
            guard let groups = count() else { return nil }
            var stamps: [String: SyncStamp] = [:]
            for _ in 0..<groups {
                guard let milliseconds = fixed(), let counter = count(), let replica = string(),
                    let names = count(), let counterBits = UInt32(exactly: counter)
                else { return nil }
                let stamp = SyncStamp(
                    milliseconds: Int64(bitPattern: milliseconds), counter: Int32(bitPattern: counterBits),
                    replica: replica)
                // Room for the first group's names (mostly every name): a count read from the blob
                // is not trusted, and a name takes one byte at least.
                if stamps.isEmpty { stamps.reserveCapacity(min(names, remaining)) }
                for _ in 0..<names {
                    guard let name = string() else { return nil }
                    stamps[name] = stamp
                }
            }
            return stamps
        }

        /// What ``Writer/repeatable(_:previous:)`` wrote.
        mutating func repeatable(previous: inout String?) -> String? {
            guard let length = count() else { return nil }
            if length > 0 {
                guard let utf8 = bytes(length) else { return nil }
                let text = String(decoding: utf8, as: UTF8.self)
                previous = text
                return text
            }
            switch byte() {
            case 0:
                previous = ""
                return ""
            case 1: return previous
            default: return nil
            }
        }

        /// What ``Writer/values(_:)`` wrote.
        mutating func values() -> [String: StoreValue]? {
            guard let count = count() else { return nil }
            var values: [String: StoreValue] = [:]
            // A count read from the blob is not trusted: an entry takes two bytes at least.
            values.reserveCapacity(min(count, remaining / 2))
            for _ in 0..<count {
                guard let name = string(), let value = value() else { return nil }
                values[name] = value
            }
            return values
        }

        mutating func value() -> StoreValue? {
            guard let raw = byte(), let tag = Tag(rawValue: raw) else { return nil }
            switch tag {
            case .null: return .null
            case .falseValue: return .bool(false)
            case .trueValue: return .bool(true)
            case .int: return fixed().map { .int(Int64(bitPattern: $0)) }
            case .uint: return fixed().map { .uint($0) }
            case .double: return fixed().map { .double(Double(bitPattern: $0)) }
            case .string: return string().map { .string($0) }
            case .date: return fixed().map { .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: $0))) }
            case .data:
                guard let length = count(), let raw = bytes(length) else { return nil }
                return .data(Data(raw))
            case .uuid:
                guard let raw = bytes(16) else { return nil }
                var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: raw) }
                return .uuid(UUID(uuid: uuid))
            case .reference:
                guard let entity = string(), let global = string() else { return nil }
                return .reference(SyncModelState.reference(to: global, entity: entity))
            case .json:
                guard let length = count(), let raw = bytes(length) else { return nil }
                return try? JSONDecoder().decode(StoreValue.self, from: Data(raw))
            }
        }

        /// Moves past one value that ``value()`` would read, without making it; `false` for one it
        /// would not read, or for one embedded as JSON (it reads only if its JSON does).
        mutating func skipValue() -> Bool {
            guard let raw = byte(), let tag = Tag(rawValue: raw) else { return false }
            switch tag {
            case .null, .falseValue, .trueValue: return true
            case .int, .uint, .double, .date: return fixed() != nil
            case .string, .data:
                guard let length = count() else { return false }
                return bytes(length) != nil
            case .uuid: return bytes(16) != nil
            case .reference:
                guard let entity = count(), bytes(entity) != nil, let global = count() else { return false }
                return bytes(global) != nil
            case .json: return false
            }
        }
    }
}

/// The packed forms of a push's changes and of a pulled page's models: one blob instead of a JSON
/// object per change or model, whose keys and nested stamps cost JSON's coders more than the rest
/// of a first push's page.
///
/// Changes: `0xC1`, a count, and for each change its global identifier, entity, kind (`0` insert,
/// `1` update, `2` delete), values and base (a count and that many (name, value) pairs, each value
/// as in ``SyncRecordCoding``) and stamp (milliseconds, counter, replica). Models: `0xC2`, a count,
/// and for each model its global identifier, entity, `0` (deleted) or `1` and its values, and its
/// stamps (as in a record's `0xB3` form, after the format byte). An entity or stamp replica equal
/// to the previous one is written as the length `0` followed by the flag byte `1`, so the text
/// repeated in every change of a page is written once; every other string is written as its
/// length and UTF-8, as in the records.
extension SyncRecordCoding {
    private static let changesFormat: UInt8 = 0xC1

    static func encode(changes: [SyncChange]) -> Data {
        var writer = Writer()
        writer.bytes.reserveCapacity(64 + 96 * changes.count)
        writer.bytes.append(changesFormat)
        writer.count(changes.count)
        var entity: String?
        var replica: String?
        for change in changes {
            writer.string(change.globalID)
            writer.repeatable(change.entity, previous: &entity)
            switch change.kind {
            case .insert: writer.bytes.append(0)
            case .update: writer.bytes.append(1)
            case .delete: writer.bytes.append(2)
            }
            writer.values(change.values)
            writer.values(change.base)
            writer.fixed(UInt64(bitPattern: change.stamp.milliseconds))
            writer.count(Int(UInt32(bitPattern: change.stamp.counter)))
            writer.repeatable(change.stamp.replica, previous: &replica)
        }
        return Data(writer.bytes)
    }

    private static let modelsFormat: UInt8 = 0xC2

    static func encode(models: [SyncModelState]) -> Data {
        var writer = Writer()
        writer.bytes.reserveCapacity(64 + 128 * models.count)
        writer.bytes.append(modelsFormat)
        writer.count(models.count)
        var entity: String?
        for model in models {
            writer.string(model.globalID)
            writer.repeatable(model.entity, previous: &entity)
            if let values = model.values {
                writer.bytes.append(1)
                writer.values(values)
            } else {
                writer.bytes.append(0)
            }
            writer.stamps(model.stamps)
        }
        return Data(writer.bytes)
    }

    /// Models written by ``encode(models:)``; `nil` for a blob that is not one whole.
    static func decodeModels(_ data: Data) -> [SyncModelState]? {
        var entity: String?
        // A model takes five bytes at least.
        return decodeList(data, format: modelsFormat, smallest: 5, checkingCount: acceptingAnyCount) { reader in
            guard let global = reader.string(), let entityName = reader.repeatable(previous: &entity),
                let present = reader.byte()
            else { return nil }
            var values: [String: StoreValue]?
            switch present {
            case 0: values = nil
            case 1:
                guard let read = reader.values() else { return nil }
                values = read
            default: return nil
            }
            guard let stamps = reader.stamps() else { return nil }
            return SyncModelState(globalID: global, entity: entityName, values: values, stamps: stamps)
        }
    }

    /// Changes written by ``encode(changes:)``; `nil` for a blob that is not one whole.
    static func decodeChanges(_ data: Data) -> [SyncChange]? {
        decodeChanges(data, checkingCount: acceptingAnyCount)
    }

    /// A count check that lets every count through.
    private static func acceptingAnyCount(_ count: Int) {}

    /// Changes written by ``encode(changes:)``, `nil` for a blob that is not one whole; a blob whose
    /// count says more than `limit` throws ``SyncPushRequest/TooManyChanges`` before any change is
    /// read, however short it is.
    static func decodeChanges(_ data: Data, limit: Int) throws -> [SyncChange]? {
        try decodeChanges(data) { count in
            if count > limit { throw SyncPushRequest.TooManyChanges(count: count, limit: limit) }
        }
    }

    private static func decodeChanges(_ data: Data, checkingCount: (Int) throws -> Void) rethrows -> [SyncChange]? {
        var entity: String?
        var replica: String?
        // A change takes fifteen bytes at least.
        return try decodeList(data, format: changesFormat, smallest: 15, checkingCount: checkingCount) { reader in
            guard let global = reader.string(), let entityName = reader.repeatable(previous: &entity),
                let kindByte = reader.byte()
            else { return nil }
            let kind: SyncChange.Kind
            switch kindByte {
            case 0: kind = .insert
            case 1: kind = .update
            case 2: kind = .delete
            default: return nil
            }
            guard let changed = reader.values(), let base = reader.values(), let milliseconds = reader.fixed(),
                let counter = reader.count(), let counterBits = UInt32(exactly: counter),
                let stampReplica = reader.repeatable(previous: &replica)
            else { return nil }
            return SyncChange(
                globalID: global, entity: entityName, kind: kind, values: changed, base: base,
                stamp: SyncStamp(
                    milliseconds: Int64(bitPattern: milliseconds), counter: Int32(bitPattern: counterBits),
                    replica: stampReplica))
        }
    }

    /// A blob of `format`: the byte, a count, and that many elements `element` reads, each taking
    /// `smallest` bytes at least; `nil` when an element does not read or bytes follow the last.
    /// `checkingCount` sees the count before any element is read, and may throw to stop there.
    private static func decodeList<Element>(
        _ data: Data, format: UInt8, smallest: Int, checkingCount: (Int) throws -> Void,
        element: (inout Reader) -> Element?
    ) rethrows -> [Element]? {
        guard data.first == format else { return nil }
        return try data.withUnsafeBytes { buffer -> [Element]? in
            var reader = Reader(buffer: buffer, position: 1)
            guard let count = reader.count() else { return nil }
            try checkingCount(count)
            var list: [Element] = []
            // A count read from the blob is not trusted: it is bounded by the bytes left.
            list.reserveCapacity(min(count, reader.remaining / smallest))
            for _ in 0..<count {
                guard let next = element(&reader) else { return nil }
                list.append(next)
            }
            return reader.remaining == 0 ? list : nil
        }
    }
}

/// Changes to a stored record's stamps and base values written from the blob's bytes: the entries
/// a change leaves alone are copied as they are, not decoded into a dictionary of new strings and
/// encoded again, which cost an acknowledged update more than the rest of its bookkeeping.
///
/// Each gives a blob that decodes to exactly what decoding the old one, changing the dictionary and
/// encoding it would (the entries kept are written first and the changed ones after them, so even
/// a name that another spelling of it stands for reads as changed). A blob these do not read whole
/// in the compact form (JSON, the `0xB2` stamps, a value embedded as JSON, anything cut or unknown)
/// goes through the dictionary instead, as does a change of more than a few properties.
extension SyncRecordCoding {
    /// Up to how many changed properties a blob is patched in place: each kept name is compared
    /// with every changed one.
    private static let patchedNamesLimit = 8

    /// `data`'s stamps (nothing when it does not read) with the properties `names` all carrying
    /// `stamp`, written in the `0xB3` form.
    static func restamp(_ data: Data, names: some Collection<String>, stamp: SyncStamp) -> Data {
        if names.count <= patchedNamesLimit, data.first == stampsFormat,
            let patched = patchedStamps(data, names: names, stamp: stamp)
        {
            return patched
        }
        var stamps = decodeStamps(data) ?? [:]
        for name in names { stamps[name] = stamp }
        return encode(stamps)
    }

    /// `data`'s values (nothing when it does not read) with `values` written over them, in the
    /// `0xB1` form.
    static func overlay(_ data: Data, with values: [String: StoreValue]) -> Data {
        if values.count <= patchedNamesLimit, data.first == valuesFormat,
            let patched = patchedValues(data, with: values)
        {
            return patched
        }
        var base = decodeValues(data) ?? [:]
        base.merge(values) { $1 }
        return encode(base)
    }

    /// The `0xB3` blob `data` with `names` moved to a group of their own for `stamp`; `nil` when it
    /// does not read whole, or when a group it keeps has that stamp already (the dictionary's
    /// encoding would write them as one group).
    private static func patchedStamps(_ data: Data, names: some Collection<String>, stamp: SyncStamp) -> Data? {
        let changed = names.map { Array($0.utf8) }
        let replica = Array(stamp.replica.utf8)
        return data.withUnsafeBytes { buffer -> Data? in
            var reader = Reader(buffer: buffer, position: 1)
            guard let groups = reader.count(), groups <= reader.remaining else { return nil }
            // Each kept group: where its stamp's bytes lie, and where each name it keeps lies.
            var kept: [(stamp: Range<Int>, names: [Range<Int>])] = []
            for _ in 0..<groups {
                let start = reader.position
                guard let milliseconds = reader.fixed(), let counter = reader.count(),
                    let counterBits = UInt32(exactly: counter), let replicaLength = reader.count(),
                    let replicaBytes = reader.bytes(replicaLength)
                else { return nil }
                let header = start..<reader.position
                guard let count = reader.count() else { return nil }
                if Int64(bitPattern: milliseconds) == stamp.milliseconds
                    && Int32(bitPattern: counterBits) == stamp.counter && replicaBytes.elementsEqual(replica)
                {
                    return nil
                }
                var names: [Range<Int>] = []
                for _ in 0..<count {
                    let nameStart = reader.position
                    guard let length = reader.count(), let name = reader.bytes(length) else { return nil }
                    if !changed.contains(where: { name.elementsEqual($0) }) {
                        names.append(nameStart..<reader.position)
                    }
                }
                if !names.isEmpty { kept.append((header, names)) }
            }
            var writer = Writer()
            writer.bytes.reserveCapacity(buffer.count + 16 + replica.count)
            writer.bytes.append(stampsFormat)
            writer.count(kept.count + (changed.isEmpty ? 0 : 1))
            for (header, names) in kept {
                writer.bytes.append(contentsOf: buffer[header])
                writer.count(names.count)
                for name in names { writer.bytes.append(contentsOf: buffer[name]) }
            }
            if !changed.isEmpty {
                writer.fixed(UInt64(bitPattern: stamp.milliseconds))
                writer.count(Int(UInt32(bitPattern: stamp.counter)))
                writer.count(replica.count)
                writer.bytes.append(contentsOf: replica)
                writer.count(changed.count)
                for name in changed {
                    writer.count(name.count)
                    writer.bytes.append(contentsOf: name)
                }
            }
            return Data(writer.bytes)
        }
    }

    /// The `0xB1` blob `data` with the entries of `values`' names dropped and `values` written after
    /// the others; `nil` when it does not read whole, or holds a value embedded as JSON (which
    /// reads only if its JSON does).
    private static func patchedValues(_ data: Data, with values: [String: StoreValue]) -> Data? {
        let changed = values.keys.map { Array($0.utf8) }
        return data.withUnsafeBytes { buffer -> Data? in
            var reader = Reader(buffer: buffer, position: 1)
            guard let count = reader.count(), count <= reader.remaining else { return nil }
            var kept: [Range<Int>] = []
            for _ in 0..<count {
                let start = reader.position
                guard let length = reader.count(), let name = reader.bytes(length), reader.skipValue() else {
                    return nil
                }
                if !changed.contains(where: { name.elementsEqual($0) }) { kept.append(start..<reader.position) }
            }
            var writer = Writer()
            writer.bytes.reserveCapacity(buffer.count + 32 * values.count)
            writer.bytes.append(valuesFormat)
            writer.count(kept.count + values.count)
            for entry in kept { writer.bytes.append(contentsOf: buffer[entry]) }
            for (name, value) in values {
                writer.string(name)
                writer.value(value)
            }
            return Data(writer.bytes)
        }
    }
}
