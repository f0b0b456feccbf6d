import CModelStoreSQLiteCipher
import CSQLite
import Foundation
import ModelStore
import ModelStoreCrypto

/// The key of an encrypted SQLite store, registered with the page cipher VFS for as long as a
/// connection uses it.
///
/// The VFS (`CModelStoreSQLiteCipher`) seals every page of the database, of its write-ahead log and
/// of its rollback journal with AES-256-GCM; the file's first 16 bytes are its salt (see `FORMAT.md`,
/// "Encrypted files"). The key itself stays in memory: the URI names only the number it is
/// registered under.
final class SQLitePageCipher: Sendable {
    /// The number the VFS knows the key by.
    let identifier: Int32
    /// The file's salt: the passphrase's scrypt salt, and part of every page's associated data.
    let salt: [UInt8]

    /// The scrypt cost a passphrase's key is derived with; the salt is the file's.
    static func derivation(salt: [UInt8]) -> KeyDerivation { .scrypt(n: 1 << 15, r: 8, p: 1, salt: salt) }

    private init(key: EncryptionKey, salt: [UInt8], store: String) throws {
        guard modelstore_cipher_register() == SQLITE_OK else {
            throw DataStoreError(
                .io, "the page cipher for the SQLite store '\(store)' cannot be registered with SQLite",
                remedy: "Check that the system's SQLite library is version 3.40 or newer")
        }
        let identifier = key.withUnsafeBytes { bytes in
            modelstore_cipher_key_add(bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), salt)
        }
        guard identifier >= 0 else {
            throw DataStoreError(.io, "out of memory registering the key of the SQLite store '\(store)'")
        }
        self.identifier = identifier
        self.salt = salt
    }

    deinit { modelstore_cipher_key_remove(identifier) }

    /// The `file:` URI that opens `path` (a path, or a `file:` URI whose options it keeps) through the
    /// cipher with this key.
    func uri(for path: String) -> String {
        let parameters = "vfs=\(MODELSTORE_CIPHER_VFS)&\(MODELSTORE_CIPHER_KEY_PARAMETER)=\(identifier)"
        guard path.hasPrefix("file:") else { return "file:" + SQLiteStore.uriEscaped(path) + "?" + parameters }
        return path + (path.contains("?") ? "&" : "?") + parameters
    }

    /// The cipher that opens the file at `path` with the key from `source`, or `nil` when the store
    /// is plaintext (`source` is `nil` and the file is not encrypted). A missing or empty file gets a
    /// new salt; `reusing` is returned as it is when the file's salt is its salt.
    ///
    /// Throws, before anything is opened or written, ``DataStoreError/Code/keyRequired`` for an
    /// encrypted file and no key, ``DataStoreError/Code/wrongKey`` for a key that does not open it,
    /// ``DataStoreError/Code/invalidConfiguration`` for a key and a plaintext file, and
    /// ``DataStoreError/Code/corrupted`` when the file's first page fails authentication though the key
    /// opens its second.
    static func forOpening(
        _ path: String, with source: EncryptionKeySource?, reusing: SQLitePageCipher? = nil
    ) throws -> SQLitePageCipher? {
        var salt = [UInt8](repeating: 0, count: Int(MODELSTORE_CIPHER_SALT))
        switch Int(modelstore_cipher_classify(path, &salt)) {
        case modelstore_cipher_file_missing, modelstore_cipher_file_empty:
            guard let source else { return nil }
            if let reusing, FileManager.default.fileExists(atPath: path) { return reusing }
            let newSalt = try SecureRandom.bytes(Int(MODELSTORE_CIPHER_SALT))
            return try SQLitePageCipher(
                key: try source.resolve(derivation: source.isPassphrase ? derivation(salt: newSalt) : .none),
                salt: newSalt, store: path)
        case modelstore_cipher_file_plaintext:
            guard source == nil else { throw DataStoreError.notEncrypted(store: path) }
            return nil
        case modelstore_cipher_file_encrypted:
            guard let source else { throw DataStoreError.keyRequired(store: path) }
            if let reusing, reusing.salt == salt { return reusing }
            let key = try source.resolve(derivation: source.isPassphrase ? derivation(salt: salt) : .none)
            // Registered first: the check keeps the first page it opens with the key, and the connections
            // start from it instead of opening it again. A key that does not open the file is removed
            // when the cipher is released, as the error is thrown.
            let cipher = try SQLitePageCipher(key: key, salt: salt, store: path)
            switch Int(modelstore_cipher_check_registered_key(path, cipher.identifier)) {
            case modelstore_cipher_key_opens:
                return cipher
            case modelstore_cipher_key_page_damaged:
                throw DataStoreError(
                    .corrupted,
                    "the first page of the encrypted SQLite store '\(path)' fails authentication, though the key "
                        + "opens its second: the page was changed or damaged on disk",
                    remedy: "Restore the file from a backup")
            case modelstore_cipher_key_wrong:
                throw DataStoreError.wrongKey(store: path, source: source, detail: nil)
            default:
                throw DataStoreError(
                    .io, "the encrypted SQLite store '\(path)' cannot be read to check its key",
                    remedy: "Check that the process may read the file")
            }
        default:
            guard source != nil else { return nil }
            throw DataStoreError(
                .corrupted,
                "the file '\(path)' is neither an SQLite database nor one encrypted by ModelStore, so the key "
                    + "given cannot open it",
                remedy: "Check the path, or restore the file from a backup")
        }
    }
}
