import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreFileIO

extension SQLiteStore {
    /// Rewrites the SQLite store at `url` under another key: encrypts a plaintext database (`from` is
    /// `nil`), decrypts an encrypted one (`to` is `nil`), or changes its key.
    ///
    /// The database is opened alone (SQLite's exclusive locking mode: no other connection, in this
    /// process or another, may have it open, or this throws ``DataStoreError/Code/locked``), copied
    /// with `VACUUM INTO` into a new file beside it through the page cipher under the new key (every
    /// page keeps room for a nonce and a tag, so a decrypted file keeps 28 unused bytes a page), checked
    /// and flushed; then the write-ahead log is checkpointed into the old file and emptied, and the new
    /// file is renamed over the old one while the lock is still held. A crash at any instant leaves the
    /// old store or the new one; a failure before the rename removes the copy and leaves the old one.
    /// The rows, identifiers, history and tokens are the same. A rekey keeps the `.externalStorage`
    /// files as they are: they are sealed under the database's own file key, which the copy keeps.
    /// Encrypting or decrypting a store that has external files is refused, since the files could not
    /// be converted in the same atomic step; `modelstore convert` copies such a store instead.
    ///
    /// Throws ``DataStoreError/Code/wrongKey`` or ``DataStoreError/Code/keyRequired`` for the old key
    /// and ``DataStoreError/Code/invalidConfiguration`` when the file is not in the state the call
    /// expects, before anything is written.
    public static func changeEncryption(
        at url: URL, from old: EncryptionKeySource?, to new: EncryptionKeySource?, busyTimeout: Duration = .seconds(5)
    ) throws {
        let path = url.standardizedFileURL.path
        guard old != nil || new != nil else {
            throw DataStoreError(
                .invalidConfiguration, "no key was given for the SQLite store '\(path)'",
                remedy: "Give the current key in the store URL and the new one as an option")
        }
        guard FileIO.size(of: path) > 0 else {
            throw DataStoreError(.notFound, "there is no SQLite store at '\(path)'", remedy: "Check the path")
        }
        if old == nil || new == nil, let folder = ExternalValueFolder(databasePath: path),
            FileIO.isDirectory(folder.directory), case let files = try folder.fileNames(), !files.isEmpty
        {
            throw DataStoreError(
                .invalidConfiguration,
                "the SQLite store '\(path)' has \(files.count) external file(s) in '\(folder.directory)', which "
                    + "cannot be \(old == nil ? "encrypted" : "decrypted") in the same step as the database",
                remedy:
                    "Copy the store into a new one with 'modelstore convert' (give the new store's key in its URL); "
                    + "'modelstore compact' first removes files no model names")
        }
        let source = try SQLitePageCipher.forOpening(path, with: old)
        let copy = path + ".rekeying-" + String(UInt32.random(in: .min ... .max), radix: 16)
        defer {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileIO.remove(copy + suffix) }
        }
        let target = try new.map { new in try SQLitePageCipher.forOpening(copy, with: new) } ?? nil
        let connection = try SQLiteConnection(
            path: path, readOnly: false, create: false, busyTimeout: busyTimeout, cipher: source)
        do {
            // Alone on the file until the connection closes, which is after the rename.
            try connection.execute("PRAGMA locking_mode = EXCLUSIVE", during: "locking")
            try connection.execute("BEGIN EXCLUSIVE; COMMIT", during: "locking")
            // A decrypted store keeps no file key in the clear (it has no external files to open).
            if new == nil {
                try connection.execute(
                    "DELETE FROM \(StoreOpener.metaTable) WHERE key = '\(SQLiteConnection.externalFileKeyName)'",
                    during: "decrypting")
            }
            // Sorts and index builds of the copy stay in memory; its pages keep room for the cipher.
            try connection.execute("PRAGMA temp_store = MEMORY", during: "configuring")
            connection.reserveCipherBytes()
            try OpenFile(
                copy, writable: true, create: true, exclusive: true, permissions: .matching(fileAt: path)
            ).close()
            let into = try connection.prepare("VACUUM INTO ?")
            into.bind([.text(target?.uri(for: copy) ?? "file:" + uriEscaped(copy))])
            try into.run(during: "copying")
            into.finalize()
            let check = try SQLiteConnection(
                path: copy, readOnly: true, create: false, busyTimeout: busyTimeout, cipher: target)
            let result = try check.prepare("PRAGMA quick_check")
            try result.step(during: "checking the copy of")
            guard result.text(0) == "ok" else {
                throw DataStoreError(
                    .corrupted, "the copy of the SQLite store '\(path)' fails SQLite's check: \(result.text(0))",
                    remedy: "Run 'modelstore verify' on the store; it was not changed")
            }
            result.finalize()
            try FileIO.sync(copy)
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)", during: "checkpointing")
            try FileIO.rename(copy, to: path)
            try FileIO.syncDirectory(FileIO.parent(of: path))
        } catch let error as DataStoreError {
            throw error.inContext("re-encrypting the SQLite store '\(path)'")
        }
    }
}
