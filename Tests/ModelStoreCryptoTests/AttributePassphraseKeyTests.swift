import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreTestSupport
import Testing

/// `AttributeEncryption.passphraseKey(_:saltFile:)`: an attribute key from a passphrase and a salt
/// kept in a file the app names.
struct AttributePassphraseKeyTests {
    private let directory: TemporaryDirectory
    private let phrase = EncryptionKeySource.passphrase("correct horse battery staple")

    init() throws {
        directory = try TemporaryDirectory()
    }

    private var saltFile: String { directory.file("field-key.salt").path }

    private func key(_ source: EncryptionKeySource) throws -> EncryptionKey {
        guard case .key(let key) = source else { throw DataStoreError(.invalidValue, "not a key: \(source)") }
        return key
    }

    @Test func theFirstCallMakesAPrivateSaltFileAndLaterCallsDeriveTheSameKey() throws {
        let first = try key(try AttributeEncryption.passphraseKey(phrase, saltFile: saltFile))
        let line = try String(contentsOfFile: saltFile, encoding: .utf8)
        #expect(line.hasPrefix("aes-256-gcm kdf=scrypt n=32768 r=8 p=1 salt="), "\(line)")
        #expect(!line.contains("correct horse"))
        let mode = try FileManager.default.attributesOfItem(atPath: saltFile)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let again = try key(
            try AttributeEncryption.passphraseKey(
                .passphraseEnvironment("MS_FIELD_PHRASE"), saltFile: saltFile,
                environment: ["MS_FIELD_PHRASE": "correct horse battery staple"]))
        #expect(again == first)
        #expect(try String(contentsOfFile: saltFile, encoding: .utf8) == line)
        // Another salt file gives the same passphrase another key.
        let other = try key(
            try AttributeEncryption.passphraseKey(phrase, saltFile: directory.file("other.salt").path))
        #expect(other != first)
    }

    @Test func aWrongPassphraseOrADamagedFileIsATypedErrorAndTheFileStays() throws {
        _ = try AttributeEncryption.passphraseKey(phrase, saltFile: saltFile)
        let line = try Data(contentsOf: directory.file("field-key.salt"))
        let wrong = try #require(throws: DataStoreError.self) {
            _ = try AttributeEncryption.passphraseKey(.passphrase("Correct horse battery staple"), saltFile: saltFile)
        }
        #expect(wrong.code == .wrongKey && wrong.message.contains("'\(saltFile)'"), "\(wrong)")
        #expect(!wrong.message.contains("orse battery"), "the passphrase shows in the error")
        #expect(try Data(contentsOf: directory.file("field-key.salt")) == line)

        let notAPhrase = try #require(throws: DataStoreError.self) {
            _ = try AttributeEncryption.passphraseKey(.environment("MS_FIELD_KEY"), saltFile: saltFile)
        }
        #expect(notAPhrase.code == .invalidConfiguration)

        let withKey = try EncryptionHeader.create(for: .key(try EncryptionKey.random())).header.encoded
        for damaged in ["not a header", withKey] {
            try Data(damaged.utf8).write(to: directory.file("field-key.salt"))
            let error = try #require(throws: DataStoreError.self) {
                _ = try AttributeEncryption.passphraseKey(phrase, saltFile: saltFile)
            }
            #expect(error.code == .corrupted, "\(error)")
        }
    }

    @Test func processesThatMakeTheFileAtOnceShareOneSalt() async throws {
        let path = saltFile
        let phrase = phrase
        let keys = try await withThrowingTaskGroup(of: EncryptionKeySource.self) { group in
            for _ in 0..<4 { group.addTask { try AttributeEncryption.passphraseKey(phrase, saltFile: path) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let derived = try keys.map(key)
        #expect(Set(derived).count == 1)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(leftovers == ["field-key.salt"], "\(leftovers)")
    }
}
