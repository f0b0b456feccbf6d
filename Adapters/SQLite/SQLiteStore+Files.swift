import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreFileIO

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The database file: created whole, told from an emptied one, and read by tools without writing.
extension SQLiteStore {
    /// Creates the store's file at `path` whole: the store is built in a temporary file beside it
    /// (`<database>.creating-<random>`), which is then linked to `path` only if nothing is there yet
    /// (another process creating the same store at once wins, and this one opens its file). So a file
    /// at a store's path always holds a store, and an empty one was emptied from outside.
    static func createFile(
        at path: String, schema: Schema, layouts: [String: EntityLayout], busyTimeout: Duration,
        permissions: FilePermissions = .private, cipher: SQLitePageCipher? = nil
    ) throws {
        let temporary = path + ".creating-" + String(UInt32.random(in: .min ... .max), radix: 16)
        defer {
            for suffix in ["", "-journal", "-wal", "-shm"] { try? FileIO.remove(temporary + suffix) }
        }
        // The empty file made with the configured bits before SQLite opens it: SQLite keeps an
        // existing file's bits and gives them to the `-wal`, `-shm` and journal files it creates.
        try OpenFile(temporary, writable: true, create: true, exclusive: true, permissions: permissions).close()
        try fill(temporary, schema: schema, layouts: layouts, busyTimeout: busyTimeout, cipher: cipher)
        if link(temporary, path) != 0 {
            let code = errno
            if code == EEXIST { return }
            guard code == EPERM || code == ENOTSUP || code == EOPNOTSUPP else {
                throw FileIOFailure(operation: "link the new store to", path: path, code: code).storeError()
            }
            // A file system without hard links: a rename, which would replace a store another
            // process created in the same instant.
            try FileIO.rename(temporary, to: path)
        }
        try FileIO.syncDirectory(FileIO.parent(of: path))
    }

    /// Builds a new store in the file at `path`; the connection closes when it returns.
    private static func fill(
        _ path: String, schema: Schema, layouts: [String: EntityLayout], busyTimeout: Duration,
        cipher: SQLitePageCipher?
    ) throws {
        let connection = try SQLiteConnection(
            path: path, readOnly: false, create: true, busyTimeout: busyTimeout, cipher: cipher)
        _ = try StoreOpener(connection: connection, schema: schema, layouts: layouts, path: path)
            .open(migrationPlan: nil)
    }

    /// The error for an empty file at a store's path: the store creates its file whole, so this one
    /// was emptied (or written by a build that did not, and stopped while creating it).
    static func emptyFileError(_ path: String) -> DataStoreError {
        DataStoreError(
            .corrupted,
            "the SQLite store '\(path)' is an empty file (0 bytes): a store's file is never empty, so it was "
                + "emptied from outside and what it held is gone",
            remedy: "Restore the file from a backup; if nothing in it is needed, delete it and the store is "
                + "created again",
            underlyingError: SQLiteDamage(file: path, offset: 0))
    }

    /// Runs `body` on a read-only connection to the database at `path` that writes no file, as
    /// `verify`, `inspect` and reading the stored schema need (a read-only SQLite connection in WAL mode
    /// would otherwise leave `-wal` and `-shm` files behind):
    ///
    /// - with a log and its shared-memory index (a process has the store open, or was killed), the
    ///   files are read as they are, as another reader would, so a writer's saves are read whole;
    /// - with a log that holds frames and no index (a copied store), the two files are copied to a
    ///   temporary folder and the copy is read;
    /// - with no log, or an empty one and no index, the file is opened `immutable`.
    ///
    /// An encrypted database is read through the page cipher with the key from `encryption`.
    static func withInspection<Result>(
        of path: String, encryption: EncryptionKeySource? = nil, _ body: (SQLiteConnection) throws -> Result
    ) throws -> Result {
        let timeout = Duration.seconds(5)
        let cipher = try SQLitePageCipher.forOpening(path, with: encryption)
        if FileIO.exists(path + "-wal") && FileIO.exists(path + "-shm") {
            return try body(
                try SQLiteConnection(path: path, readOnly: true, create: false, busyTimeout: timeout, cipher: cipher))
        }
        if FileIO.size(of: path + "-wal") == 0 {
            let connection = try SQLiteConnection(
                path: "file:" + uriEscaped(path) + "?immutable=1", readOnly: true, create: false,
                busyTimeout: timeout, shownAs: path, cipher: cipher)
            return try body(connection)
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "modelstore-inspect-" + UUID().uuidString
        ).path
        try FileIO.createDirectory(folder)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let copy = folder + "/store.sqlite"
        // Byte copies, never links: nothing done to the copy may reach the store's files.
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        return try body(
            try SQLiteConnection(
                path: copy, readOnly: true, create: false, busyTimeout: timeout, shownAs: path, cipher: cipher))
    }

    /// A path as the path of a `file:` URI: `%`, `?` and `#` escaped.
    static func uriEscaped(_ path: String) -> String {
        // The usual path has none of the three: returned as it is, not rebuilt scalar by scalar.
        let special = (UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"))
        if !path.utf8.contains(where: { $0 == special.0 || $0 == special.1 || $0 == special.2 }) { return path }
        var result = ""
        for character in path.unicodeScalars {
            switch character {
            case "%": result += "%25"
            case "?": result += "%3f"
            case "#": result += "%23"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}
