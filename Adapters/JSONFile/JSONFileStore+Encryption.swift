import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreFileIO

extension JSONFileStore {
    /// Rewrites the JSON store at `url` under another key: encrypts a plaintext file (`from` is
    /// `nil`), decrypts an encrypted one (`to` is `nil`), or changes its key.
    ///
    /// Under the store's lock, the document is decrypted (or read) whole, sealed under the new key
    /// (or left plain), and replaced atomically (a flushed temporary file renamed over it): a crash
    /// at any instant leaves the old file or the new one. Its `.backup` is then rewritten the same
    /// way, or removed if it cannot be read, so that no copy under the old key stays behind. The
    /// bytes of the document do not change, so its checksum, history and tokens stay valid.
    ///
    /// A store with `.externalStorage` files is refused (``DataStoreError/Code/unsupportedFeature``):
    /// they could not be swapped in the same step as the document; `modelstore convert` copies such a
    /// store into a new, encrypted one. Throws ``DataStoreError/Code/wrongKey`` or
    /// ``DataStoreError/Code/keyRequired`` for the old key and
    /// ``DataStoreError/Code/invalidConfiguration`` when the file is not in the state the call expects;
    /// the file is then as it was.
    public static func changeEncryption(
        at url: URL, from old: EncryptionKeySource?, to new: EncryptionKeySource?,
        lockTimeout: Duration = .seconds(10), limits: JSONFileStoreConfiguration.Limits = .init()
    ) throws {
        let paths = Paths(url)
        guard old != nil || new != nil else {
            throw DataStoreError(
                .invalidConfiguration, "no key was given for the JSON store '\(paths.document)'",
                remedy: "Give the current key in the store URL and the new one as an option")
        }
        let external = (try? FileManager.default.contentsOfDirectory(atPath: paths.external)) ?? []
        guard external.isEmpty else {
            throw DataStoreError(
                .unsupportedFeature,
                "the JSON store '\(paths.document)' keeps \(external.count) .externalStorage files, which cannot be "
                    + "re-encrypted in the same atomic step as the document",
                remedy: "Copy it into a new store with 'modelstore convert \(url.path) json:NEW?key-env=NAME'")
        }
        let permissions = FilePermissions.matching(fileAt: paths.document)
        let lock = try FileLock(path: paths.lock, permissions: permissions)
        try lock.withLock(timeout: lockTimeout, document: paths.document) {
            guard let document = try rewritten(paths.document, limits: limits, from: old, to: new) else {
                throw DataStoreError(
                    .notFound, "there is no JSON store at '\(paths.document)'", remedy: "Check the path")
            }
            do {
                try FileIO.writeAtomically(document, to: paths.document, permissions: permissions)
                // The previous version under the new key too, or gone: never left under the old one.
                if let backup = try? rewritten(paths.backup, limits: limits, from: old, to: new) {
                    try FileIO.writeAtomically(backup, to: paths.backup, permissions: permissions)
                } else {
                    try FileIO.remove(paths.backup)
                    try FileIO.syncDirectory(paths.folder)
                }
            } catch let error as DataStoreError {
                throw error.inContext("re-encrypting the JSON store '\(paths.document)'")
            }
        }
    }

    /// The bytes of the file at `path` opened with `from` and sealed with `to`, or `nil` if there is
    /// no file.
    private static func rewritten(
        _ path: String, limits: JSONFileStoreConfiguration.Limits, from old: EncryptionKeySource?,
        to new: EncryptionKeySource?
    ) throws -> [UInt8]? {
        guard let bytes = try FileIO.read(path, limit: limits.maximumFileSize)?.bytes else { return nil }
        let plaintext: [UInt8]
        if DocumentEncryption.isEncrypted(bytes) {
            plaintext = try DocumentEncryption.open(bytes, document: path, keys: old.map(DocumentKeys.init))
        } else if old != nil {
            throw DocumentEncryption.notEncrypted(bytes, document: path)
        } else {
            plaintext = bytes
        }
        guard let new else { return plaintext }
        return try plaintext.withUnsafeBytes { try DocumentEncryption.seal($0, keys: DocumentKeys(source: new)) }
    }
}
