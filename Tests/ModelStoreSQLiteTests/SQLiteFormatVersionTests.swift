import CSQLite
import Foundation
import ModelStore
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// The storage format recorded in `modelstore_meta`, outside what this build reads: the same code and
/// wording as every other store (`ModelStoreFileIO.FormatVersion`), naming the file, and the file left
/// as it was.
struct SQLiteFormatVersionTests {
    @Test(arguments: [
        (Int64(5), "unsupportedFeature", "newer than this version of ModelStore reads"),
        (Int64(0), "corrupted", "which no version of ModelStore writes"),
        (Int64(-1), "corrupted", "which no version of ModelStore writes"),
    ])
    func aFormatOutsideTheReadableRangeIsRefusedAsEveryStoreRefusesIt(
        format: Int64, code: String, wording: String
    ) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try SQLiteBadInputTests.validStore(url)
        var handle: OpaquePointer?
        #expect(sqlite3_open(url.path, &handle) == SQLITE_OK)
        RowChecksum.register(on: try #require(handle))
        let update = "UPDATE modelstore_meta SET value = \(format) WHERE key = 'format'"
        #expect(sqlite3_exec(handle, update, nil, nil, nil) == SQLITE_OK)
        #expect(sqlite3_changes(handle) == 1)
        sqlite3_close(handle)
        let error = try #require(try SQLiteBadInputTests().openError(url, in: directory))
        #expect(error.code.name == code, "\(error)")
        #expect(error.message.contains(wording), "\(error)")
    }
}
