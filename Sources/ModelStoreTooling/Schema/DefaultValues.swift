import Foundation
import ModelStore

/// Reads an attribute's `"default"` into its stored form, checked against the attribute's type.
///
/// A default equal to the type's zero value (`0`, `false`, `""`, `nil`, 2001-01-01 for a date) is
/// the same as none, so it is dropped: two files that mean the same thing compare equal.
package struct DefaultValueReading {
    package let problems: SchemaFileProblems

    package func read(_ json: JSONValue, type: AttributeType, at path: String) throws(SchemaFileError)
        -> SchemaDocument.DefaultValue?
    {
        let value = try storeValue(json, type: type, at: path)
        if value == .now { return .now }
        // A UUID without a default is a new one per model, so a zero UUID has to stay.
        if case .value(let stored) = value, stored == type.zeroValue, type != .uuid { return nil }
        return value
    }

    private func storeValue(_ json: JSONValue, type: AttributeType, at path: String) throws(SchemaFileError)
        -> SchemaDocument.DefaultValue
    {
        let fail = { (expected: String) in
            problems.error(
                path, "expected \(expected) for '\(type)', found \(json.kind)",
                remedy: "Write the initial value as JSON of the attribute's type, or leave 'default' out")
        }
        if case .null = json {
            guard type.isOptional else { throw fail("a value") }
            return .value(.null)
        }
        switch (type.unwrapped, json) {
        case (.bool, .bool(let value)): return .value(.bool(value))
        case (.integer(let bits, let signed), .integer(let value)):
            let range: ClosedRange<Int64> =
                signed
                ? (bits == 64 ? Int64.min...Int64.max : -(1 << (bits - 1))...((1 << (bits - 1)) - 1))
                : (bits == 64 ? 0...Int64.max : 0...((1 << bits) - 1))
            guard range.contains(value) else {
                throw problems.error(
                    path, "\(value) does not fit in '\(type)'",
                    remedy: "Use a value from \(range.lowerBound) to \(range.upperBound)")
            }
            return .value(!signed && bits == 64 ? .uint(UInt64(value)) : .int(value))
        case (.double, .integer(let value)): return .value(.double(Double(value)))
        case (.double, .number(let value)): return .value(.double(value))
        case (.float, .integer(let value)): return .value(.double(Double(Float(value))))
        case (.float, .number(let value)): return .value(.double(Double(Float(value))))
        case (.decimal, .integer(let value)): return .value(.decimal(Decimal(value)))
        case (.decimal, .number(let value)): return try decimal(String(value), at: path)
        case (.decimal, .string(let text)): return try decimal(text, at: path)
        case (.string, .string(let text)): return .value(.string(text))
        case (.date, .string("now")): return .now
        case (.date, .string(let text)):
            guard let date = DefaultValueText.date(text) else {
                throw problems.error(
                    path, "'\(text)' is neither 'now' nor an ISO 8601 date",
                    remedy: "Write \"now\" or a date such as \"2024-01-31T12:00:00Z\"")
            }
            return .value(.date(date))
        case (.uuid, .string(let text)):
            guard let uuid = UUID(uuidString: text) else {
                throw problems.error(
                    path, "'\(text)' is not a UUID", remedy: "Leave 'default' out for a new UUID per model")
            }
            return .value(.uuid(uuid))
        case (.url, .string(let text)):
            guard let url = URL(string: text) else {
                throw problems.error(path, "'\(text)' is not a URL", remedy: "Write an absolute URL")
            }
            return .value(.url(url))
        case (.enumeration(_, let raw), _):
            return try storeValue(json, type: raw, at: path)
        case (.bool, _): throw fail("true or false")
        case (.integer, _), (.double, _), (.float, _): throw fail("a number")
        case (.decimal, _): throw fail("a number or a string of one")
        case (.string, _), (.date, _), (.uuid, _), (.url, _): throw fail("a string")
        default:
            throw problems.error(
                path, "an attribute of type '\(type)' can only start empty",
                remedy: "Leave 'default' out; models start with the empty value")
        }
    }

    private func decimal(_ text: String, at path: String) throws(SchemaFileError) -> SchemaDocument.DefaultValue {
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw problems.error(path, "'\(text)' is not a decimal number", remedy: "Write a number such as \"12.50\"")
        }
        return .value(.decimal(value))
    }
}

/// Default values as text: JSON for schema files, Swift for generated code.
package enum DefaultValueText {
    /// Whether a schema file can spell a default of `type`: a scalar other than `Data`, an enum of
    /// one, or an optional of either.
    package static func canSpell(_ type: AttributeType) -> Bool {
        switch type.unwrapped {
        case .bool, .integer, .double, .float, .decimal, .string, .date, .uuid, .url: true
        case .enumeration(_, let raw): canSpell(raw)
        case .data, .optional, .array, .dictionary, .composite: false
        }
    }

    /// The JSON for a default of an attribute of `type`.
    package static func json(_ value: SchemaDocument.DefaultValue, type: AttributeType) -> String {
        guard case .value(let stored) = value else { return "\"now\"" }
        switch stored {
        case .null: return "null"
        case .bool(let value): return String(value)
        case .int(let value): return String(value)
        case .uint(let value): return String(value)
        case .double(let value): return type.unwrapped == .float ? String(Float(value)) : String(value)
        case .decimal(let value): return JSONValue.literal("\(value)")
        case .string(let value): return JSONValue.literal(value)
        case .date(let value): return JSONValue.literal(iso(value))
        case .uuid(let value): return JSONValue.literal(value.uuidString)
        case .url(let value): return JSONValue.literal(value.absoluteString)
        default: return "null"
        }
    }

    /// The Swift expression of a default for an attribute of `type`; `nil` for a value Swift
    /// code cannot spell here (an enum's or a struct's).
    package static func swift(_ value: SchemaDocument.DefaultValue?, type: AttributeType) -> String? {
        guard let value else { return zero(type) }
        guard case .value(let stored) = value else { return ".now" }
        switch stored {
        case .null: return "nil"
        case .bool(let value): return String(value)
        case .int(let value): return grouped(String(value))
        case .uint(let value): return grouped(String(value))
        case .double(let value): return type.unwrapped == .float ? String(Float(value)) : String(value)
        case .decimal(let value): return "Decimal(string: \(SwiftNames.stringLiteral("\(value)")))!"
        case .string(let value): return SwiftNames.stringLiteral(value)
        case .date(let value):
            let seconds = value.timeIntervalSince1970
            let literal =
                seconds.rounded() == seconds && abs(seconds) < 1e15 ? grouped(String(Int64(seconds))) : String(seconds)
            return "Date(timeIntervalSince1970: \(literal))"
        case .uuid(let value): return "UUID(uuidString: \"\(value.uuidString)\")!"
        case .url(let value): return "URL(string: \(SwiftNames.stringLiteral(value.absoluteString)))!"
        default: return nil
        }
    }

    /// An integer literal with its digits in groups of three (`1_706_702_400`) when it has seven or
    /// more, as a person writes it and `swift format` leaves it.
    package static func grouped(_ literal: String) -> String {
        let sign = literal.hasPrefix("-") ? "-" : ""
        let digits = Array(literal.dropFirst(sign.count))
        guard digits.count >= 7 else { return literal }
        var groups: [String] = []
        var end = digits.count
        while end > 0 {
            groups.insert(String(digits[max(0, end - 3)..<end]), at: 0)
            end -= 3
        }
        return sign + groups.joined(separator: "_")
    }

    /// The Swift expression of the zero value (what a model starts with when no default is given).
    private static func zero(_ type: AttributeType) -> String? {
        switch type {
        case .optional: "nil"
        case .bool: "false"
        case .integer, .decimal: "0"
        case .double, .float: "0"
        case .string: "\"\""
        case .date: "Date(timeIntervalSinceReferenceDate: 0)"
        case .data: "Data()"
        case .uuid: "UUID()"
        case .url: "URL(string: \"about:blank\")!"
        case .array: "[]"
        case .dictionary: "[:]"
        case .enumeration, .composite: nil
        }
    }

    /// An ISO 8601 date, in UTC, with milliseconds when it has any.
    package static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        if date.timeIntervalSince1970.rounded() != date.timeIntervalSince1970 {
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        }
        return formatter.string(from: date)
    }

    /// A date from ISO 8601 text, to the millisecond.
    package static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        var date = formatter.date(from: text)
        if date == nil {
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            date = formatter.date(from: text)
        }
        return date.map { Date(timeIntervalSince1970: ($0.timeIntervalSince1970 * 1000).rounded() / 1000) }
    }
}
