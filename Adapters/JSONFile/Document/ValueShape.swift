import Foundation
import ModelStore

/// How one property's values look in the document, compiled once per entity from the schema.
///
/// A shape fixes each value's natural JSON form; anything else is written as an explicit tag
/// (`{"$int": 3}`), so no value is ever read back as a different ``StoreValue`` case.
enum ValueShape: Sendable {
    /// Self-describing values: the inside of composite (`Codable`) values.
    case any
    case bool
    /// Integers that are stored as ``StoreValue/int(_:)``, with the range of their Swift type.
    case int(bits: Int, signed: Bool)
    /// `UInt` and `UInt64`, stored as ``StoreValue/uint(_:)``.
    case uint64
    case double
    case float
    case decimal
    case string
    case date
    case data
    case uuid
    case url
    indirect case array(ValueShape)
    /// A dictionary with `String` keys: a JSON object.
    indirect case stringDictionary(ValueShape)
    /// A dictionary with other keys: an array of `[key, value]` pairs.
    indirect case pairs(key: ValueShape, value: ValueShape)
    /// A to-one relationship to `destination`: a key, or `null`.
    case toOne(destination: String)
    /// A to-many relationship to `destination`: an array of keys.
    case toMany(destination: String)

    /// The shape of an attribute type (optionals and enumerations take their wrapped and raw shapes).
    init(_ type: AttributeType) {
        switch type {
        case .bool: self = .bool
        case .integer(let bits, let signed): self = bits == 64 && !signed ? .uint64 : .int(bits: bits, signed: signed)
        case .double: self = .double
        case .float: self = .float
        case .decimal: self = .decimal
        case .string: self = .string
        case .date: self = .date
        case .data: self = .data
        case .uuid: self = .uuid
        case .url: self = .url
        case .optional(let wrapped): self = ValueShape(wrapped)
        case .array(let element): self = .array(ValueShape(element))
        case .dictionary(let key, let value):
            self =
                key == .string
                ? .stringDictionary(ValueShape(value)) : .pairs(key: ValueShape(key), value: ValueShape(value))
        case .enumeration(_, let rawValue): self = ValueShape(rawValue)
        case .composite: self = .any
        }
    }

    /// The shape of a property.
    init(_ property: Schema.Property) {
        switch property {
        case .attribute(let attribute): self.init(attribute.valueType)
        case .relationship(let relationship):
            self =
                relationship.isToOne
                ? .toOne(destination: relationship.destination) : .toMany(destination: relationship.destination)
        }
    }

    /// What values of this shape are, for error messages ("an integer", "a base64 string").
    var expectation: String {
        switch self {
        case .any: "a value"
        case .bool: "true or false"
        case .int(let bits, let signed): "an integer that fits in \(signed ? "Int" : "UInt")\(bits)"
        case .uint64: "a non-negative integer"
        case .double: "a number (or \"NaN\", \"Infinity\", \"-Infinity\")"
        case .float: "a number (or \"NaN\", \"Infinity\", \"-Infinity\")"
        case .decimal: "a decimal number as a string, such as \"12.50\""
        case .string: "a string"
        case .date: "a number of seconds since 2001-01-01T00:00:00Z, or an ISO 8601 date string"
        case .data: "a base64 string"
        case .uuid: "a UUID string"
        case .url: "a URL string"
        case .array: "an array"
        case .stringDictionary: "an object"
        case .pairs: "an array of [key, value] pairs"
        case .toOne: "the key of the related model, or null"
        case .toMany: "an array of the keys of the related models"
        }
    }
}

/// The tags of explicit values, `{"$int": 3}`: the one-key objects that say which ``StoreValue`` case a value is.
enum ValueTag: String, Sendable {
    case bool = "$bool"
    case int = "$int"
    case uint = "$uint"
    case double = "$double"
    case decimal = "$decimal"
    case string = "$string"
    case date = "$date"
    case data = "$data"
    case uuid = "$uuid"
    case url = "$url"
    case array = "$array"
    case dictionary = "$dictionary"
    case reference = "$reference"
    case references = "$references"
    /// Bytes kept in a file beside the document (`.externalStorage` attributes).
    case file = "$file"
}
