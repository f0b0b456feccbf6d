import Foundation

/// The stored type of an attribute, as the schema records it.
///
/// Adapters use it to describe entity shapes in file headers, to validate records read back
/// from disk, and to choose index and comparison strategies.
public indirect enum AttributeType: Sendable, Hashable, CustomStringConvertible {
    /// `Bool`.
    case bool
    /// A fixed-width integer of `bits` bits, signed or not.
    case integer(bits: Int, signed: Bool)
    /// `Double`.
    case double
    /// `Float`, held as ``StoreValue/double(_:)``.
    case float
    /// `Decimal`.
    case decimal
    /// `String`.
    case string
    /// `Date`.
    case date
    /// `Data`.
    case data
    /// `UUID`.
    case uuid
    /// `URL`.
    case url
    /// An optional of the wrapped type.
    case optional(AttributeType)
    /// An array of the element type.
    case array(AttributeType)
    /// A dictionary from the key type to the value type.
    case dictionary(key: AttributeType, value: AttributeType)
    /// A `RawRepresentable` enum, stored as its raw value.
    case enumeration(name: String, rawValue: AttributeType)
    /// A `Codable` struct stored as named fields.
    case composite(name: String)

    /// Whether values of this type may be `nil`.
    public var isOptional: Bool {
        if case .optional = self { return true }
        return false
    }

    /// The type without its outermost optional.
    public var unwrapped: AttributeType {
        if case .optional(let wrapped) = self { return wrapped }
        return self
    }

    /// The Swift spelling of the type.
    public var description: String {
        switch self {
        case .bool: "Bool"
        case .integer(let bits, let signed): (signed ? "Int" : "UInt") + (bits == 64 ? "" : String(bits))
        case .double: "Double"
        case .float: "Float"
        case .decimal: "Decimal"
        case .string: "String"
        case .date: "Date"
        case .data: "Data"
        case .uuid: "UUID"
        case .url: "URL"
        case .optional(let wrapped): "\(wrapped)?"
        case .array(let element): "[\(element)]"
        case .dictionary(let key, let value): "[\(key): \(value)]"
        case .enumeration(let name, _): name
        case .composite(let name): name
        }
    }
}

extension AttributeType {
    /// The stored value of a fresh attribute of this type: `nil`, zero, empty, or the epoch.
    public var zeroValue: StoreValue {
        switch self {
        case .bool: .bool(false)
        case .integer(let bits, let signed): (!signed && bits == 64) ? .uint(0) : .int(0)
        case .double, .float: .double(0)
        case .decimal: .decimal(0)
        case .string: .string("")
        case .date: .date(Date(timeIntervalSinceReferenceDate: 0))
        case .data: .data(Data())
        case .uuid: .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .url: .url(URL(string: "about:blank")!)
        case .optional: .null
        case .array: .array([])
        case .dictionary(let key, _): key == .string ? .dictionary([:]) : .array([])
        case .enumeration(_, let raw): raw.zeroValue
        case .composite: .dictionary([:])
        }
    }
}

extension AttributeType {
    /// Whether a value of this type is a value, encoded the same every time it is unchanged: every
    /// type but a composite `Codable` value, which may hold objects that change in place.
    var encodesByValue: Bool {
        switch self {
        case .bool, .integer, .double, .float, .decimal, .string, .date, .data, .uuid, .url: true
        case .optional(let wrapped), .array(let wrapped): wrapped.encodesByValue
        case .dictionary(let key, let value): key.encodesByValue && value.encodesByValue
        case .enumeration(_, let raw): raw.encodesByValue
        case .composite: false
        }
    }
}

extension AttributeType: Codable {
    private enum CodingKeys: String, CodingKey { case type, bits, signed, wrapped, key, value, name, rawValue }

    /// Encodes the type as an object such as `{"type": "integer", "bits": 64, "signed": true}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .bool: try container.encode("bool", forKey: .type)
        case .integer(let bits, let signed):
            try container.encode("integer", forKey: .type)
            try container.encode(bits, forKey: .bits)
            try container.encode(signed, forKey: .signed)
        case .double: try container.encode("double", forKey: .type)
        case .float: try container.encode("float", forKey: .type)
        case .decimal: try container.encode("decimal", forKey: .type)
        case .string: try container.encode("string", forKey: .type)
        case .date: try container.encode("date", forKey: .type)
        case .data: try container.encode("data", forKey: .type)
        case .uuid: try container.encode("uuid", forKey: .type)
        case .url: try container.encode("url", forKey: .type)
        case .optional(let wrapped):
            try container.encode("optional", forKey: .type)
            try container.encode(wrapped, forKey: .wrapped)
        case .array(let element):
            try container.encode("array", forKey: .type)
            try container.encode(element, forKey: .wrapped)
        case .dictionary(let key, let value):
            try container.encode("dictionary", forKey: .type)
            try container.encode(key, forKey: .key)
            try container.encode(value, forKey: .value)
        case .enumeration(let name, let raw):
            try container.encode("enumeration", forKey: .type)
            try container.encode(name, forKey: .name)
            try container.encode(raw, forKey: .rawValue)
        case .composite(let name):
            try container.encode("composite", forKey: .type)
            try container.encode(name, forKey: .name)
        }
    }

    /// Decodes a type written by ``encode(to:)``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let type = try container.decode(String.self, forKey: .type)
        switch type {
        case "bool": self = .bool
        case "integer":
            self = .integer(
                bits: try container.decode(Int.self, forKey: .bits),
                signed: try container.decode(Bool.self, forKey: .signed))
        case "double": self = .double
        case "float": self = .float
        case "decimal": self = .decimal
        case "string": self = .string
        case "date": self = .date
        case "data": self = .data
        case "uuid": self = .uuid
        case "url": self = .url
        case "optional": self = .optional(try container.decode(AttributeType.self, forKey: .wrapped))
        case "array": self = .array(try container.decode(AttributeType.self, forKey: .wrapped))
        case "dictionary":
            self = .dictionary(
                key: try container.decode(AttributeType.self, forKey: .key),
                value: try container.decode(AttributeType.self, forKey: .value))
        case "enumeration":
            self = .enumeration(
                name: try container.decode(String.self, forKey: .name),
                rawValue: try container.decode(AttributeType.self, forKey: .rawValue))
        case "composite": self = .composite(name: try container.decode(String.self, forKey: .name))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container, debugDescription: "unknown attribute type '\(type)'")
        }
    }
}
