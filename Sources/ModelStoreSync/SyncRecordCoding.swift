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
        writer.count(values.count)
        for (name, value) in values {
            writer.string(name)
            writer.value(value)
        }
        return Data(writer.bytes)
    }

    static func encode(_ stamps: [String: SyncStamp]) -> Data {
        var groups: [SyncStamp: [String]] = [:]
        for (name, stamp) in stamps { groups[stamp, default: []].append(name) }
        var writer = Writer()
        writer.bytes.append(stampsFormat)
        writer.count(groups.count)
        for (stamp, names) in groups {
            writer.fixed(UInt64(bitPattern: stamp.milliseconds))
            writer.count(Int(UInt32(bitPattern: stamp.counter)))
            writer.string(stamp.replica)
            writer.count(names.count)
            for name in names { writer.string(name) }
        }
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
            guard let count = reader.count() else { return nil }
            var values: [String: StoreValue] = [:]
            // A count read from the blob is not trusted: an entry takes two bytes at least.
            values.reserveCapacity(min(count, reader.remaining / 2))
            for _ in 0..<count {
                guard let name = reader.string(), let value = reader.value() else { return nil }
                values[name] = value
            }
            return values
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
            guard let groups = reader.count() else { return nil }
            var stamps: [String: SyncStamp] = [:]
            for _ in 0..<groups {
                guard let milliseconds = reader.fixed(), let counter = reader.count(), let replica = reader.string(),
                    let names = reader.count(), let counterBits = UInt32(exactly: counter)
                else { return nil }
                let stamp = SyncStamp(
                    milliseconds: Int64(bitPattern: milliseconds), counter: Int32(bitPattern: counterBits),
                    replica: replica)
                for _ in 0..<names {
                    guard let name = reader.string() else { return nil }
                    stamps[name] = stamp
                }
            }
            return stamps
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
    }
}
