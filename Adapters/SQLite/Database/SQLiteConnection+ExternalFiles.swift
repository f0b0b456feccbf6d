import Foundation
import ModelStore
import ModelStoreCrypto

extension SQLiteConnection {
    /// The `modelstore_meta` key of an encrypted database's file key.
    static let externalFileKeyName = "externalFileKey"

    /// The cipher that seals the external files of an encrypted database, or `nil` for a plaintext one.
    ///
    /// The file key is random and kept in the database's `modelstore_meta` table, whose pages the page
    /// cipher seals, so a rekey (which copies the rows) keeps it and the files need no rewriting. It is
    /// made by the first save that writes an external file (`creating`), inside that save's write
    /// transaction, so two processes cannot make two; it is read again for every file, never kept
    /// across transactions, so a save that rolls back leaves no key behind in memory either.
    ///
    /// Throws ``DataStoreError/Code/corrupted`` when the stored key is not 32 bytes, and, without
    /// `creating`, when there is none (a row names an external file that no key can have sealed).
    func externalFileCipher(creating: Bool) throws -> AES256GCM? {
        guard isEncrypted else { return nil }
        let read = try statement(
            "SELECT value FROM \(StoreOpener.metaTable) WHERE key = '\(Self.externalFileKeyName)'")
        defer { read.reset() }
        if try read.step(during: "reading") {
            let text = read.text(0)
            do {
                return AES256GCM(key: try EncryptionKey(text: text, origin: "the database"))
            } catch {
                throw DataStoreError(
                    .corrupted, "the key of the external files of the SQLite store '\(path)' is damaged",
                    remedy: "Restore the database from a backup")
            }
        }
        guard creating else {
            throw DataStoreError(
                .corrupted,
                "the encrypted SQLite store '\(path)' names an external file but holds no key for its external files",
                remedy: "Restore the database from a backup")
        }
        let key = try EncryptionKey.random()
        let text = key.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        let write = try statement(StoreOpener.metaWriteSQL)
        write.bind(1, Self.externalFileKeyName)
        write.bind(2, text)
        try write.run()
        return AES256GCM(key: key)
    }
}
