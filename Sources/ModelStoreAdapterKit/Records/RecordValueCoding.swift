import Foundation
import ModelStore

/// What identifiers are encoded against: the store's own identifier (written as one bit) and the
/// entity codes of the records' shape table (written as a small number).
///
/// Records written against one context are read back against an equal one: the same store
/// identifier and the shape table the records were written with.
public struct IdentifierContext: Sendable {
    /// The identifier of the store that owns the records.
    public let storeIdentifier: String
    /// The records' shapes.
    public let shapes: ShapeTable
    /// Entity names by code, shared so every decoded identifier reuses the same string storage.
    public let entityNames: [String]

    /// The context of records of the store `storeIdentifier` written with `shapes`.
    public init(storeIdentifier: String, shapes: ShapeTable) {
        self.storeIdentifier = storeIdentifier
        self.shapes = shapes
        self.entityNames = shapes.entities.map(\.name)
    }
}

/// Value tags of the binary encoding of `StoreValue`. Documented in the append log's FORMAT.md;
/// never renumber.
@usableFromInline
enum RecordValueTag: UInt8 {
    case null = 0
    case `false` = 1
    case `true` = 2
    case int = 3
    case uint = 4
    case double = 5
    case decimal = 6
    case string = 7
    case date = 8
    case data = 9
    case uuid = 10
    case url = 11
    case array = 12
    case dictionary = 13
    case reference = 14
    case references = 15
}

/// Flag bits of an encoded identifier's first byte.
@usableFromInline
enum IdentifierFlags {
    /// The identifier belongs to the store that owns the file.
    @usableFromInline static let ownStore: UInt8 = 0
    /// Another store's identifier follows as a string.
    @usableFromInline static let otherStore: UInt8 = 1
    /// The identifier is temporary (it has no store).
    @usableFromInline static let temporary: UInt8 = 2
    /// The mask of the store bits.
    @usableFromInline static let storeMask: UInt8 = 3
    /// The key is a string (otherwise a zigzag integer).
    @usableFromInline static let stringKey: UInt8 = 4
    /// The entity name follows as a string (otherwise its code in the shape table).
    @usableFromInline static let inlineEntity: UInt8 = 8
}

/// How deep arrays and dictionaries may nest in a stored value; deeper input is rejected rather
/// than allowed to exhaust the stack.
@usableFromInline let maximumValueDepth = 64

extension ByteWriter {
    /// Appends an identifier: flags, entity code (or name), key, and the store only if it is foreign.
    @inlinable
    public mutating func write(_ id: PersistentIdentifier, in context: IdentifierContext) {
        write(id, code: context.shapes.code(of: id.entityName), in: context)
    }

    /// Appends an identifier whose entity code the caller already looked up in `context`'s shape
    /// table (`nil`: the table lacks the entity, so its name is written), which saves a look-up of
    /// the entity's name per identifier when a record lists many.
    @inlinable @inline(__always)
    public mutating func write(_ id: PersistentIdentifier, code: Int?, in context: IdentifierContext) {
        // The usual identifier, the store's own with an integer key and a coded entity, is written in
        // line: called out of line, every identifier was copied (its names retained) for the call.
        if let code, case .int(let key) = id.primaryKey, id.storeIdentifier == context.storeIdentifier {
            write(IdentifierFlags.ownStore)
            writeVarint(code)
            writeSigned(key)
            return
        }
        writeAnyIdentifier(id, code: code, in: context)
    }

    /// Appends any identifier: flags, then the entity (code or name), the key and another store's name.
    @usableFromInline
    mutating func writeAnyIdentifier(_ id: PersistentIdentifier, code: Int?, in context: IdentifierContext) {
        var flags: UInt8
        switch id.storeIdentifier {
        case context.storeIdentifier?: flags = IdentifierFlags.ownStore
        case nil: flags = IdentifierFlags.temporary
        default: flags = IdentifierFlags.otherStore
        }
        if case .string = id.primaryKey { flags |= IdentifierFlags.stringKey }
        if code == nil { flags |= IdentifierFlags.inlineEntity }
        write(flags)
        if let code { writeVarint(code) } else { write(id.entityName) }
        switch id.primaryKey {
        case .int(let key): writeSigned(key)
        case .string(let key): write(key)
        }
        if flags & IdentifierFlags.storeMask == IdentifierFlags.otherStore, let store = id.storeIdentifier {
            write(store)
        }
    }

    /// Appends a value: its tag, then its payload.
    @inlinable
    public mutating func write(_ value: StoreValue, in context: IdentifierContext) {
        switch value {
        case .null: write(RecordValueTag.null.rawValue)
        case .bool(let v): write(v ? RecordValueTag.true.rawValue : RecordValueTag.false.rawValue)
        case .int(let v):
            write(RecordValueTag.int.rawValue)
            writeSigned(v)
        case .uint(let v):
            write(RecordValueTag.uint.rawValue)
            writeVarint(v)
        case .double(let v):
            write(RecordValueTag.double.rawValue)
            write(v)
        case .decimal(let v):
            write(RecordValueTag.decimal.rawValue)
            write(v.description)
        case .string(let v):
            write(RecordValueTag.string.rawValue)
            write(v)
        case .date(let v):
            write(RecordValueTag.date.rawValue)
            write(v.timeIntervalSinceReferenceDate)
        case .data(let v):
            write(RecordValueTag.data.rawValue)
            write(v)
        case .uuid(let v):
            write(RecordValueTag.uuid.rawValue)
            withUnsafeBytes(of: v.uuid) { bytes.append(contentsOf: $0) }
        case .url(let v):
            write(RecordValueTag.url.rawValue)
            write(v.absoluteString)
        case .array(let values):
            write(RecordValueTag.array.rawValue)
            writeVarint(values.count)
            for value in values { write(value, in: context) }
        case .dictionary(let values):
            write(RecordValueTag.dictionary.rawValue)
            writeVarint(values.count)
            // Sorted by key, so equal dictionaries encode to equal bytes.
            for key in values.keys.sorted() {
                write(key)
                write(values[key]!, in: context)
            }
        case .reference(let id):
            write(RecordValueTag.reference.rawValue)
            write(id, in: context)
        case .references(let ids):
            write(RecordValueTag.references.rawValue)
            writeVarint(ids.count)
            for id in ids { write(id, in: context) }
        }
    }
}

extension ByteReader {
    /// Reads an identifier and the code of its entity in the file's shape table (`nil` when the
    /// entity is not in the table).
    @inlinable
    public mutating func readIdentifier(in context: IdentifierContext) throws -> (code: Int?, id: PersistentIdentifier)
    {
        let flags = try readByte()
        guard flags & ~(IdentifierFlags.storeMask | IdentifierFlags.stringKey | IdentifierFlags.inlineEntity) == 0,
            flags & IdentifierFlags.storeMask != 3
        else { throw error("an identifier has unknown flags \(flags)") }
        var code: Int?
        let entityName: String
        if flags & IdentifierFlags.inlineEntity != 0 {
            entityName = try readString()
        } else {
            let index = try readCount()
            guard index < context.entityNames.count else { throw error("an identifier names entity code \(index)") }
            code = index
            entityName = context.entityNames[index]
        }
        let key: PrimaryKey =
            flags & IdentifierFlags.stringKey != 0 ? .string(try readString()) : .int(try readSigned())
        switch flags & IdentifierFlags.storeMask {
        case IdentifierFlags.ownStore:
            return (code, Self.identifier(context.storeIdentifier, entityName, key))
        case IdentifierFlags.otherStore:
            return (code, Self.identifier(try readString(), entityName, key))
        default:
            return (code, try Self.temporaryIdentifier(entityName, key))
        }
    }

    @inlinable @inline(__always)
    static func identifier(_ store: String, _ entityName: String, _ key: PrimaryKey) -> PersistentIdentifier {
        switch key {
        case .int(let int): .identifier(for: store, entityName: entityName, primaryKey: int)
        case .string(let string): .identifier(for: store, entityName: entityName, primaryKey: string)
        }
    }

    /// A temporary identifier exactly as it was written. Only a reference to a model that was never
    /// saved can be temporary; the public API mints no such identifier, so it goes through `Codable`.
    @usableFromInline
    static func temporaryIdentifier(_ entityName: String, _ key: PrimaryKey) throws -> PersistentIdentifier {
        struct Temporary: Encodable {
            let entityName: String
            let primaryKey: PrimaryKey
        }
        let json = try JSONEncoder().encode(Temporary(entityName: entityName, primaryKey: key))
        return try JSONDecoder().decode(PersistentIdentifier.self, from: json)
    }

    /// Reads a value written by the writer's `write(_:in:)`, nested no deeper than 64 levels of
    /// arrays and dictionaries (`depth` counts the levels above it).
    @inlinable
    public mutating func readValue(in context: IdentifierContext, depth: Int = 0) throws -> StoreValue {
        let tagByte = try readByte()
        guard let tag = RecordValueTag(rawValue: tagByte) else { throw error("unknown value tag \(tagByte)") }
        switch tag {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int: return .int(try readSigned())
        case .uint: return .uint(try readVarint())
        case .double: return .double(try readDouble())
        case .decimal:
            let text = try readString()
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw error("a decimal value is not a number")
            }
            return .decimal(decimal)
        case .string: return .string(try readString())
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try readDouble()))
        case .data: return .data(try readData())
        case .uuid:
            let raw = try readRaw(16)
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: raw) }
            return .uuid(UUID(uuid: uuid))
        case .url:
            let text = try readString()
            guard let url = URL(string: text) else { throw error("a URL value does not parse") }
            return .url(url)
        case .array:
            guard depth < maximumValueDepth else { throw error("values nest deeper than \(maximumValueDepth)") }
            let count = try readCount(limit: remaining)
            var values: [StoreValue] = []
            values.reserveCapacity(count)
            for _ in 0..<count { values.append(try readValue(in: context, depth: depth + 1)) }
            return .array(values)
        case .dictionary:
            guard depth < maximumValueDepth else { throw error("values nest deeper than \(maximumValueDepth)") }
            let count = try readCount(limit: remaining)
            var values: [String: StoreValue] = [:]
            values.reserveCapacity(count)
            for _ in 0..<count {
                let key = try readString()
                values[key] = try readValue(in: context, depth: depth + 1)
            }
            return .dictionary(values)
        case .reference:
            return .reference(try readIdentifier(in: context).id)
        case .references:
            let count = try readCount(limit: remaining)
            var ids: [PersistentIdentifier] = []
            ids.reserveCapacity(count)
            for _ in 0..<count { ids.append(try readIdentifier(in: context).id) }
            return .references(ids)
        }
    }
}

/// Estimates of encoded sizes, for figures such as the live data of an append log. They follow the
/// encoding closely but count every identifier as if its entity had a code.
public enum EncodedSize {
    /// The size of a varint.
    @inlinable @inline(__always)
    public static func varint(_ value: UInt64) -> Int {
        var value = value
        var size = 1
        while value >= 0x80 {
            value >>= 7
            size += 1
        }
        return size
    }

    /// The size of an identifier of the store itself.
    public static func identifier(_ id: PersistentIdentifier) -> Int {
        switch id.primaryKey {
        case .int(let key): 2 + varint(UInt64(bitPattern: (key << 1) ^ (key >> 63)))
        case .string(let key): 2 + varint(UInt64(key.utf8.count)) + key.utf8.count
        }
    }

    /// The size of a value.
    public static func value(_ value: StoreValue) -> Int {
        switch value {
        case .null, .bool: 1
        case .int(let v): 1 + varint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
        case .uint(let v): 1 + varint(v)
        case .double, .date: 9
        case .decimal: 12
        case .string(let v): 1 + varint(UInt64(v.utf8.count)) + v.utf8.count
        case .data(let v): 1 + varint(UInt64(v.count)) + v.count
        case .uuid: 17
        case .url(let v): 3 + v.absoluteString.utf8.count
        case .array(let values): values.reduce(2) { $0 + Self.value($1) }
        case .dictionary(let values): values.reduce(2) { $0 + 1 + $1.key.utf8.count + Self.value($1.value) }
        case .reference(let id): 1 + identifier(id)
        case .references(let ids): ids.reduce(2) { $0 + identifier($1) }
        }
    }

    /// The size of a snapshot as a checkpoint row.
    public static func snapshot(_ snapshot: DefaultSnapshot) -> Int {
        row(snapshot.persistentIdentifier, snapshot.values)
    }

    /// The size of a model's identifier and values as a checkpoint row.
    public static func row(_ id: PersistentIdentifier, _ values: [StoreValue]) -> Int {
        values.reduce(identifier(id) + 1) { $0 + value($1) }
    }
}
