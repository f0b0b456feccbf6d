import Foundation
import ModelStore
import NIOCore
import PostgresNIO

/// How one attribute is kept in its PostgreSQL column.
///
/// | attribute | column | kept as |
/// | --- | --- | --- |
/// | `Bool` | `boolean` | the value |
/// | signed integers, `UInt8` … `UInt32` | `bigint` | the value |
/// | `UInt`, `UInt64` | `bigint` | the bit pattern |
/// | `Double`, `Float` | `double precision` | the value (`NaN` and `-0.0` included) |
/// | `Decimal` | `numeric` | the value |
/// | `String`, `URL` | `text` | the exact scalars saved (`absoluteString` for URLs) |
/// | `Date` | `double precision` | `timeIntervalSinceReferenceDate`: exact, where `timestamptz` keeps microseconds |
/// | `Data` | `bytea` | the bytes |
/// | `UUID` | `uuid` | the value |
/// | arrays, dictionaries, `Codable` structs | `json` | `StoreValue`'s `Codable` form, as text |
///
/// Composite values are `json`, not `jsonb`: `jsonb` turns numbers into `numeric`, which has no
/// `-0.0`, and would change a stored value. Enumerations take the kind of their raw value;
/// optionals that of the wrapped type, with `NULL` for `nil`.
enum ColumnType: Sendable, Hashable {
    case bool, int, uint64, double, decimal, string, date, data, uuid, url, encoded

    init(_ type: AttributeType) {
        switch type {
        case .optional(let wrapped): self.init(wrapped)
        case .enumeration(_, let raw): self.init(raw)
        case .bool: self = .bool
        case .integer(let bits, let signed): self = !signed && bits == 64 ? .uint64 : .int
        case .double, .float: self = .double
        case .decimal: self = .decimal
        case .string: self = .string
        case .date: self = .date
        case .data: self = .data
        case .uuid: self = .uuid
        case .url: self = .url
        case .array, .dictionary, .composite: self = .encoded
        }
    }

    /// The column's SQL type.
    var declaration: String {
        switch self {
        case .bool: "boolean"
        case .int, .uint64: "bigint"
        case .double, .date: "double precision"
        case .decimal: "numeric"
        case .string, .url: "text"
        case .data: "bytea"
        case .uuid: "uuid"
        case .encoded: "json"
        }
    }

    /// The parameter placeholder for this column (`$3`, or `$3::json`).
    func placeholder(_ number: Int) -> String {
        self == .encoded ? "$\(number)::json" : "$\(number)"
    }

    /// The column in a select list (`json` read back as text).
    func selected(_ column: String) -> String {
        self == .encoded ? "\(column)::text" : column
    }

    /// Whether ``bind(_:to:)`` sends `value` as a value of the column's own SQL type (or `NULL`),
    /// which a prepared statement whose parameter took the column's type needs: its first run
    /// fixed the type, and the server would read another type's bytes as this one's.
    func bindsAsItself(_ value: StoreValue) -> Bool {
        switch (self, value) {
        case (_, .null), (.bool, .bool), (.int, .int), (.int, .uint), (.uint64, .int), (.uint64, .uint),
            (.double, .double), (.double, .int), (.decimal, .decimal), (.string, .string), (.url, .url),
            (.date, .date), (.data, .data), (.uuid, .uuid), (.encoded, .array), (.encoded, .dictionary):
            true
        default: false
        }
    }

    /// Appends a value as the column keeps it.
    func bind(_ value: StoreValue, to binds: inout PostgresBindings) throws {
        switch value {
        case .null: binds.appendNull()
        case .bool(let v): binds.append(v)
        case .int(let v): self == .double ? binds.append(Double(v)) : binds.append(v)
        case .uint(let v): binds.append(Int64(bitPattern: v))
        case .double(let v): binds.append(v)
        case .decimal(let v): try binds.append(v)
        case .string(let v): binds.append(Self.escapingNUL(v))
        case .date(let v): binds.append(v.timeIntervalSinceReferenceDate)
        case .data(let v): binds.append(ByteBuffer(bytes: v))
        case .uuid(let v): binds.append(v)
        case .url(let v): binds.append(v.absoluteString)
        case .array, .dictionary, .reference, .references:
            binds.append(String(decoding: try Self.encoder.encode(value), as: UTF8.self))
        }
    }

    /// The value of a cell.
    func decode(_ cell: PostgresCell) throws -> StoreValue {
        guard cell.bytes != nil else { return .null }
        switch self {
        case .bool: return .bool(try cell.decode(Bool.self))
        case .int: return .int(try cell.decode(Int64.self))
        case .uint64: return .uint(UInt64(bitPattern: try cell.decode(Int64.self)))
        case .double: return .double(try cell.decode(Double.self))
        case .decimal: return .decimal(try cell.decode(Decimal.self))
        case .string: return .string(Self.unescapingNUL(try cell.decode(String.self)))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: try cell.decode(Double.self)))
        case .data:
            var buffer = try cell.decode(ByteBuffer.self)
            return .data(Data(buffer.readBytes(length: buffer.readableBytes) ?? []))
        case .uuid: return .uuid(try cell.decode(UUID.self))
        case .url:
            let text = try cell.decode(String.self)
            guard let url = URL(string: text) else { throw DataStoreError.invalidValue("a stored URL is not a URL") }
            return .url(url)
        case .encoded:
            return try Self.decoder.decode(StoreValue.self, from: Data(try cell.decode(String.self).utf8))
        }
    }

    // MARK: U+0000 in text

    /// A string as a `text` column keeps it: PostgreSQL's `text` cannot hold U+0000, so U+0001
    /// becomes U+0001 U+0002 and U+0000 becomes U+0001 U+0001. The mapping keeps equality and the
    /// scalar order, so SQL comparisons of escaped strings still give Swift's results.
    static func escapingNUL(_ string: String) -> String {
        guard string.unicodeScalars.contains(where: { $0.value <= 1 }) else { return string }
        var scalars = String.UnicodeScalarView()
        for scalar in string.unicodeScalars {
            switch scalar.value {
            case 0: scalars.append(contentsOf: ["\u{1}", "\u{1}"])
            case 1: scalars.append(contentsOf: ["\u{1}", "\u{2}"])
            default: scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// The string ``escapingNUL(_:)`` stored.
    static func unescapingNUL(_ stored: String) -> String {
        guard Self.containsU0001(stored) else { return stored }
        var scalars = String.UnicodeScalarView()
        var escaped = false
        for scalar in stored.unicodeScalars {
            if escaped {
                scalars.append(scalar.value == 1 ? "\u{0}" : "\u{1}")
                escaped = false
            } else if scalar.value == 1 {
                escaped = true
            } else {
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// Whether `string` holds U+0001: a scan of its UTF-8 bytes for 0x01, a byte no other scalar's
    /// encoding contains (every text cell read is checked, so not scalar by scalar).
    private static func containsU0001(_ string: String) -> Bool {
        string.utf8.withContiguousStorageIfAvailable { bytes in
            guard let start = bytes.baseAddress else { return false }
            return memchr(start, 1, bytes.count) != nil
        } ?? string.utf8.contains(1)
    }

    /// The encoder of composite values, whose output the column keeps verbatim.
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }
    private static var decoder: JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return decoder
    }
}
