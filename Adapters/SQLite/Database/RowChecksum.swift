import CSQLite
import Foundation
import ModelStoreFileIO

/// The checksum every row of a store's tables carries (format 3): a CRC-32C of the row's values,
/// kept in a stored generated column that SQLite computes on every insert and update, and compared
/// with the values when the store reads the row.
///
/// SQLite's pages carry no checksums, so a flipped bit inside a value would otherwise read as a
/// wrong value. The column is `"_crc" INTEGER GENERATED ALWAYS AS (modelstore_crc(0, a, b, …))
/// STORED`: every write path (saves, batch updates, migrations' `INSERT … SELECT`) keeps it right
/// without code of its own, and reading it back costs one CRC over bytes the row already holds.
///
/// Each value adds its storage class (one byte) and then: an integer or a real, its 8 bytes (little
/// endian); text or a blob, its length (4 bytes, little endian) and its bytes; `NULL`, nothing. The
/// first argument is the checksum of the values before (0 to start), so a row with more columns than
/// a function takes arguments chains calls: `modelstore_crc(modelstore_crc(0, a…), b…)`.
package enum RowChecksum {
    /// The SQL function SQLite calls for the column.
    static let function = "modelstore_crc"
    /// The generated column's name.
    static let column = "\"_crc\""
    /// The most values one call takes (SQLite's limit on arguments is 127 by default).
    static let valuesPerCall = 100

    /// The column's definition over these columns (quoted names), in order.
    static func definition(over columns: [String]) -> String {
        var expression = "0"
        var start = 0
        repeat {
            let part = columns[start..<min(columns.count, start + valuesPerCall)]
            expression = "\(function)(\(expression), \(part.joined(separator: ", ")))"
            start += valuesPerCall
        } while start < columns.count
        return "\(column) INTEGER GENERATED ALWAYS AS (\(expression)) STORED"
    }

    /// Registers ``function`` on a connection: deterministic, so SQLite accepts it in a generated
    /// column, and innocuous, so it runs in a schema that is not trusted. Package access: tests that
    /// change a store's file with SQLite's own API register it on their connection.
    package static func register(on handle: OpaquePointer) {
        sqlite3_create_function_v2(
            handle, function, -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nil,
            { context, count, arguments in
                guard let arguments, count >= 1 else {
                    sqlite3_result_null(context)
                    return
                }
                var crc = UInt32(truncatingIfNeeded: sqlite3_value_int64(arguments[0]))
                for index in 1..<Int(count) {
                    let value = arguments[index]
                    let type = sqlite3_value_type(value)
                    switch type {
                    case SQLITE_INTEGER:
                        crc = RowChecksum.add(crc, type, UInt64(bitPattern: sqlite3_value_int64(value)))
                    case SQLITE_FLOAT: crc = RowChecksum.add(crc, type, sqlite3_value_double(value).bitPattern)
                    case SQLITE_TEXT:
                        crc = RowChecksum.add(crc, type, sqlite3_value_text(value), Int(sqlite3_value_bytes(value)))
                    case SQLITE_BLOB:
                        crc = RowChecksum.add(crc, type, sqlite3_value_blob(value), Int(sqlite3_value_bytes(value)))
                    default: crc = RowChecksum.add(crc, type)
                    }
                }
                sqlite3_result_int64(context, Int64(crc))
            }, nil, nil, nil)
    }

    /// The checksum of the columns `first..<first + count` of a statement's current row, as
    /// ``function`` computes it over the same values.
    static func of(_ statement: SQLiteStatement, columns count: Int32, from first: Int32 = 0) -> UInt32 {
        var crc: UInt32 = 0
        for index in first..<first + count {
            let type = statement.type(index)
            switch type {
            case SQLITE_INTEGER: crc = add(crc, type, UInt64(bitPattern: statement.int64(index)))
            case SQLITE_FLOAT: crc = add(crc, type, statement.double(index).bitPattern)
            case SQLITE_TEXT, SQLITE_BLOB:
                let bytes = statement.bytes(index)
                crc = add(crc, type, bytes.baseAddress, bytes.count)
            default: crc = add(crc, type)
            }
        }
        return crc
    }

    /// Whether the stored checksum in column `first + count` matches the `count` columns before it.
    static func matches(_ statement: SQLiteStatement, columns count: Int32, from first: Int32 = 0) -> Bool {
        let stored = first + count
        return statement.type(stored) == SQLITE_INTEGER
            && statement.int64(stored) == Int64(of(statement, columns: count, from: first))
    }

    private static func add(_ crc: UInt32, _ type: Int32) -> UInt32 {
        withUnsafeBytes(of: UInt8(truncatingIfNeeded: type)) { CRC32C.update(crc, $0) }
    }

    private static func add(_ crc: UInt32, _ type: Int32, _ bits: UInt64) -> UInt32 {
        withUnsafeBytes(of: bits.littleEndian) { CRC32C.update(add(crc, type), $0) }
    }

    private static func add(_ crc: UInt32, _ type: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> UInt32 {
        let length = withUnsafeBytes(of: UInt32(truncatingIfNeeded: count).littleEndian) {
            CRC32C.update(add(crc, type), $0)
        }
        guard let bytes, count > 0 else { return length }
        return CRC32C.update(length, UnsafeRawBufferPointer(start: bytes, count: count))
    }
}
