import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// The `.externalStorage` files of an encrypted SQLite store: sealed one by one under the
/// database's own file key, with random names, and converted with the database by an encrypt, a
/// rekey (under a new file key) and a decrypt.
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

    /// The file key `modelstore_meta` holds, if any.
    private func fileKey(_ store: SQLiteStore) throws -> String? {
        try store.database.withLock { connection in
            let statement = try connection.prepare(
                "SELECT value FROM \(StoreOpener.metaTable) WHERE key = '\(SQLiteConnection.externalFileKeyName)'")
            return try statement.step() ? statement.text(0) : nil
        }
    }

    /// Whether every file of the folder is sealed and shows none of `words`.
    private func allSealed(hiding words: [String]) throws -> Bool {
        try SQLiteExternalStorageTests.files(url).allSatisfy { name in
            let bytes = try Data(contentsOf: externalFile(name))
            let text = String(decoding: bytes, as: UTF8.self)
            return bytes.prefix(4) == Data("MSX1".utf8) && !words.contains { text.contains($0) }
        }
    }

    @Test func encryptRekeyAndDecryptConvertTheFilesWithTheDatabase() throws {
        let (zeppelin, dirigible) = (Self.secret("Zeppelin "), Self.secret("Dirigible "))
        do {
            let store = try open(nil)
            try insert(store, "a", zeppelin)
            try insert(store, "b", dirigible)
            try insert(store, "c", zeppelin)
        }
        let plain = try SQLiteExternalStorageTests.files(url)
        #expect(plain.count == 3)

        var progress: [Int] = []
        try SQLiteStore.changeEncryption(at: url, from: nil, to: .key(Self.key)) { done, _ in progress.append(done) }
        #expect(progress.last == 4 && progress == progress.sorted(), "\(progress)")
        let sealed = try SQLiteExternalStorageTests.files(url)
        #expect(sealed.count == 3 && Set(sealed).isDisjoint(with: plain), "\(sealed)")
        #expect(try allSealed(hiding: ["Zeppelin", "Dirigible"]))
        do {
            let store = try open()
            #expect(try SQLiteExternalStorageTests.blob(store, code: "a") == .data(zeppelin))
            #expect(try SQLiteExternalStorageTests.blob(store, code: "b") == .data(dirigible))
            #expect(try SQLiteExternalStorageTests.blob(store, code: "c") == .data(zeppelin))
        }
        let firstFileKey = try #require(try withExtendedLifetime(try open()) { try fileKey($0) })

        // A rekey writes the files again under a new file key, so the old one opens none of them.
        let newKey = try EncryptionKey.random()
        try SQLiteStore.changeEncryption(at: url, from: .key(Self.key), to: .key(newKey))
        let rekeyed = try SQLiteExternalStorageTests.files(url)
        #expect(rekeyed.count == 3 && Set(rekeyed).isDisjoint(with: sealed), "\(rekeyed)")
        #expect(try allSealed(hiding: ["Zeppelin", "Dirigible"]))
        do {
            let store = try open(newKey)
            #expect(try fileKey(store) != firstFileKey)
            #expect(try SQLiteExternalStorageTests.blob(store, code: "b") == .data(dirigible))
            try insert(store, "d", dirigible)
        }
        let oldCipher = AES256GCM(key: try EncryptionKey(text: firstFileKey, origin: "the test"))
        for name in rekeyed {
            let bytes = Array(try Data(contentsOf: externalFile(name)))
            #expect(oldCipher.open(Array(bytes.dropFirst(4)), associatedData: Array(name.utf8)) == nil)
        }
        #expect(try SQLiteExternalStorageTests.files(url).count == 4)

        // Decrypted, the files are plain again, named by their digests, and no file key is left.
        try SQLiteStore.changeEncryption(at: url, from: .key(newKey), to: nil)
        let decrypted = try SQLiteExternalStorageTests.files(url)
        #expect(decrypted.count == 4 && Set(decrypted).isDisjoint(with: rekeyed))
        for name in decrypted {
            let bytes = try Data(contentsOf: externalFile(name))
            #expect(bytes == zeppelin || bytes == dirigible)
            #expect(name.hasPrefix(ExternalValueFolder.digest(bytes) + "-"))
        }
        let reopened = try open(nil)
        #expect(try fileKey(reopened) == nil)
        for (code, value) in [("a", zeppelin), ("b", dirigible), ("c", zeppelin), ("d", dirigible)] {
            #expect(try SQLiteExternalStorageTests.blob(reopened, code: code) == .data(value))
        }
        let problems = try SQLiteStore.integrityProblems(at: url)
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func aFileThatCannotBeOpenedLeavesTheStoreAsItWas() throws {
        do {
            let store = try open(nil)
            try insert(store, "a", Self.secret("Zeppelin "))
            try insert(store, "b", Self.secret("Dirigible "))
        }
        let names = try SQLiteExternalStorageTests.files(url)
        try FileManager.default.removeItem(at: externalFile(names[1]))
        let before = try FileTree.snapshot(directory.url)
        let refused = try #require(throws: DataStoreError.self) {
            try SQLiteStore.changeEncryption(at: url, from: nil, to: .key(Self.key))
        }
        #expect(refused.code == .corrupted && refused.message.contains("is missing"), "\(refused)")
        #expect(try FileTree.snapshot(directory.url) == before)
    }
}
