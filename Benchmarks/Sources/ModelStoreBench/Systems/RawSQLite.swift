import CSQLiteRaw
import Foundation
import ModelStoreFileIO

/// One SQLite connection driven through the C API, for the `sqlite-raw` baselines: prepared
/// statements kept for the connection's life, errors as ``WrongResult``s naming the statement.
final class RawSQLite {
    /// The connection.
    let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (creating if asked) the database at `path` in WAL mode with `synchronous=NORMAL`, the
    /// SQLite adapter's `.batched` durability, with the `SWIFT` collation and the row checksum
    /// function its tables name.
    init(path: String, create: Bool) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "status \(status)"
            sqlite3_close_v2(handle)
            throw WrongResult("sqlite-raw: cannot open '\(path)': \(message)")
        }
        self.handle = handle
        Self.registerFunctions(handle)
        try execute("PRAGMA journal_mode = WAL")
        try execute("PRAGMA synchronous = NORMAL")
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// Runs SQL that returns no rows (several statements allowed).
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(handle, sql, nil, nil, &message) != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(message)
            throw WrongResult("sqlite-raw: '\(sql)' failed: \(text)")
        }
    }

    /// The prepared statement for `sql`, reset and with its bindings cleared.
    func statement(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            return statement
        }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
            let statement
        else { throw failure(sql) }
        statements[sql] = statement
        return statement
    }

    /// Throws if a statement of the connection is still active (stepped and neither done nor reset):
    /// it would keep a read transaction open, and every read after it would skip beginning and
    /// ending its own, which the adapter's reads do not.
    func expectNoActiveStatement() throws {
        var statement = sqlite3_next_stmt(handle, nil)
        while let current = statement {
            if sqlite3_stmt_busy(current) != 0 {
                let sql = String(cString: sqlite3_sql(current))
                throw WrongResult("sqlite-raw: '\(sql)' is still active before a read")
            }
            statement = sqlite3_next_stmt(handle, current)
        }
    }

    /// Steps a statement that returns no row.
    func run(_ statement: OpaquePointer) throws {
        let status = sqlite3_step(statement)
        guard status == SQLITE_DONE else { throw failure(String(cString: sqlite3_sql(statement))) }
    }

    /// Steps a statement: true for a row, false when done.
    func step(_ statement: OpaquePointer) throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw failure(String(cString: sqlite3_sql(statement)))
        }
    }

    /// Binds text; SQLite copies it.
    static func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            // SQLITE_TRANSIENT: SQLite copies the bytes, since the buffer does not outlive this call.
            _ = sqlite3_bind_text(
                statement, index, UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self),
                Int32(bytes.count), unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        }
    }

    /// The text of a column of the current row.
    func text(_ statement: OpaquePointer, _ index: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, index) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    private func failure(_ sql: String) -> WrongResult {
        WrongResult("sqlite-raw: '\(sql)' failed: \(String(cString: sqlite3_errmsg(handle)))")
    }

    // MARK: The adapter's collation and checksum

    /// Registers `SWIFT` (the collation the adapter's text columns name) and `modelstore_crc` (the
    /// function of its `_crc` columns, format 3 of `Adapters/SQLite/FORMAT.md`).
    ///
    /// The collation here compares bytes: the adapter's compares ASCII text as bytes too and
    /// normalizes only text with other scalars, which the benchmark's data has none of.
    private static func registerFunctions(_ handle: OpaquePointer) {
        sqlite3_create_collation_v2(
            handle, "SWIFT", SQLITE_UTF8, nil,
            { _, leftCount, left, rightCount, right in
                let common = Int(min(leftCount, rightCount))
                guard let left, let right, common > 0 else { return leftCount - rightCount }
                let order = memcmp(left, right, common)
                return order != 0 ? order : leftCount - rightCount
            }, nil)
        sqlite3_create_function_v2(
            handle, "modelstore_crc", -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nil,
            { context, count, arguments in
                guard let arguments, count >= 1 else { return sqlite3_result_null(context) }
                var crc = UInt32(truncatingIfNeeded: sqlite3_value_int64(arguments[0]))
                for index in 1..<Int(count) {
                    let value = arguments[index]
                    let type = sqlite3_value_type(value)
                    switch type {
                    case SQLITE_INTEGER: crc = RawSQLite.add(crc, type, UInt64(bitPattern: sqlite3_value_int64(value)))
                    case SQLITE_FLOAT: crc = RawSQLite.add(crc, type, sqlite3_value_double(value).bitPattern)
                    case SQLITE_TEXT:
                        crc = RawSQLite.add(crc, type, sqlite3_value_text(value), Int(sqlite3_value_bytes(value)))
                    case SQLITE_BLOB:
                        crc = RawSQLite.add(crc, type, sqlite3_value_blob(value), Int(sqlite3_value_bytes(value)))
                    default: crc = RawSQLite.add(crc, type, nil, -1)
                    }
                }
                sqlite3_result_int64(context, Int64(crc))
            }, nil, nil, nil)
    }

    /// The checksum of columns `0..<count` of the current row, as `modelstore_crc` computes it.
    static func checksum(_ statement: OpaquePointer, columns count: Int32) -> UInt32 {
        var crc: UInt32 = 0
        for index in 0..<count {
            let type = sqlite3_column_type(statement, index)
            switch type {
            case SQLITE_INTEGER: crc = add(crc, type, UInt64(bitPattern: sqlite3_column_int64(statement, index)))
            case SQLITE_FLOAT: crc = add(crc, type, sqlite3_column_double(statement, index).bitPattern)
            case SQLITE_TEXT:
                let text = sqlite3_column_text(statement, index)
                crc = add(crc, type, text, Int(sqlite3_column_bytes(statement, index)))
            case SQLITE_BLOB:
                crc = add(crc, type, sqlite3_column_blob(statement, index), Int(sqlite3_column_bytes(statement, index)))
            default: crc = add(crc, type, nil, -1)
            }
        }
        return crc
    }

    private static func add(_ crc: UInt32, _ type: Int32, _ bits: UInt64) -> UInt32 {
        let typed = withUnsafeBytes(of: UInt8(truncatingIfNeeded: type)) { CRC32C.update(crc, $0) }
        return withUnsafeBytes(of: bits.littleEndian) { CRC32C.update(typed, $0) }
    }

    /// A value's type byte, then (for text and blobs, `count` ≥ 0) its length and bytes.
    private static func add(_ crc: UInt32, _ type: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> UInt32 {
        let typed = withUnsafeBytes(of: UInt8(truncatingIfNeeded: type)) { CRC32C.update(crc, $0) }
        guard count >= 0 else { return typed }
        let length = withUnsafeBytes(of: UInt32(truncatingIfNeeded: count).littleEndian) {
            CRC32C.update(typed, $0)
        }
        guard let bytes, count > 0 else { return length }
        return CRC32C.update(length, UnsafeRawBufferPointer(start: bytes, count: count))
    }
}
