import CModelStoreSQLiteRows
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
    ///
    /// The function is C code (`CModelStoreSQLiteRows`), as is ``of(_:columns:from:)``: both add a
    /// row's values to one CRC in a single pass.
    package static func register(on handle: OpaquePointer) {
        sqlite3_create_function_v2(
            handle, function, -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
            unsafeBitCast(CRC32C.cUpdate, to: UnsafeMutableRawPointer.self),
            modelstore_sqlite_row_checksum_function, nil, nil, nil)
    }

    /// The checksum of the columns `first..<first + count` of a statement's current row, as
    /// ``function`` computes it over the same values.
    static func of(_ statement: SQLiteStatement, columns count: Int32, from first: Int32 = 0) -> UInt32 {
        modelstore_sqlite_row_checksum(statement.handle, first, count, nil, CRC32C.cUpdate)
    }

    /// Whether the stored checksum in column `first + count` matches the `count` columns before it.
    static func matches(_ statement: SQLiteStatement, columns count: Int32, from first: Int32 = 0) -> Bool {
        let stored = first + count
        return statement.type(stored) == SQLITE_INTEGER
            && statement.int64(stored) == Int64(of(statement, columns: count, from: first))
    }

    /// Reads the columns `0..<count` of a statement's current row and the stored checksum in column
    /// `count` into `columns` (which holds `count + 1`), each asked of SQLite once, and returns
    /// whether the checksum matches the values.
    static func read(
        _ statement: SQLiteStatement, columns count: Int32, into columns: UnsafeMutablePointer<modelstore_sqlite_column>
    ) -> Bool {
        let crc = modelstore_sqlite_row_checksum(statement.handle, 0, count, columns, CRC32C.cUpdate)
        let stored = columns[Int(count)]
        return stored.type == SQLITE_INTEGER && stored.integer == Int64(crc)
    }
}
