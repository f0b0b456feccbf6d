import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreTestSupport
import Testing

@testable import ModelStoreJSONFile

/// `JSONFileStore.changeEncryption` on a store with `.externalStorage` files: the files are written
/// again under the new key (or in the clear) with new names, for the document and its backup, and
/// the old ones go.
struct JSONFileExternalFilesEncryptionTests {
    private let directory: TemporaryDirectory
    private static let (first, second, third) = (
        Data(repeating: 0x5A, count: 40_000), Data(repeating: 0x3C, count: 20_000), Data(repeating: 0x7E, count: 30_000)
    )

    init() throws {
        directory = try TemporaryDirectory()
    }

    private var external: URL { directory.file("store.json.external") }

    private func names() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: external.path))
    }

    private func photos(_ url: URL, _ key: EncryptionKeySource?) throws -> [StoreValue?] {
        let store = try Stores.open(url) { $0.encryption = key }
        return try Stores.all(store, "Gadget").map { $0.values[$0.entity.slot(of: "photo")!] }
    }

    /// The photos of the backup, opened as a store of its own beside a copy of the folder.
    private func backupPhotos(_ key: EncryptionKeySource?) throws -> [StoreValue?] {
        let copy = try TemporaryDirectory()
        try FileManager.default.copyItem(at: directory.file("store.json.backup"), to: copy.file())
        try FileManager.default.copyItem(at: external, to: copy.file("store.json.external"))
        return try photos(copy.file(), key)
    }

    /// Two gadgets with photos, then the second photo replaced: the backup names a file the
    /// document does not.
    private func fill() throws {
        let store = try Stores.open(directory.file())
        var gadget = try Stores.new("Gadget", ["name": .string("Flux")])
        gadget.values[gadget.entity.slot(of: "photo")!] = .data(Self.first)
        var other = try Stores.new("Gadget", ["name": .string("Hoverboard")])
        other.values[other.entity.slot(of: "photo")!] = .data(Self.second)
        try Stores.save(store, inserting: [gadget, other])
        var changed = try #require(try Stores.all(store, "Gadget").last)
        changed.values[changed.entity.slot(of: "photo")!] = .data(Self.third)
        try Stores.save(store, updating: [changed])
    }

    @Test func encryptRekeyAndDecryptConvertTheFilesOfTheDocumentAndItsBackup() throws {
        try fill()
        let plain = try names()
        #expect(plain.count == 3)
        let key = EncryptionKeySource.key(JSONFileEncryptionTests.key)
        var progress: [Int] = []
        try JSONFileStore.changeEncryption(at: directory.file(), from: nil, to: key) { done, _ in
            progress.append(done)
        }
        #expect(progress.first == 0 && progress.last == 4 && progress == progress.sorted(), "\(progress)")
        let sealed = try names()
        #expect(sealed.count == 3 && sealed.isDisjoint(with: plain), "\(sealed)")
        for name in sealed {
            let contents = try Data(contentsOf: external.appendingPathComponent(name))
            for byte: UInt8 in [0x5A, 0x3C, 0x7E] {
                #expect(!contents.contains(Data(repeating: byte, count: 64)), "a photo shows in '\(name)'")
            }
        }
        #expect(try photos(directory.file(), key) == [.data(Self.first), .data(Self.third)])
        #expect(try backupPhotos(key) == [.data(Self.first), .data(Self.second)])

        let passphrase = EncryptionKeySource.passphrase("correct horse battery staple")
        try JSONFileStore.changeEncryption(at: directory.file(), from: key, to: passphrase)
        let rekeyed = try names()
        #expect(rekeyed.count == 3 && rekeyed.isDisjoint(with: sealed), "\(rekeyed)")
        let wrong = try #require(throws: DataStoreError.self) { _ = try photos(directory.file(), key) }
        #expect(wrong.code == .wrongKey)
        #expect(try photos(directory.file(), passphrase) == [.data(Self.first), .data(Self.third)])
        #expect(try backupPhotos(passphrase) == [.data(Self.first), .data(Self.second)])

        try JSONFileStore.changeEncryption(at: directory.file(), from: passphrase, to: nil)
        let decrypted = try names()
        #expect(decrypted.count == 3 && decrypted.isDisjoint(with: rekeyed))
        #expect(decrypted == Set([Self.first, Self.second, Self.third].map { ExternalFiles.hash($0) + ".bin" }))
        #expect(directory.file().text.contains("{\"$file\": \"\(ExternalFiles.hash(Self.third)).bin\"}"))
        #expect(try photos(directory.file(), nil) == [.data(Self.first), .data(Self.third)])
        #expect(try backupPhotos(nil) == [.data(Self.first), .data(Self.second)])
        // The store saves on as usual: an unchanged photo keeps its file.
        let store = try Stores.open(directory.file())
        try Stores.save(store, inserting: [try Stores.new("Gadget", ["name": .string("Sled")])])
        #expect(try names().isSuperset(of: [ExternalFiles.hash(Self.first) + ".bin"]))
    }

    @Test func aMissingFileOrAChangedDocumentLeavesTheStoreAsItWas() throws {
        try fill()
        let key = EncryptionKeySource.key(JSONFileEncryptionTests.key)
        let document = try Data(contentsOf: directory.file())
        let hashOfThird = ExternalFiles.hash(Self.third) + ".bin"
        try FileManager.default.removeItem(at: external.appendingPathComponent(hashOfThird))
        let before = try FileTree.snapshot(directory.url)
        let missing = try #require(throws: DataStoreError.self) {
            try JSONFileStore.changeEncryption(at: directory.file(), from: nil, to: key)
        }
        #expect(missing.code == .corrupted && missing.message.contains("is missing"), "\(missing)")
        #expect(try FileTree.snapshot(directory.url) == before)

        var edited = document
        let index = try #require(edited.firstRange(of: Data("Hoverboard".utf8))).lowerBound
        edited[index] = UInt8(ascii: "h")
        try edited.write(to: directory.file())
        let changed = try FileTree.snapshot(directory.url)
        let mismatch = try #require(throws: DataStoreError.self) {
            try JSONFileStore.changeEncryption(at: directory.file(), from: nil, to: key)
        }
        #expect(mismatch.code == .corrupted && mismatch.message.contains("checksum"), "\(mismatch)")
        #expect(try FileTree.snapshot(directory.url) == changed)
    }

    /// A backup the old key cannot open goes before the document is replaced, not after: a run
    /// stopped between the two must not leave it behind, where a later change back to its key
    /// would make it readable again. Here the document's write fails (a folder stands where its
    /// temporary file goes): the backup is already gone, and the document and its files are as
    /// they were.
    @Test func aBackupTheOldKeyCannotOpenIsRemovedBeforeTheDocumentIsReplaced() throws {
        try fill()
        let key = EncryptionKeySource.key(JSONFileEncryptionTests.key)
        try JSONFileStore.changeEncryption(at: directory.file(), from: nil, to: key)
        let backupURL = directory.file("store.json.backup")
        try Data("{\"not\": \"a backup under this key\"}".utf8).write(to: backupURL)
        let document = try Data(contentsOf: directory.file())
        let files = try names()
        let temporary = directory.file("store.json.tmp")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: false)

        let passphrase = EncryptionKeySource.passphrase("correct horse battery staple")
        let failure = try #require(throws: DataStoreError.self) {
            try JSONFileStore.changeEncryption(at: directory.file(), from: key, to: passphrase)
        }
        #expect(failure.code == .io && failure.message.contains("store.json.tmp"), "\(failure)")
        #expect(!FileManager.default.fileExists(atPath: backupURL.path), "the unreadable backup is still there")
        #expect(try Data(contentsOf: directory.file()) == document)
        #expect(try names() == files)
        #expect(try photos(directory.file(), key) == [.data(Self.first), .data(Self.third)])

        try FileManager.default.removeItem(at: temporary)
        try JSONFileStore.changeEncryption(at: directory.file(), from: key, to: passphrase)
        #expect(!FileManager.default.fileExists(atPath: backupURL.path))
        #expect(try names().count == 2 && names().isDisjoint(with: files))
        #expect(try photos(directory.file(), passphrase) == [.data(Self.first), .data(Self.third)])
    }
}
