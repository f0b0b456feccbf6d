import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// The `.externalStorage` files of an encrypted SQLite store: sealed one by one under the
/// database's own file key, with random names, kept by a rekey, and refused by an encrypt or a
/// decrypt that could not convert them in the same step.
struct SQLiteEncryptedExternalFilesTests {
    static let key = try! EncryptionKey(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 19 &+ 3) })
    private let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    private var url: URL { directory.file("store.sqlite") }

    private func open(_ key: EncryptionKey? = Self.key) throws -> SQLiteStore {
        var configuration = SQLiteStoreConfiguration(url: url)
        configuration.schema = try ItemSchema.schema()
        configuration.encryption = key.map(EncryptionKeySource.key)
        return try SQLiteStore(configuration, migrationPlan: nil)
    }

    /// A large value whose bytes spell a word over and over, so plaintext is easy to find.
    private static func secret(_ word: String) -> Data {
        Data(String(repeating: word, count: ExternalValueFolder.inlineLimit / word.utf8.count + 1).utf8)
    }

    private func insert(_ store: SQLiteStore, _ code: String, _ blob: Data) throws {
        let entity = try #require(store.schema.entity(named: "Item"))
        _ = try store.insert([try SQLiteExternalStorageTests.item(entity, code, blob: blob)])
    }

    private func externalFile(_ name: String) -> URL { URL(fileURLWithPath: url.path + ".external/" + name) }

    @Test func filesAreSealedUnderRandomNamesAndReadBack() throws {
        let value = Self.secret("Zeppelin ")
        do {
            let store = try open()
            try insert(store, "a", value)
            try insert(store, "b", value)
        }
        let files = try SQLiteExternalStorageTests.files(url)
        #expect(files.count == 2)
        #expect(files[0].prefix(16) != files[1].prefix(16), "the names carry no digest of the (equal) values")
        for name in files {
            let bytes = try Data(contentsOf: externalFile(name))
            #expect(bytes.prefix(4) == Data("MSX1".utf8))
            #expect(bytes.count == value.count + 4 + AES256GCM.overhead)
            #expect(!String(decoding: bytes, as: UTF8.self).contains("Zeppelin"))
        }
        let store = try open()
        #expect(try SQLiteExternalStorageTests.blob(store, code: "a") == .data(value))
        // Saving the same value again keeps its sealed file; another value replaces it.
        try SQLiteExternalStorageTests.update(store, code: "a") { $0["blob"] = .data(value) }
        #expect(try SQLiteExternalStorageTests.files(url) == files)
        try SQLiteExternalStorageTests.update(store, code: "a") { $0["blob"] = .data(Self.secret("Dirigible ")) }
        #expect(try SQLiteExternalStorageTests.blob(store, code: "a") == .data(Self.secret("Dirigible ")))
        #expect(try SQLiteExternalStorageTests.files(url).count == 2)
    }

    @Test func aChangedOrSwappedFileIsDamageNotGarbage() throws {
        let store = try open()
        try insert(store, "a", Self.secret("Zeppelin "))
        try insert(store, "b", Self.secret("Dirigible "))
        let (a, b) = (
            try #require(try SQLiteExternalStorageTests.column(store, code: "a").text),
            try #require(try SQLiteExternalStorageTests.column(store, code: "b").text)
        )
        // b's sealed file under a's name: it opens only under its own name.
        let original = try Data(contentsOf: externalFile(a))
        try Data(contentsOf: externalFile(b)).write(to: externalFile(a))
        let swapped = try #require(throws: DataStoreError.self) {
            _ = try SQLiteExternalStorageTests.blob(store, code: "a")
        }
        #expect(swapped.code == .corrupted)
        #expect(swapped.message.contains("fails authentication"), "\(swapped)")
        var flipped = original
        flipped[flipped.count / 2] ^= 0x20
        try flipped.write(to: externalFile(a))
        let damaged = try #require(throws: DataStoreError.self) {
            _ = try SQLiteExternalStorageTests.blob(store, code: "a")
        }
        #expect(damaged.code == .corrupted, "\(damaged)")
        // A plaintext file where a sealed one should be is refused too, and says what to do.
        try Self.secret("Zeppelin ").write(to: externalFile(a))
        let plain = try #require(throws: DataStoreError.self) {
            _ = try SQLiteExternalStorageTests.blob(store, code: "a")
        }
        #expect(plain.code == .corrupted && plain.remedy?.contains("modelstore convert") == true, "\(plain)")
        #expect(try SQLiteExternalStorageTests.blob(store, code: "b") == .data(Self.secret("Dirigible ")))
    }

    @Test func aRekeyKeepsTheFilesAndAConversionThatCannotIsRefused() throws {
        do { try insert(try open(), "a", Self.secret("Zeppelin ")) }
        let files = try SQLiteExternalStorageTests.files(url)
        let newKey = try EncryptionKey.random()
        try SQLiteStore.changeEncryption(at: url, from: .key(Self.key), to: .key(newKey))
        #expect(try SQLiteExternalStorageTests.files(url) == files)
        #expect(try SQLiteExternalStorageTests.blob(try open(newKey), code: "a") == .data(Self.secret("Zeppelin ")))

        let before = try Data(contentsOf: url)
        let refused = try #require(throws: DataStoreError.self) {
            try SQLiteStore.changeEncryption(at: url, from: .key(newKey), to: nil)
        }
        #expect(refused.code == .invalidConfiguration)
        #expect(refused.message.contains("1 external file(s)") && refused.remedy?.contains("convert") == true)
        #expect(try Data(contentsOf: url) == before)

        // Without external files the store decrypts, and keeps no file key in the clear.
        do {
            let store = try open(newKey)
            try store.erase()
            _ = try store.compact()
        }
        #expect(try SQLiteExternalStorageTests.files(url).isEmpty)
        try SQLiteStore.changeEncryption(at: url, from: .key(newKey), to: nil)
        let plain = try open(nil)
        let keys = try plain.database.withLock { connection in
            let statement = try connection.prepare("SELECT key FROM \(StoreOpener.metaTable)")
            var keys: [String] = []
            while try statement.step() { keys.append(statement.text(0)) }
            return keys
        }
        #expect(!keys.contains(SQLiteConnection.externalFileKeyName), "\(keys)")
        #expect(!keys.isEmpty)
    }
}
