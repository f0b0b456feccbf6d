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
    /// The rows, identifiers, history and tokens are the same.
    ///
    /// The `.externalStorage` files are converted with the database: before the rename, each file a
    /// row names is written again beside it under a new name (sealed under a new random file key that
    /// the copy keeps in its `modelstore_meta` table, or in the clear when decrypting), flushed, and
    /// the copy's row is changed to name it, so the old database names only old files and the new one
    /// only new files. After the rename the old files are removed; a crash before that leaves them
    /// unnamed, and `compact()` removes them. A rekey writes the files again too, under a new file key,
    /// so the old key, with an old copy of the database, opens none of them.
    ///
    /// Throws ``DataStoreError/Code/wrongKey`` or ``DataStoreError/Code/keyRequired`` for the old key
    /// and ``DataStoreError/Code/invalidConfiguration`` when the file is not in the state the call
    /// expects, before anything is written.
    public static func changeEncryption(
        at url: URL, from old: EncryptionKeySource?, to new: EncryptionKeySource?, busyTimeout: Duration = .seconds(5),
        progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }
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
        let source = try SQLitePageCipher.forOpening(path, with: old)
        let copy = path + ".rekeying-" + String(UInt32.random(in: .min ... .max), radix: 16)
        defer {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileIO.remove(copy + suffix) }
        }
        let target = try new.map { new in try SQLitePageCipher.forOpening(copy, with: new) } ?? nil
        let connection = try SQLiteConnection(
            path: path, readOnly: false, create: false, busyTimeout: busyTimeout, cipher: source)
        var converted: (old: [String], new: [String]) = ([], [])
        var renamed = false
        defer {
            // Files written for a copy that did not take the store's place: no database names them.
            if !renamed { connection.externalValues?.remove(converted.new) }
        }
        do {
            // Alone on the file until the connection closes, which is after the rename.
            try connection.execute("PRAGMA locking_mode = EXCLUSIVE", during: "locking")
            try connection.execute("BEGIN EXCLUSIVE; COMMIT", during: "locking")
            // Copies of a run killed before its rename: a run in progress would hold the lock.
            let stale = URL(fileURLWithPath: path).lastPathComponent + ".rekeying-"
            for name in try FileIO.contents(of: FileIO.parent(of: path)) where name.hasPrefix(stale) {
                try? FileIO.remove(FileIO.parent(of: path) + "/" + name)
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
            let files = try convertExternalFiles(
                of: connection, into: copy, cipher: target, busyTimeout: busyTimeout, converted: &converted,
                progress: progress)
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
            renamed = true
            try FileIO.syncDirectory(FileIO.parent(of: path))
            progress(files + 1, files + 1)
            // The new database names none of the old files; they go once the rename is durable.
            if let folder = connection.externalValues, !converted.old.isEmpty {
                folder.remove(converted.old)
                try? folder.syncFolder()
            }
        } catch let error as DataStoreError {
            throw error.inContext("re-encrypting the SQLite store '\(path)'")
        }
    }

    /// Writes every external file the copy's rows name again, in the folder of the database
    /// `connection` has open: opened with the source's file key (none for a plaintext source) and
    /// sealed under a new file key of the copy's (`cipher` is its page cipher; none to decrypt),
    /// each under a new name that the copy's row then names. The copy's old file key is dropped in
    /// the same transaction, and the folder is flushed before it commits. `converted` collects the old
    /// names and the new ones as it goes, so that the caller can remove either whatever happens.
    /// Returns how many rows name a file.
    private static func convertExternalFiles(
        of connection: SQLiteConnection, into copy: String, cipher: SQLitePageCipher?, busyTimeout: Duration,
        converted: inout (old: [String], new: [String]), progress: (_ done: Int, _ total: Int) -> Void
    ) throws -> Int {
        let writer = try SQLiteConnection(
            path: copy, readOnly: false, create: false, busyTimeout: busyTimeout, cipher: cipher)
        return try writer.writeTransaction {
            try writer.execute(
                "DELETE FROM \(StoreOpener.metaTable) WHERE key = '\(SQLiteConnection.externalFileKeyName)'",
                during: "dropping the external files' key of")
            let layouts = try Schema(try storedSchema(writer)).entities.map(EntityLayout.init)
            let rows = try externalFileRows(writer, layouts: layouts)
            progress(0, rows.count + 1)
            guard !rows.isEmpty, let folder = connection.externalValues else { return rows.count }
            let opener = try connection.externalFileCipher(creating: false)
            let sealer = try writer.externalFileCipher(creating: true)
            let changes = ExternalFileChanges()
            changes.checkedFolder = true
            var renamed: [String: String] = [:]
            for (index, row) in rows.enumerated() {
                let name: String
                if let known = renamed[row.name] {
                    name = known
                } else {
                    let data = try folder.load(row.name, owner: row.owner, sealer: opener)
                    name = try folder.store(data, changes: changes, sealer: sealer)
                    renamed[row.name] = name
                    converted.old.append(row.name)
                    converted.new.append(name)
                }
                let update = try writer.prepare(
                    "UPDATE \(row.table) SET \(row.column) = ? WHERE \(EntityLayout.primaryKey) = ?")
                update.bind(1, name)
                update.bind(2, row.key)
                try update.run(during: "renaming an external file in")
                progress(index + 1, rows.count + 1)
            }
            try folder.syncFolder()
            return rows.count
        }
    }
}
