import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// The page cache each store's connection keeps: SQLite's default for a plaintext database, a
/// larger one for an encrypted database (whose pages are decrypted again past it), and whatever the
/// configuration or the `sqlite:` URL sets.
struct SQLitePageCacheTests {
    private let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    /// The connection's `cache_size` in KiB (SQLite reports a size set in KiB as a negative number).
    private func cacheKiB(_ store: SQLiteStore) throws -> Int64 {
        try store.database.withLock { connection in
            let statement = try connection.prepare("PRAGMA cache_size")
            defer { statement.finalize() }
            #expect(try statement.step())
            return -statement.int64(0)
        }
    }

    private func open(
        _ file: String, encrypted: Bool, pageCacheSize: Int? = nil, allowsSave: Bool = true
    ) throws -> SQLiteStore {
        var configuration = SQLiteStoreConfiguration(url: directory.file(file))
        configuration.schema = try ItemSchema.schema()
        configuration.encryption = encrypted ? .key(SQLiteEncryptionTests.key) : nil
        configuration.pageCacheSize = pageCacheSize
        configuration.allowsSave = allowsSave
        return try SQLiteStore(configuration, migrationPlan: nil)
    }

    @Test func aPlaintextStoreKeepsSQLitesDefaultAndAnEncryptedOneALargerCache() throws {
        #expect(try cacheKiB(open("plain.sqlite", encrypted: false)) == 2_000)
        #expect(try cacheKiB(open("sealed.sqlite", encrypted: true)) == 64 * 1024)
        // Opened read-only, the same.
        #expect(try cacheKiB(open("sealed.sqlite", encrypted: true, allowsSave: false)) == 64 * 1024)
        #expect(SQLiteStoreConfiguration.defaultPageCacheSize(encrypted: true) == 64 << 20)
        #expect(SQLiteStoreConfiguration.defaultPageCacheSize(encrypted: false) == 2_000 << 10)
    }

    @Test func theConfigurationsSizeWinsAndIsRoundedUpToWholeKiB() throws {
        #expect(try cacheKiB(open("a.sqlite", encrypted: false, pageCacheSize: 16 << 20)) == 16 * 1024)
        #expect(try cacheKiB(open("b.sqlite", encrypted: true, pageCacheSize: 1 << 20)) == 1024)
        #expect(try cacheKiB(open("c.sqlite", encrypted: false, pageCacheSize: 1_500)) == 2)
    }

    @Test func aNegativeSizeIsRefusedBeforeAnythingIsCreated() throws {
        var configuration = SQLiteStoreConfiguration(url: directory.file("negative.sqlite"))
        configuration.pageCacheSize = -1
        let error = try #require(throws: DataStoreError.self) { try configuration.validate() }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("negative page cache size"))
        #expect(!FileManager.default.fileExists(atPath: directory.file("negative.sqlite").path))
    }
}
