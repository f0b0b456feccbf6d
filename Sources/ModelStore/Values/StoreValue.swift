import Foundation

/// A value as a store holds it: the closed, `Sendable` set of everything a model can persist.
///
/// Every attribute converts to exactly one `StoreValue` case, so an adapter can index, compare,
/// encode and filter values without knowing the Swift types of the models that produced them:
///
/// | Swift type | case |
/// | --- | --- |
/// | `Bool` | ``bool(_:)`` |
/// | `Int`, `Int8` … `Int64`, `UInt8` … `UInt32` | ``int(_:)`` |
/// | `UInt`, `UInt64` | ``uint(_:)`` |
/// | `Double`, `Float` | ``double(_:)`` |
/// | `Decimal` | ``decimal(_:)`` |
/// | `String` | ``string(_:)`` |
/// | `Date`, `Data`, `UUID`, `URL` | ``date(_:)``, ``data(_:)``, ``uuid(_:)``, ``url(_:)`` |
/// | `Optional.none` | ``null`` |
/// | arrays, dictionaries with non-`String` keys (as key/value pairs) | ``array(_:)`` |
/// | dictionaries with `String` keys, `Codable` structs | ``dictionary(_:)`` |
/// | `RawRepresentable` enums | the case of their raw value |
/// | to-one relationship | ``reference(_:)`` or ``null`` |
/// | to-many relationship | ``references(_:)`` |
public enum StoreValue: Sendable, Hashable {
    /// No value: `nil`, or an empty to-one relationship.
    case null
    /// A Boolean.
    case bool(Bool)
    /// A signed integer of any width, and unsigned integers up to 32 bits.
    case int(Int64)
    /// An unsigned 64-bit integer (`UInt`, `UInt64`).
    case uint(UInt64)
    /// A floating-point number (`Double`, or a `Float` widened exactly).
    case double(Double)
    /// A decimal number, kept exactly.
    case decimal(Decimal)
    /// A string.
    case string(String)
    /// A point in time.
    case date(Date)
    /// Raw bytes.
    case data(Data)
    /// A UUID.
    case uuid(UUID)
    /// A URL.
    case url(URL)
    /// An ordered collection of values.
    case array([StoreValue])
    /// Named values: a `String`-keyed dictionary or the fields of a composite `Codable` value.
    case dictionary([String: StoreValue])
    /// A to-one relationship: the identifier of the related model.
    ///
    /// Held out of line, so that every other value, and every array of values, stays small.
    indirect case reference(PersistentIdentifier)
    /// A to-many relationship: the identifiers of the related models, in order.
    case references([PersistentIdentifier])

    /// Whether this is ``null``.
    @inlinable public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension StoreValue {
    /// A short name of the case, for error messages (never the value itself).
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int: "int"
        case .uint: "uint"
        case .double: "double"
        case .decimal: "decimal"
        case .string: "string"
        case .date: "date"
        case .data: "data"
        case .uuid: "uuid"
        case .url: "url"
        case .array: "array"
        case .dictionary: "dictionary"
        case .reference: "reference"
        case .references: "references"
        }
    }

    /// The identifiers this value refers to: one for ``reference(_:)``, all for ``references(_:)``, none otherwise.
    public var referencedIdentifiers: [PersistentIdentifier] {
        switch self {
        case .reference(let id): [id]
        case .references(let ids): ids
        default: []
        }
    }
}

extension StoreValue: CustomStringConvertible {
    /// A readable rendering, for debugging and tools.
    public var description: String {
        switch self {
        case .null: "nil"
        case .bool(let v): String(v)
        case .int(let v): String(v)
        case .uint(let v): String(v)
        case .double(let v): String(v)
        case .decimal(let v): v.description
        case .string(let v): "\"\(v)\""
        case .date(let v): v.formatted(.iso8601)
        case .data(let v): "<\(v.count) bytes>"
        case .uuid(let v): v.uuidString
        case .url(let v): v.absoluteString
        case .array(let v): "[" + v.map(\.description).joined(separator: ", ") + "]"
        case .dictionary(let v):
            "[" + v.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "]"
        case .reference(let id): id.description
        case .references(let ids): "[" + ids.map(\.description).joined(separator: ", ") + "]"
        }
    }
}

extension StoreValue {
    /// Orders two values the way Swift orders the values they came from.
    ///
    /// `nil` sorts before every other value; numbers compare numerically across ``int(_:)``,
    /// ``uint(_:)``, ``double(_:)`` and ``decimal(_:)``; strings compare by Unicode scalar values
    /// (Swift's `<` on `String`); arrays compare lexicographically. Values of unrelated kinds
    /// compare by kind, so the order is total and every adapter can reproduce it.
    public static func compare(_ lhs: StoreValue, _ rhs: StoreValue) -> ComparisonResult {
        switch (lhs, rhs) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case (.bool(let a), .bool(let b)): return a == b ? .orderedSame : (!a ? .orderedAscending : .orderedDescending)
        case (.int(let a), .int(let b)): return order(a, b)
        case (.uint(let a), .uint(let b)): return order(a, b)
        case (.int(let a), .uint(let b)): return a < 0 ? .orderedAscending : order(UInt64(a), b)
        case (.uint(let a), .int(let b)): return b < 0 ? .orderedDescending : order(a, UInt64(b))
        case (.double(let a), .double(let b)): return order(a, b)
        case (.decimal(let a), .decimal(let b)): return order(a, b)
        case (.string(let a), .string(let b)): return order(a, b)
        case (.date(let a), .date(let b)): return order(a, b)
        case (.uuid(let a), .uuid(let b)): return order(a.uuidString, b.uuidString)
        case (.url(let a), .url(let b)): return order(a.absoluteString, b.absoluteString)
        case (.data(let a), .data(let b)):
            return a.lexicographicallyPrecedes(b) ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        case (.reference(let a), .reference(let b)): return order(a, b)
        case (.array(let a), .array(let b)):
            for (x, y) in zip(a, b) {
                let r = compare(x, y)
                if r != .orderedSame { return r }
            }
            return order(a.count, b.count)
        default:
            if let a = lhs.numericValue, let b = rhs.numericValue { return order(a, b) }
            return order(lhs.kindRank, rhs.kindRank)
        }
    }

    @inline(__always)
    static func order<C: Comparable>(_ a: C, _ b: C) -> ComparisonResult {
        a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
    }

    /// The value as a `Double`, for comparing numbers of different kinds.
    var numericValue: Double? {
        switch self {
        case .int(let v): Double(v)
        case .uint(let v): Double(v)
        case .double(let v): v
        case .decimal(let v): NSDecimalNumber(decimal: v).doubleValue
        default: nil
        }
    }

    private var kindRank: Int {
        switch self {
        case .null: 0
        case .bool: 1
        case .int, .uint, .double, .decimal: 2
        case .string: 3
        case .date: 4
        case .data: 5
        case .uuid: 6
        case .url: 7
        case .array: 8
        case .dictionary: 9
        case .reference: 10
        case .references: 11
        }
    }
}

extension StoreValue: Codable {
    private struct KindKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Encodes the value as a one-entry object keyed by its kind, for example `{"int": 3}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: KindKey.self)
        let key = KindKey(stringValue: kindName)
        switch self {
        case .null: try container.encodeNil(forKey: key)
        case .bool(let v): try container.encode(v, forKey: key)
        case .int(let v): try container.encode(v, forKey: key)
        case .uint(let v): try container.encode(v, forKey: key)
        case .double(let v): try container.encode(v, forKey: key)
        case .decimal(let v): try container.encode(v.description, forKey: key)
        case .string(let v): try container.encode(v, forKey: key)
        case .date(let v): try container.encode(v.timeIntervalSinceReferenceDate, forKey: key)
        case .data(let v): try container.encode(v, forKey: key)
        case .uuid(let v): try container.encode(v, forKey: key)
        case .url(let v): try container.encode(v, forKey: key)
        case .array(let v): try container.encode(v, forKey: key)
        case .dictionary(let v): try container.encode(v, forKey: key)
        case .reference(let v): try container.encode(v, forKey: key)
        case .references(let v): try container.encode(v, forKey: key)
        }
    }

    /// Decodes a value written by ``encode(to:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: KindKey.self)
        guard let key = container.allKeys.first, container.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "a stored value is an object with exactly one kind key"))
        }
        switch key.stringValue {
        case "null": self = .null
        case "bool": self = .bool(try container.decode(Bool.self, forKey: key))
        case "int": self = .int(try container.decode(Int64.self, forKey: key))
        case "uint": self = .uint(try container.decode(UInt64.self, forKey: key))
        case "double": self = .double(try container.decode(Double.self, forKey: key))
        case "decimal":
            let text = try container.decode(String.self, forKey: key)
            guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "not a decimal number")
            }
            self = .decimal(value)
        case "string": self = .string(try container.decode(String.self, forKey: key))
        case "date": self = .date(Date(timeIntervalSinceReferenceDate: try container.decode(Double.self, forKey: key)))
        case "data": self = .data(try container.decode(Data.self, forKey: key))
        case "uuid": self = .uuid(try container.decode(UUID.self, forKey: key))
        case "url": self = .url(try container.decode(URL.self, forKey: key))
        case "array": self = .array(try container.decode([StoreValue].self, forKey: key))
        case "dictionary": self = .dictionary(try container.decode([String: StoreValue].self, forKey: key))
        case "reference": self = .reference(try container.decode(PersistentIdentifier.self, forKey: key))
        case "references": self = .references(try container.decode([PersistentIdentifier].self, forKey: key))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "unknown stored value kind '\(key.stringValue)'")
        }
    }
}
