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
