import CSQLite
import Foundation
import ModelStore

/// A prepared SQLite statement: bind parameters (1-based), step, and read typed columns (0-based).
///
/// Owned by its ``SQLiteConnection`` (cached statements) or by the code that prepared it; used
/// only under the store's lock.
final class SQLiteStatement {
    private(set) var handle: OpaquePointer?
    private unowned let connection: SQLiteConnection

    init(_ handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { finalize() }

    /// Releases the statement; the connection calls it before it closes.
    func finalize() {
        if let handle { sqlite3_finalize(handle) }
        handle = nil
    }

    /// Makes the statement ready to run again, with no parameters bound.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Binding

    /// Binds an integer.
    func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(handle, index, value) }
    /// Binds a double (a `NaN` binds as `NULL`, as SQLite stores it).
    func bind(_ index: Int32, _ value: Double) { sqlite3_bind_double(handle, index, value) }
    /// Binds `NULL`.
    func bindNull(_ index: Int32) { sqlite3_bind_null(handle, index) }
    /// Binds text, copied, every byte (a `NUL` inside the string included).
    func bind(_ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { (bytes: UnsafeBufferPointer<UInt8>) -> Void in
            // An empty string binds as empty text, not NULL (a nil pointer would bind NULL).
            guard !bytes.isEmpty else {
                sqlite3_bind_text(handle, index, "", 0, sqliteTransient)
                return
            }
            bytes.withMemoryRebound(to: CChar.self) { text in
                _ = sqlite3_bind_text(handle, index, text.baseAddress, Int32(text.count), sqliteTransient)
            }
        }
    }
    /// Binds UTF-8 bytes as text, copied (empty bytes bind as empty text, not `NULL`).
    func bind(_ index: Int32, utf8 bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { buffer in
            guard let start = buffer.baseAddress, !buffer.isEmpty else {
                sqlite3_bind_text(handle, index, "", 0, sqliteTransient)
                return
            }
            start.withMemoryRebound(to: CChar.self, capacity: buffer.count) { text in
                _ = sqlite3_bind_text(handle, index, text, Int32(buffer.count), sqliteTransient)
            }
        }
    }
    /// Binds bytes, copied.
    func bind(_ index: Int32, _ value: Data) {
        value.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Void in
            // A zero-length blob, not NULL, for empty data.
            if bytes.count == 0 {
                sqlite3_bind_zeroblob(handle, index, 0)
            } else {
                sqlite3_bind_blob64(handle, index, bytes.baseAddress, sqlite3_uint64(bytes.count), sqliteTransient)
            }
        }
    }
    /// Binds a parameter value.
    func bind(_ index: Int32, _ value: SQLValue) {
        switch value {
        case .null: bindNull(index)
        case .integer(let v): bind(index, v)
        case .real(let v): bind(index, v)
        case .text(let v): bind(index, v)
        case .blob(let v): bind(index, v)
        }
    }
    /// Binds parameters 1, 2, … in order.
    func bind(_ values: [SQLValue]) {
        for (offset, value) in values.enumerated() { bind(Int32(offset + 1), value) }
    }

    // MARK: Stepping

    /// Advances to the next row; `false` when the statement is done.
    @discardableResult
    func step(during activity: String = "reading") throws -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = connection.failure(code, during: activity)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs a statement that returns no rows.
    func run(during activity: String = "writing") throws {
        while try step(during: activity) {}
    }

    // MARK: Reading columns

    /// How many columns the statement's rows have.
    var columnCount: Int32 { sqlite3_column_count(handle) }
    /// The storage class of a column of the current row.
    func type(_ column: Int32) -> Int32 { sqlite3_column_type(handle, column) }
    /// Whether a column of the current row is `NULL`.
    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    /// A column as an integer.
    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    /// A column as a double.
    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }
    /// A column as text, exactly the bytes stored.
    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
    /// A column as bytes.
    func data(_ column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
    /// A column as a parameter value, whatever its storage class.
    func value(_ column: Int32) -> SQLValue {
        switch type(column) {
        case SQLITE_INTEGER: .integer(int64(column))
        case SQLITE_FLOAT: .real(double(column))
        case SQLITE_TEXT: .text(text(column))
        case SQLITE_BLOB: .blob(data(column))
        default: .null
        }
    }
}

/// A value as SQLite stores it: one of its five storage classes.
enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// `SQLITE_TRANSIENT`: SQLite copies the bound bytes before the call returns.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
