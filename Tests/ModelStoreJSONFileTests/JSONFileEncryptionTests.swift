import Foundation
import ModelStore
import ModelStoreConformance
import ModelStoreCrypto
import ModelStoreTestSupport
import Testing

@testable import ModelStoreJSONFile

extension ConformanceAdapter {
    /// The JSON file store encrypted with a key the app holds: the whole suite again.
    static let encryptedJSONFile = ConformanceAdapter(
        name: "JSONFileStore (encrypted)",
        capabilities: ConformanceAdapter.jsonFile.capabilities,
        expectedFailures: ConformanceAdapter.jsonFile.expectedFailures
    ) { directory in
        var configuration = JSONFileStoreConfiguration(url: directory.appendingPathComponent("store.json"))
        configuration.encryption = .key(JSONFileEncryptionTests.key)
        return configuration
    }
}

/// The conformance suite on an encrypted JSON file store.
struct EncryptedJSONFileConformanceTests {
    @Test(arguments: ConformanceSuite.cases(for: .encryptedJSONFile))
    func conformance(_ testCase: ConformanceCase) throws {
        switch try testCase.run() {
        case .passed: break
        case .skipped(let reason): try Test.cancel(Comment(rawValue: reason))
        case .expectedFailure(let reason, let failure): withKnownIssue(Comment(rawValue: reason)) { throw failure }
        }
    }
}

/// An encrypted JSON file: nothing readable in it, and every wrong way to open it a typed error
/// that leaves the file as it was.
struct JSONFileEncryptionTests {
    static let key = try! EncryptionKey(bytes: (0..<32).map { UInt8($0 &* 7) })
    private let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    private func open(_ encryption: EncryptionKeySource?) throws -> JSONFileStore {
        try Stores.open(directory.file()) { $0.encryption = encryption }
    }

    /// A store with one gadget whose name and photo are distinctive, saved twice (so a backup exists).
    private func fill() throws {
        let store = try open(.key(Self.key))
        var gadget = try Stores.new("Gadget", ["name": .string("Flux Capacitor"), "flag": .bool(true)])
        gadget.values[gadget.entity.slot(of: "photo")!] = .data(Data(repeating: 0x5A, count: 40_000))
        try Stores.save(store, inserting: [gadget])
        try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("Hoverboard")])])
    }

    @Test func nothingOfTheModelsShowsInTheFilesAndTheyReadBack() throws {
        try fill()
        let bytes = try Data(contentsOf: directory.file())
        #expect(bytes.starts(with: Data("ModelStore encrypted JSON 1\naes-256-gcm kdf=none check=".utf8)))
        for file in [directory.file(), directory.file("store.json.backup")] {
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
            for word in ["Flux", "Hoverboard", "Gadget", "entities", "name"] {
                #expect(!text.contains(word), "'\(word)' shows in \(file.lastPathComponent)")
            }
        }
        let external = directory.file("store.json.external")
        let names = try FileManager.default.contentsOfDirectory(atPath: external.path)
        #expect(names.count == 1)
        for name in names {
            let contents = try Data(contentsOf: external.appendingPathComponent(name))
            #expect(contents.count == 40_000 + AES256GCM.overhead)
            #expect(!contents.contains(Data(repeating: 0x5A, count: 64)), "the photo shows in its file")
        }
        let reopened = try open(.key(Self.key))
        let gadgets = try Stores.all(reopened, "Gadget")
        let gadgetNames = gadgets.map { $0.values[$0.entity.slot(of: "name")!] }
        #expect(gadgetNames == [.string("Flux Capacitor"), .string("Hoverboard")])
        let photo = gadgets.first.map { $0.values[$0.entity.slot(of: "photo")!] }
        #expect(photo == .data(Data(repeating: 0x5A, count: 40_000)))
    }

    /// Runs `body`, which must throw a DataStoreError with `code`, and checks that no file changed.
    private func refused(
        _ code: DataStoreError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) throws -> DataStoreError {
        let before = try FileTree.snapshot(directory.url)
        let error = try #require(throws: DataStoreError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(try FileTree.snapshot(directory.url) == before, "a refused open changed the files")
        return error
    }

    @Test func aWrongKeyIsATypedErrorNamingTheStoreAndTheFileIsUntouched() throws {
        try fill()
        let error = try refused(.wrongKey) { _ = try open(.key(try EncryptionKey.random())) }
        #expect(error.message.contains("'\(directory.file().path)'"))
        #expect(error.remedy?.contains("not read or changed") == true)
        _ = try refused(.wrongKey) { _ = try open(.passphrase("guess")) }
    }

    @Test func noKeyForAnEncryptedFileOrAKeyForAPlainOneIsRefused() throws {
        try fill()
        let missing = try refused(.keyRequired) { _ = try open(nil) }
        #expect(missing.remedy?.contains("key-env=NAME") == true)
        let plain = try TemporaryDirectory()
        do {
            let store = try Stores.open(plain.file())
            try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("plain")])])
        }
        let before = try FileTree.snapshot(plain.url)
        let error = try #require(throws: DataStoreError.self) {
            _ = try Stores.open(plain.file()) { $0.encryption = .key(Self.key) }
        }
        #expect(error.code == .invalidConfiguration)
        #expect(error.message.contains("is not encrypted, but a key was given"))
        #expect(try FileTree.snapshot(plain.url) == before)
    }

    @Test func aDocumentOfManyPiecesReadsBackAndDamageInAnyPieceIsCaught() throws {
        let store = try open(.key(Self.key))
        let names = (0..<400).map { "gadget \($0) " + String(repeating: "abcdefgh", count: 60) }
        try Stores.save(store, inserting: try names.map { try Stores.new("Gadget", ["name": .string($0)]) })
        let original = try Data(contentsOf: directory.file())
        let pieceSize = AES256GCM.defaultPieceSize
        #expect(original.count > 3 * pieceSize, "the document spans several pieces")
        let reopened = try open(.key(Self.key))
        let stored = try Stores.all(reopened, "Gadget").map { $0.values[$0.entity.slot(of: "name")!] }
        #expect(Set(stored) == Set(names.map { .string($0) }))
        var damaged: [Data] = [original.prefix(original.count - pieceSize), original.prefix(2 * pieceSize)]
        for index in [pieceSize - 1, pieceSize, 2 * pieceSize + 17, original.count - AES256GCM.tagSize - 1] {
            var copy = original
            copy[index] ^= 0x40
            damaged.append(copy)
        }
        for bytes in damaged {
            try bytes.write(to: directory.file())
            let error = try refused(.corrupted) { _ = try open(.key(Self.key)) }
            #expect(error.message.contains("fails authentication"))
        }
    }

    @Test func aFlippedTruncatedOrExtendedFileIsCaughtByAuthentication() throws {
        try fill()
        let original = try Data(contentsOf: directory.file())
        let headerEnd = original.firstRange(of: Data([UInt8(ascii: "\n")]), in: 30..<original.count)!.upperBound
        var rng = SplitMix64(seed: 46)
        var damaged: [Data] = [
            original.prefix(original.count - 1), original + Data([0]), original.prefix(headerEnd + 5),
        ]
        for _ in 0..<24 {
            var copy = original
            let index = headerEnd + rng.below(original.count - headerEnd)
            copy[index] ^= UInt8(1 << rng.below(8))
            damaged.append(copy)
        }
        for bytes in damaged {
            try bytes.write(to: directory.file())
            let error = try refused(.corrupted) { _ = try open(.key(Self.key)) }
            #expect(error.message.contains("fails authentication"))
        }
    }

    /// The plaintext inside the encrypted file at `url`.
    private func plaintext(of url: URL) throws -> String {
        let bytes = [UInt8](try Data(contentsOf: url))
        let document = try DocumentEncryption.open(
            bytes, document: url.path, keys: DocumentKeys(source: .key(Self.key)))
        return String(decoding: document, as: UTF8.self)
    }

    @Test func aSealedDocumentIsCompactWithoutAChecksumAndOneSealedWithAWrongChecksumStillOpens() throws {
        try fill()
        let sealed = try plaintext(of: directory.file())
        #expect(!sealed.contains("\"checksum\""))
        #expect(sealed.contains("\n{\"$id\":1,\"") && !sealed.contains("\"$id\": "), "\(sealed)")
        // A document sealed with a checksum inside (as earlier versions wrote it), and one whose
        // checksum no longer matches: the tag authenticates them, and the checksum is not computed.
        let plain = try TemporaryDirectory()
        do {
            let store = try Stores.open(plain.file())
            try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("Flux Capacitor")])])
        }
        let original = [UInt8](try Data(contentsOf: plain.file()))
        let text = String(decoding: original, as: UTF8.self)
        let digits = try #require(text.firstRange(of: "\"crc32c:"))
        var wrong = original
        let first = text.utf8.distance(from: text.utf8.startIndex, to: digits.upperBound)
        wrong[first] = wrong[first] == UInt8(ascii: "0") ? UInt8(ascii: "1") : UInt8(ascii: "0")
        for document in [original, wrong] {
            let keys = DocumentKeys(source: .key(Self.key))
            let sealed = try document.withUnsafeBytes { try DocumentEncryption.seal($0, keys: keys) }
            try Data(sealed).write(to: directory.file())
            let store = try open(.key(Self.key))
            let names = try Stores.all(store, "Gadget").map { $0.values[$0.entity.slot(of: "name")!] }
            #expect(names == [.string("Flux Capacitor")])
        }
        // The wrong checksum is still caught in the clear.
        try Data(wrong).write(to: plain.file())
        let error = try #require(throws: DataStoreError.self) { _ = try Stores.open(plain.file()) }
        #expect(error.code == .corrupted && error.message.contains("checksum"), "\(error)")
    }

    @Test func decryptingADocumentWithoutAChecksumWritesOneThatCatchesAnEdit() throws {
        try fill()
        try JSONFileStore.changeEncryption(at: directory.file(), from: .key(Self.key), to: nil)
        let bytes = try Data(contentsOf: directory.file())
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"checksum\": \"crc32c:"), "\(text.prefix(80))")
        let store = try open(nil)
        #expect(try Stores.all(store, "Gadget").count == 2)
        // An edit that is still valid JSON is caught by the checksum the decryption wrote.
        let edited = try #require(text.firstRange(of: "Flux Capacitor"))
        try Data(text.replacingCharacters(in: edited, with: "Glux Capacitor").utf8).write(to: directory.file())
        let error = try #require(throws: DataStoreError.self) { _ = try open(nil) }
        #expect(error.code == .corrupted && error.message.contains("checksum"), "\(error)")
    }

    @Test func aPassphraseFromTheEnvironmentDerivesTheKeyWithTheFilesSalt() throws {
        setenv("MODELSTORE_TEST_JSON_PASSPHRASE", "correct horse battery staple", 1)
        var configuration = JSONFileStoreConfiguration(url: directory.file(), schema: Stores.schema)
        configuration.encryption = .passphraseEnvironment("MODELSTORE_TEST_JSON_PASSPHRASE")
        do {
            let store = try JSONFileStore(configuration, migrationPlan: nil)
            try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("secret")])])
        }
        let header = String(decoding: try Data(contentsOf: directory.file()).prefix(120), as: UTF8.self)
        #expect(header.contains("kdf=scrypt n=32768 r=8 p=1 salt="))
        let store = try JSONFileStore(configuration, migrationPlan: nil)
        #expect(try Stores.all(store, "Gadget").count == 1)
        _ = try refused(.wrongKey) { _ = try open(.passphrase("Correct horse battery staple")) }
    }
}
