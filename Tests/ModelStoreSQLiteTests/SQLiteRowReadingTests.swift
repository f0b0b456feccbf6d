import CModelStoreSQLiteRows
import CSQLite
import Foundation
import ModelStoreFileIO
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// The row checksum and the one-pass column read are C code (`CModelStoreSQLiteRows`). These tests
/// hold both to the format as `RowChecksum` documents it, computed here byte by byte in Swift, over
/// seeded random rows of every storage class, with text and blobs long enough to cross the C code's
/// buffer.
struct SQLiteRowReadingTests {
    /// A value SQLite keeps, as the test wrote it.
    enum Stored: Equatable {
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob([UInt8])
        case null
    }

    /// The checksum of values, from the documented encoding: the storage class's byte, then 8 bytes
    /// of an integer or a real, or 4 bytes of length and the bytes of text or a blob.
    static func expectedChecksum(_ values: [Stored]) -> UInt32 {
        var bytes: [UInt8] = []
        func little<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }
        for value in values {
            switch value {
            case .integer(let integer):
                bytes.append(UInt8(SQLITE_INTEGER))
                little(UInt64(bitPattern: integer))
            case .real(let real):
                bytes.append(UInt8(SQLITE_FLOAT))
                little(real.bitPattern)
            case .text(let text):
                bytes.append(UInt8(SQLITE_TEXT))
                little(UInt32(text.utf8.count))
                bytes.append(contentsOf: text.utf8)
            case .blob(let blob):
                bytes.append(UInt8(SQLITE_BLOB))
                little(UInt32(blob.count))
                bytes.append(contentsOf: blob)
            case .null:
                bytes.append(UInt8(SQLITE_NULL))
            }
        }
        return CRC32C.checksum(bytes)
    }

    static func randomValue(_ random: inout SplitMix64) -> Stored {
        let length = random.below(5) == 0 ? 400 + random.below(900) : random.below(40)
        switch random.below(5) {
        case 0: return .integer(Int64(bitPattern: random.next()))
        case 1: return .real(Double(bitPattern: random.next() & 0x7FEF_FFFF_FFFF_FFFF))
        case 2:
            let scalars = ["a", "Z", "é", "→", "😀", " ", "0"]
            return .text((0..<length).map { _ in scalars[random.below(scalars.count)] }.joined())
        case 3: return .blob((0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) })
        default: return .null
        }
    }

    @Test(arguments: [1, 2, 3])
    func theChecksumFunctionAndTheOnePassReadFollowTheFormat(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let connection = try SQLiteConnection(
            path: ":memory:", readOnly: false, create: true, busyTimeout: .seconds(1))
        let width = 12
        let names = (0..<width).map { "c\($0)" }
        try connection.execute("CREATE TABLE t (\(names.joined(separator: ", ")))")
        for row in 0..<60 {
            let values = (0..<width).map { _ in Self.randomValue(&random) }
            let insert = try connection.statement(
                "INSERT INTO t VALUES (\(Array(repeating: "?", count: width).joined(separator: ", ")))")
            for (offset, value) in values.enumerated() {
                let index = Int32(offset + 1)
                switch value {
                case .integer(let integer): insert.bind(index, integer)
                case .real(let real): insert.bind(index, real)
                case .text(let text): insert.bind(index, text)
                case .blob(let blob): insert.bind(index, Data(blob))
                case .null: insert.bindNull(index)
                }
            }
            _ = try insert.step()
            insert.reset()
            let expected = Self.expectedChecksum(values)

            // The SQL function, whole and chained over two calls as a wide table's column is.
            let list = names.joined(separator: ", ")
            let split = names[..<5].joined(separator: ", ") + "), " + names[5...].joined(separator: ", ")
            let select = try connection.statement(
                "SELECT \(list), modelstore_crc(0, \(list)), modelstore_crc(modelstore_crc(0, \(split)) "
                    + "FROM t WHERE rowid = \(row + 1)")
            #expect(try select.step())
            #expect(select.int64(Int32(width)) == Int64(expected), "row \(row): the SQL function")
            #expect(select.int64(Int32(width + 1)) == Int64(expected), "row \(row): the chained SQL function")

            // The one-pass read: each column as written, and the checksum against the stored one.
            #expect(RowChecksum.of(select, columns: Int32(width)) == expected)
            let columns = UnsafeMutablePointer<modelstore_sqlite_column>.allocate(capacity: width + 1)
            defer { columns.deallocate() }
            #expect(RowChecksum.read(select, columns: Int32(width), into: columns), "row \(row)")
            for (offset, value) in values.enumerated() {
                let column = columns[offset]
                let read: Stored =
                    switch column.type {
                    case SQLITE_INTEGER: .integer(column.integer)
                    case SQLITE_FLOAT: .real(column.real)
                    case SQLITE_TEXT: .text(ColumnKind.text(column))
                    case SQLITE_BLOB:
                        .blob(
                            column.length == 0
                                ? [] : Array(UnsafeRawBufferPointer(start: column.bytes, count: Int(column.length))))
                    default: .null
                    }
                #expect(read == value, "row \(row), column \(offset)")
            }
            // A stored checksum one bit off does not match.
            let flipped = try connection.statement(
                "SELECT \(list), (modelstore_crc(0, \(list)) | 1) - (modelstore_crc(0, \(list)) & 1) FROM t "
                    + "WHERE rowid = \(row + 1)")
            #expect(try flipped.step())
            #expect(!RowChecksum.read(flipped, columns: Int32(width), into: columns), "row \(row)")
            select.reset()
            flipped.reset()
        }
    }

    /// The checksum's C code calls the CRC through a function pointer: the tables' version, which a
    /// processor without the CRC-32C instruction uses, gives what ``CRC32C/update(_:_:)`` gives, in
    /// one piece or several.
    @Test func theTablesUpdateFunctionMatchesTheChecksum() {
        var random = SplitMix64(seed: 7)
        for _ in 0..<200 {
            let bytes = (0..<random.below(300)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            let cut = bytes.isEmpty ? 0 : random.below(bytes.count)
            let start = UInt32(truncatingIfNeeded: random.next())
            bytes.withUnsafeBytes { whole in
                let expected = CRC32C.update(start, whole)
                #expect(CRC32C.tableCUpdate(start, whole.baseAddress, whole.count) == expected)
                #expect(CRC32C.cUpdate(start, whole.baseAddress, whole.count) == expected)
                let first = CRC32C.tableCUpdate(start, whole.baseAddress, cut)
                #expect(CRC32C.tableCUpdate(first, whole.baseAddress.map { $0 + cut }, whole.count - cut) == expected)
            }
        }
    }
}
