import Foundation
import ModelStore

/// Attribute types as schema files spell them: in Swift (`String`, `Int32?`, `[UUID]`,
/// `[String: Double]`). A name that is not one of Swift's types is an enum (with `"rawType"`) or a
/// `Codable` struct (with `"codable": true`).
package enum TypeSpelling {
    /// The types a schema file may name, by spelling.
    package static let builtIn: [String: AttributeType] = [
        "Bool": .bool, "Int": .integer(bits: 64, signed: true), "Int8": .integer(bits: 8, signed: true),
        "Int16": .integer(bits: 16, signed: true), "Int32": .integer(bits: 32, signed: true),
        "Int64": .integer(bits: 64, signed: true), "UInt": .integer(bits: 64, signed: false),
        "UInt8": .integer(bits: 8, signed: false), "UInt16": .integer(bits: 16, signed: false),
        "UInt32": .integer(bits: 32, signed: false), "UInt64": .integer(bits: 64, signed: false),
        "Double": .double, "Float": .float, "Decimal": .decimal, "String": .string, "Date": .date, "Data": .data,
        "UUID": .uuid, "URL": .url,
    ]

    /// What a named type that is not built in stands for.
    package enum Named {
        /// A `RawRepresentable` enum with this raw type.
        case enumeration(rawValue: AttributeType)
        /// A `Codable` struct.
        case composite
    }

    /// Parses a spelling; `named` says what a name that is not built in is, or `nil` if it is unknown.
    /// Throws a message (without the path) when the spelling is not a type.
    package static func parse(_ spelling: String, named: (String) -> Named?) throws(TypeSpellingError) -> AttributeType
    {
        let text = spelling.trimmingCharacters(in: .whitespaces)
        if text.hasSuffix("?") {
            let wrapped = try parse(String(text.dropLast()), named: named)
            guard !wrapped.isOptional else { throw TypeSpellingError("'\(spelling)' is optional twice") }
            return .optional(wrapped)
        }
        if text.hasPrefix("[") && text.hasSuffix("]") {
            let inner = String(text.dropFirst().dropLast())
            if let colon = topLevelColon(in: inner) {
                let key = try parse(String(inner[..<colon]), named: named)
                let value = try parse(String(inner[inner.index(after: colon)...]), named: named)
                return .dictionary(key: key, value: value)
            }
            return .array(try parse(inner, named: named))
        }
        if let type = builtIn[text] { return type }
        let isName =
            text.first.map { $0.isLetter || $0 == "_" } == true
            && text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
        switch isName ? named(text) : nil {
        case .enumeration(let raw)?: return .enumeration(name: text, rawValue: raw)
        case .composite?: return .composite(name: text)
        case nil:
            throw TypeSpellingError(
                "'\(spelling)' is not a type ModelStore stores"
                    + (isName ? "" : " (write a type as Swift does: 'String?', '[Int]', '[String: Double]')"))
        }
    }

    /// The spelling of a type, as Swift writes it (`Int` for 64-bit integers).
    package static func spelling(_ type: AttributeType) -> String { type.description }

    /// The enum or struct a type names, if any, with what it is.
    package static func namedType(in type: AttributeType) -> (name: String, kind: Named)? {
        switch type {
        case .optional(let wrapped), .array(let wrapped): namedType(in: wrapped)
        case .dictionary(let key, let value): namedType(in: key) ?? namedType(in: value)
        case .enumeration(let name, let raw): (name, .enumeration(rawValue: raw))
        case .composite(let name): (name, .composite)
        default: nil
        }
    }

    private static func topLevelColon(in text: String) -> String.Index? {
        var depth = 0
        for index in text.indices {
            switch text[index] {
            case "[": depth += 1
            case "]": depth -= 1
            case ":" where depth == 0: return index
            default: break
            }
        }
        return nil
    }
}

/// A spelling that is not a type, and why.
package struct TypeSpellingError: Error {
    /// What is wrong.
    package let message: String
    package init(_ message: String) { self.message = message }
}
