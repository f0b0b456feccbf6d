import Foundation
import ModelStore

/// Values written as text (in a filter or an edit form) read as an attribute's type, and values
/// written back as the text an edit form starts from.
enum ValueText {
    /// Why a text is not a value of a type.
    struct Failure: Error {
        /// What is wrong, quoting the text.
        let message: String
    }

    /// A filter's literal as a value of `type`.
    static func value(of literal: FilterToken, as type: AttributeType) throws(Failure) -> StoreValue {
        switch literal.kind {
        case .string(let text): return try value(ofText: text, as: type, quoted: true)
        case .number(let text): return try value(ofText: text, as: type, quoted: false)
        case .identifier(let name) where name == "true" || name == "false":
            return try value(ofText: name, as: type, quoted: false)
        default: throw Failure(message: "'\(literal.spelling)' is not a value")
        }
    }

    /// Text as a value of `type`; `quoted` says the text was a string literal (only strings, dates,
    /// UUIDs and URLs are written in quotes).
    static func value(ofText text: String, as type: AttributeType, quoted: Bool = false) throws(Failure) -> StoreValue {
        let number = text.replacingOccurrences(of: "_", with: "")
        switch type {
        case .optional(let wrapped): return try value(ofText: text, as: wrapped, quoted: quoted)
        case .enumeration(_, let raw): return try value(ofText: text, as: raw, quoted: quoted)
        case .bool:
            guard !quoted, text == "true" || text == "false" else {
                throw Failure(message: "'\(text)' is not true or false")
            }
            return .bool(text == "true")
        case .integer(let bits, let signed):
            guard !quoted else { throw Failure(message: "\"\(text)\" is a string, not a number") }
            if !signed && bits == 64 {
                guard let value = UInt64(number) else { throw Failure(message: "'\(text)' is not a whole number ≥ 0") }
                return .uint(value)
            }
            guard let value = Int64(number) else { throw Failure(message: "'\(text)' is not a whole number") }
            return .int(value)
        case .double, .float:
            guard !quoted, let value = Double(number) else { throw Failure(message: "'\(text)' is not a number") }
            return .double(value)
        case .decimal:
            guard !quoted, let value = Decimal(string: number) else {
                throw Failure(message: "'\(text)' is not a number")
            }
            return .decimal(value)
        case .string:
            return .string(text)
        case .date:
            guard let date = date(text) else {
                throw Failure(message: "'\(text)' is not a date; write \"2026-11-25\" or \"2026-11-25T19:30:00Z\"")
            }
            return .date(date)
        case .uuid:
            guard let uuid = UUID(uuidString: text) else { throw Failure(message: "'\(text)' is not a UUID") }
            return .uuid(uuid)
        case .url:
            guard let url = URL(string: text), url.scheme != nil else {
                throw Failure(message: "'\(text)' is not a URL")
            }
            return .url(url)
        case .data, .array, .dictionary, .composite:
            throw Failure(message: "values of type '\(type)' cannot be written as text here")
        }
    }

    /// A date written as ISO 8601, with or without a time.
    static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        let dayOnly = Date.ISO8601FormatStyle(timeZone: .gmt).year().month().day()
        return try? Date(text, strategy: dayOnly)
    }

    /// Whether values of `type` can be edited as text.
    static func isEditable(_ type: AttributeType) -> Bool {
        switch type.unwrapped {
        case .data, .array, .dictionary, .composite: false
        case .enumeration(_, let raw): isEditable(raw)
        default: true
        }
    }

    /// A value as the text an edit form starts from (strings without quotes).
    static func editText(_ value: StoreValue) -> String {
        switch value {
        case .null: ""
        case .string(let text): text
        case .date(let date): date.formatted(.iso8601)
        default: value.description
        }
    }
}
