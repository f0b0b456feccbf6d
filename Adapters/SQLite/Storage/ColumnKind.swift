import CModelStoreSQLiteRows
import CSQLite
import Foundation
import ModelStore

/// How one attribute is kept in its SQLite column, and how SQL may compare it.
///
/// | attribute | column | kept as |
/// | --- | --- | --- |
/// | `Bool` | `INTEGER` | 0 or 1 |
/// | signed integers, `UInt8` … `UInt32` | `INTEGER` | the value |
/// | `UInt`, `UInt64` | `INTEGER` | the bit pattern (order not pushed down) |
/// | `Double`, `Float` | no type (no affinity, so `-0.0` keeps its sign) | the value; `NaN` as `NULL` (non-optional) or the text `'NaN'` (optional) |
/// | `Decimal` | `TEXT` | its description (POSIX) |
/// | `String` | `TEXT COLLATE SWIFT` | the exact scalars saved |
/// | `Date` | `REAL` | `timeIntervalSinceReferenceDate` |
/// | `Data` | `BLOB` | the bytes (an `.externalStorage` value of 16 KiB or more: its file's name as `TEXT`, see ``ExternalValueFolder``) |
/// | `UUID` | `TEXT` | `uuidString` |
/// | `URL` | `TEXT COLLATE SWIFT` | `absoluteString` |
/// | arrays, dictionaries, `Codable` structs | `BLOB` | the value's JSON (`StoreValue`'s `Codable` form) |
///
/// Enumerations take the kind of their raw value; optionals that of the wrapped type, with `NULL` for `nil`.
enum ColumnKind: Sendable, Hashable {
    case bool
    case int
    case uint64
    case double
    case decimal
    case string
    case date
    case data
    case uuid
    case url
    case encoded

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

    /// The column's declared type, with the collation for text compared as Swift compares it.
    var declaration: String {
        switch self {
        case .bool, .int, .uint64: "INTEGER"
        // No declared type (no affinity): a REAL affinity would store `-0.0` as the integer 0.
        case .double: ""
        case .date: "REAL"
        case .decimal, .uuid: "TEXT"
        case .string, .url: "TEXT COLLATE \(SwiftCollation.name)"
        case .data, .encoded: "BLOB"
        }
    }

    /// The `StoreValue` case SQL compares exactly (`=`, `<`, `IN`) on this column, if any.
    func comparesExactly(_ value: StoreValue, ordering: Bool, optional: Bool) -> Bool {
        switch (self, value) {
        case (.int, .int), (.string, .string), (.date, .date), (.uuid, .uuid): return true
        case (.double, .double(let v)): return !optional && !v.isNaN
        case (.bool, .bool), (.data, .data), (.url, .url): return !ordering
        case (.uint64, .uint(let v)): return !ordering && v <= UInt64(Int64.max)
        default: return false
        }
    }

    /// Whether `ORDER BY` on the column gives `SortDescriptor`'s order for this comparison.
    func sortsExactly(_ comparison: StoreSortKey.Comparison, optional: Bool) -> Bool {
        switch self {
        case .bool, .int, .date, .uuid: return true
        case .double: return !optional
        case .string, .url: return comparison == .binary
        case .uint64, .decimal, .data, .encoded: return false
        }
    }

    // MARK: Values

    /// The value as the column keeps it.
    func encode(_ value: StoreValue, optional: Bool) throws -> SQLValue {
        switch value {
        case .null: return .null
        case .bool(let v): return .integer(v ? 1 : 0)
        case .int(let v): return self == .double ? .real(Double(v)) : .integer(v)
        case .uint(let v): return .integer(Int64(bitPattern: v))
        case .double(let v):
            if v.isNaN { return optional ? .text("NaN") : .null }
            return .real(v)
        case .decimal(let v): return .text(Self.decimalText(v))
        case .string(let v): return .text(v)
        case .date(let v): return .real(v.timeIntervalSinceReferenceDate)
        case .data(let v): return .blob(v)
        case .uuid(let v): return .text(v.uuidString)
        case .url(let v): return .text(v.absoluteString)
        case .array, .dictionary, .reference, .references:
            return .blob(try Self.encoder.encode(value))
        }
    }

    /// The value of a column of the current row.
    func decode(_ statement: SQLiteStatement, _ column: Int32, optional: Bool) throws -> StoreValue {
        if statement.isNull(column) {
            return self == .double && !optional ? .double(.nan) : .null
        }
        switch self {
        case .bool: return .bool(statement.int64(column) != 0)
        case .int: return .int(statement.int64(column))
        case .uint64: return .uint(UInt64(bitPattern: statement.int64(column)))
        case .double:
            // A double column holds text (type 3, SQLITE_TEXT) only where the store wrote NaN.
            if statement.type(column) == 3 { return .double(.nan) }
            return .double(statement.double(column))
        case .decimal:
            let text = statement.text(column)
            guard let decimal = Decimal(string: text, locale: Self.posix) else {
                throw DataStoreError.invalidValue("a stored decimal is not a number")
            }
            return .decimal(decimal)
        case .string: return .string(statement.text(column))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: statement.double(column)))
        case .data: return .data(statement.data(column))
        case .uuid:
            guard let uuid = UUID(uuidString: statement.text(column)) else {
                throw DataStoreError.invalidValue("a stored UUID is not a UUID")
            }
            return .uuid(uuid)
        case .url:
            guard let url = URL(string: statement.text(column)) else {
                throw DataStoreError.invalidValue("a stored URL is not a URL")
            }
            return .url(url)
        case .encoded:
            return try Self.decoder.decode(StoreValue.self, from: statement.data(column))
        }
    }

    /// The value of a column already read from the current row, or `nil` when the column holds a
    /// storage class this kind does not write (a file another program changed), which
    /// ``decode(_:_:optional:)`` then reads with SQLite's conversions, as it always did.
    func decode(_ column: modelstore_sqlite_column, optional: Bool) throws -> StoreValue? {
        switch (self, column.type) {
        case (_, SQLITE_NULL): return self == .double && !optional ? .double(.nan) : .null
        case (.bool, SQLITE_INTEGER): return .bool(column.integer != 0)
        case (.int, SQLITE_INTEGER): return .int(column.integer)
        case (.uint64, SQLITE_INTEGER): return .uint(UInt64(bitPattern: column.integer))
        case (.double, SQLITE_FLOAT): return .double(column.real)
        // Text in a double column only where the store wrote NaN.
        case (.double, SQLITE_TEXT): return .double(.nan)
        case (.date, SQLITE_FLOAT): return .date(Date(timeIntervalSinceReferenceDate: column.real))
        case (.string, SQLITE_TEXT): return .string(Self.text(column))
        case (.decimal, SQLITE_TEXT):
            guard let decimal = Decimal(string: Self.text(column), locale: Self.posix) else {
                throw DataStoreError.invalidValue("a stored decimal is not a number")
            }
            return .decimal(decimal)
        case (.uuid, SQLITE_TEXT):
            guard let uuid = UUID(uuidString: Self.text(column)) else {
                throw DataStoreError.invalidValue("a stored UUID is not a UUID")
            }
            return .uuid(uuid)
        case (.url, SQLITE_TEXT):
            guard let url = URL(string: Self.text(column)) else {
                throw DataStoreError.invalidValue("a stored URL is not a URL")
            }
            return .url(url)
        case (.data, SQLITE_BLOB): return .data(Self.data(column))
        case (.encoded, SQLITE_BLOB): return try Self.decoder.decode(StoreValue.self, from: Self.data(column))
        default: return nil
        }
    }

    /// The text a column read holds, exactly the bytes stored.
    static func text(_ column: modelstore_sqlite_column) -> String {
        guard let bytes = column.bytes, column.length > 0 else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: UInt8.self), count: Int(column.length)),
            as: UTF8.self)
    }

    /// The bytes a column read holds.
    private static func data(_ column: modelstore_sqlite_column) -> Data {
        guard let bytes = column.bytes, column.length > 0 else { return Data() }
        return Data(bytes: bytes, count: Int(column.length))
    }

    private static let posix = Locale(identifier: "en_US_POSIX")
    private static func decimalText(_ value: Decimal) -> String { value.description }
    /// The JSON text an array column keeps for one element (`{"string":"a"}`), for the element kinds
    /// whose text is one per value (strings, integers, booleans, UUIDs); `nil` for the others.
    static func elementText(_ element: StoreValue) -> String? {
        switch element {
        case .string, .int, .bool, .uuid:
            return (try? encoder.encode(element)).map { String(decoding: $0, as: UTF8.self) }
        default:
            return nil
        }
    }

    private static var encoder: JSONEncoder {
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
