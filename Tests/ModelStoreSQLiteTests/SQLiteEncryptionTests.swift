import Foundation
import ModelStore
import ModelStoreConformance
import ModelStoreCrypto
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

extension ConformanceAdapter {
    /// The SQLite store with its pages sealed by the page cipher: the whole suite again.
    static let encryptedSQLite = ConformanceAdapter(
        name: "SQLiteStore (encrypted)",
        capabilities: ConformanceAdapter.sqlite.capabilities,
        expectedFailures: ConformanceAdapter.sqlite.expectedFailures
    ) { directory in
        var configuration = SQLiteStoreConfiguration(url: directory.appendingPathComponent("store.sqlite"))
        configuration.encryption = .key(SQLiteEncryptionTests.key)
        return configuration
    }
}

/// The conformance suite on an encrypted SQLite store.
struct EncryptedSQLiteConformanceTests {
    @Test(arguments: ConformanceSuite.cases(for: .encryptedSQLite))
    func conformance(_ testCase: ConformanceCase) throws {
        switch try testCase.run() {
        case .passed: break
        case .skipped(let reason): try Test.cancel(Comment(rawValue: reason))
        case .expectedFailure(let reason, let failure): withKnownIssue(Comment(rawValue: reason)) { throw failure }
        }
    }
}

/// An encrypted SQLite store: nothing of the models in its files, and every wrong way to open it a
/// typed error that leaves the files as they were.
struct SQLiteEncryptionTests {
    static let key = try! EncryptionKey(bytes: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })
    private let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    private var url: URL { directory.file("store.sqlite") }

    private func open(_ encryption: EncryptionKeySource?, allowsSave: Bool = true) throws -> SQLiteStore {
        var configuration = SQLiteStoreConfiguration(url: url)
        configuration.schema = try ItemSchema.schema()
        configuration.encryption = encryption
        configuration.allowsSave = allowsSave
        return try SQLiteStore(configuration, migrationPlan: nil)
    }

    private func item(_ store: SQLiteStore, _ code: String, name: String) throws -> DefaultSnapshot {
        try SQLiteStoreTests.item(
            try #require(store.schema.entity(named: "Item")), ["code": .string(code), "name": .string(name)])
    }

    /// A store with 200 items whose names hold a distinctive word; open, its log holds them, and once it
    /// goes, SQLite checkpoints them into the database.
    @discardableResult
    private func fill(_ encryption: EncryptionKeySource? = .key(Self.key)) throws -> SQLiteStore {
        let store = try open(encryption)
        _ = try store.insert(try (0..<200).map { try item(store, "c\($0)", name: "Hoverboard \($0)") })
        return store
    }

    private func files() throws -> [String: Data] { try FileTree.snapshot(directory.url) }

    /// Runs `body`, which must throw a DataStoreError with `code`, and checks that no file changed.
    @discardableResult
    private func refused(
        _ code: DataStoreError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) throws -> DataStoreError {
        let before = try files()
        let error = try #require(throws: DataStoreError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(try files() == before, "a refused open changed the files", sourceLocation: sourceLocation)
        return error
    }

    @Test func nothingOfTheModelsShowsInTheFilesAndTheyReadBack() throws {
        var all: [String: Data] = [:]
        do {
            let store = try fill()
            all = try files()
            _ = store
        }
        #expect(all["store.sqlite-wal"]?.isEmpty == false)
        all["store.sqlite.after"] = try Data(contentsOf: url)
        for (name, bytes) in all {
            let text = String(decoding: bytes, as: UTF8.self)
            for word in ["Hoverboard", "modelstore_meta", "CREATE TABLE", "SQLite format 3"] {
                #expect(!text.contains(word), "'\(word)' shows in \(name)")
            }
        }
        let store = try open(.key(Self.key))
        #expect(try store.count(StoreQuery(entityName: "Item")) == 200)
        let reader = try open(.key(Self.key), allowsSave: false)
        #expect(try reader.count(StoreQuery(entityName: "Item")) == 200)
    }

    @Test(arguments: ["plain", "per%cent", "a?b", "hash#tag", "%3f#?"])
    func aPathWithURICharactersOpensThroughTheCipher(folder: String) throws {
        var configuration = SQLiteStoreConfiguration(
            url: directory.url.appendingPathComponent(folder + "/store.sqlite"))
        configuration.schema = try ItemSchema.schema()
        configuration.encryption = .key(Self.key)
        do {
            let store = try SQLiteStore(configuration, migrationPlan: nil)
            _ = try store.insert([try item(store, "c1", name: "Hoverboard")])
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(names == [folder], "the store went to another folder: \(names)")
        let reopened = try SQLiteStore(configuration, migrationPlan: nil)
        #expect(try reopened.count(StoreQuery(entityName: "Item")) == 1)
    }

    @Test func aWrongKeyIsATypedErrorNamingTheStoreAndTheFilesAreUntouched() throws {
        try fill()
        let error = try refused(.wrongKey) { _ = try open(.key(try EncryptionKey.random())) }
        #expect(error.message.contains("'\(url.path)'"))
        #expect(error.remedy?.contains("not read or changed") == true)
        try refused(.wrongKey) { _ = try open(.passphrase("guess")) }
        try refused(.wrongKey) { _ = try open(.key(try EncryptionKey.random()), allowsSave: false) }
    }

    @Test func noKeyForAnEncryptedFileOrAKeyForAPlainOneIsRefused() throws {
        try fill()
        let missing = try refused(.keyRequired) { _ = try open(nil) }
        #expect(missing.remedy?.contains("key-env=NAME") == true)
        try refused(.keyRequired) { _ = try open(nil, allowsSave: false) }
        try FileManager.default.removeItem(at: directory.url)
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try fill(nil)
        let plain = try refused(.invalidConfiguration) { _ = try open(.key(Self.key)) }
        #expect(plain.message.contains("is not encrypted, but a key was given"))
    }

    @Test func aFlippedByteInTheDatabaseIsDamageNotGarbage() throws {
        try fill()
        let original = try Data(contentsOf: url)
        var rng = SplitMix64(seed: 46)
        var caught = 0
        let pages = original.count / 4096
        for page in 1..<pages {
            var damaged = original
            damaged[page * 4096 + rng.below(4096)] ^= UInt8(1 << rng.below(8))
            try damaged.write(to: url)
            try? FileManager.default.removeItem(at: directory.file("store.sqlite-wal"))
            try? FileManager.default.removeItem(at: directory.file("store.sqlite-shm"))
            // Reads the table, each index and the history: a damaged page among them is an error, and
            // whatever is read is what was saved (a page none of them reads, such as a free one, is not seen).
            do {
                let store = try open(.key(Self.key))
                let names = try store.run(StoreQuery(entityName: "Item")).map { $0.values[$0.entity.slot(of: "name")!] }
                #expect(Set(names) == Set((0..<200).map { StoreValue.string("Hoverboard \($0)") }), "page \(page + 1)")
                for key in ["name", "n", "code"] {
                    let sorted = try store.run(StoreQuery(entityName: "Item", sort: [StoreSortKey(property: key)]))
                    #expect(sorted.count == 200, "page \(page + 1)")
                }
                _ = try store.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
            } catch let error as DataStoreError {
                #expect(error.code == .corrupted, "page \(page + 1): \(error)")
                caught += 1
            }
        }
        #expect(caught >= pages - 3, "only \(caught) of \(pages - 1) damaged pages were caught")
        // Page 1 damaged: the key still opens page 2, so it is damage, not a wrong key.
        var first = original
        first[200] ^= 1
        try first.write(to: url)
        let error = try refused(.corrupted) { _ = try open(.key(Self.key)) }
        #expect(error.message.contains("fails authentication"))
    }

    @Test func aLogDamagedBeforeCommittedTransactionsIsRefusedNotSilentlyCut() throws {
        let copy = directory.file("copy.sqlite")
        do {
            let store = try fill()
            for index in 0..<3 { _ = try store.insert([try item(store, "later\(index)", name: "later \(index)")]) }
            // The files as a killed process leaves them: the log not checkpointed.
            for suffix in ["", "-wal"] {
                try FileManager.default.copyItem(atPath: url.path + suffix, toPath: copy.path + suffix)
            }
        }
        var log = try Data(contentsOf: URL(fileURLWithPath: copy.path + "-wal"))
        log[32 + 24 + 64] ^= 0x10
        try log.write(to: URL(fileURLWithPath: copy.path + "-wal"))
        var configuration = SQLiteStoreConfiguration(url: copy)
        configuration.schema = try ItemSchema.schema()
        configuration.encryption = .key(Self.key)
        let before = try FileTree.snapshot(directory.url)
        let error = try #require(throws: DataStoreError.self) { _ = try SQLiteStore(configuration, migrationPlan: nil) }
        #expect(error.code == .corrupted && error.message.contains("damaged at byte 32"), "\(error)")
        #expect(try FileTree.snapshot(directory.url) == before, "the refused open wrote nothing")
        let problems = try SQLiteStore.integrityProblems(at: copy, encryption: .key(Self.key))
        #expect(problems.contains { $0.contains("damaged at byte 32") }, "\(problems)")
    }

    @Test func aPassphraseFromTheEnvironmentDerivesTheKeyWithTheFilesSalt() throws {
        setenv("MODELSTORE_TEST_SQLITE_PASSPHRASE", "correct horse battery staple", 1)
        try fill(.passphraseEnvironment("MODELSTORE_TEST_SQLITE_PASSPHRASE"))
        let store = try open(.passphrase("correct horse battery staple"))
        #expect(try store.count(StoreQuery(entityName: "Item")) == 200)
        try refused(.wrongKey) { _ = try open(.passphrase("Correct horse battery staple")) }
    }

    @Test func twoStoresOnOneEncryptedFileSeeEachOthersSaves() throws {
        try fill()
        let first = try open(.key(Self.key))
        let second = try open(.key(Self.key))
        _ = try first.insert([try item(first, "late", name: "late")])
        #expect(try second.count(StoreQuery(entityName: "Item")) == 201)
    }

    @Test func encryptRekeyAndDecryptKeepTheModelsAndTheOldKeyStopsWorking() throws {
        try fill(nil)
        let plainIdentifier = try open(nil).identifier
        try SQLiteStore.changeEncryption(at: url, from: nil, to: .key(Self.key))
        #expect(!String(decoding: try Data(contentsOf: url), as: UTF8.self).contains("Hoverboard"))
        try refused(.keyRequired) { _ = try open(nil) }
        do {
            let encrypted = try open(.key(Self.key))
            #expect(encrypted.identifier == plainIdentifier)
            #expect(try encrypted.count(StoreQuery(entityName: "Item")) == 200)
            _ = try encrypted.insert([try item(encrypted, "after", name: "after encrypting")])

            // Another store has it open: the rekey waits for the lock, then refuses, and changes nothing.
            let error = try refused(.locked) {
                try SQLiteStore.changeEncryption(
                    at: url, from: .key(Self.key), to: .key(try EncryptionKey.random()), busyTimeout: .milliseconds(50))
            }
            #expect(error.message.contains("'\(url.path)'"))
        }

        let newKey = try EncryptionKey.random()
        try refused(.wrongKey) { try SQLiteStore.changeEncryption(at: url, from: .key(newKey), to: nil) }
        try SQLiteStore.changeEncryption(at: url, from: .key(Self.key), to: .key(newKey))
        try refused(.wrongKey) { _ = try open(.key(Self.key)) }
        #expect(try open(.key(newKey)).count(StoreQuery(entityName: "Item")) == 201)

        try SQLiteStore.changeEncryption(at: url, from: .key(newKey), to: nil)
        #expect(try Data(contentsOf: url).prefix(15) == Data("SQLite format 3".utf8))
        let plain = try open(nil)
        #expect(try plain.count(StoreQuery(entityName: "Item")) == 201)
        #expect(plain.identifier == plainIdentifier)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!leftovers.contains { $0.contains(".rekeying-") }, "\(leftovers)")
    }
}
