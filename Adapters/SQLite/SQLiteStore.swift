import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreFileIO

/// A store in an SQLite database: one table per entity, queries and sorts run in SQL, nothing
/// loaded into memory but the rows a fetch returns.
///
/// ## Storage
/// Each entity is a table with an integer primary key and one typed column per attribute and per
/// to-one relationship (the related model's key); each to-many relationship is a join table that
/// keeps the related models' order. Unique constraints are unique indexes, declared indexes are
/// indexes. The schema and its version, the store identifier and the key counter are kept in the
/// `modelstore_meta` table. `.externalStorage` values of 16 KiB or more are files in the folder
/// `<database>.external/`, written before the save that names them commits and removed after the
/// save that replaces or deletes them. The format is described in `FORMAT.md` beside this source.
///
/// ## Queries
/// The store declares every filter kind and sorting: it translates what SQL runs exactly with
/// Swift's semantics into `WHERE` and `ORDER BY` (text through the `SWIFT` collation, see
/// ``accessPath(for:)``), and evaluates the rest of a filter itself on the rows SQL returns.
///
/// ## Concurrency and durability
/// The database runs in WAL mode: many readers and one writer, also across processes. Each save is
/// one `BEGIN IMMEDIATE` transaction; a save that cannot take the write lock within
/// ``SQLiteStoreConfiguration/busyTimeout`` throws ``DataStoreError/locked`` and changes nothing.
/// Every fetch reads the file, so a store sees other processes' saves at once.
public final class SQLiteStore: DataStoreQuerying, DataStoreBatching {
    /// The store's snapshot type.
    public typealias Snapshot = DefaultSnapshot

    /// The store's identifier, kept in the database so identifiers stay valid across opens.
    public let identifier: String
    /// The schema.
    public let schema: Schema
    /// The configuration.
    public let configuration: SQLiteStoreConfiguration

    let layouts: [String: EntityLayout]
    let database: ConnectionLock
    /// A second connection to the file, opened by the first save across stores: that save writes
    /// through it, so ``database`` goes on serving fetches of the state before it commits.
    let crossStoreWriter = LockedValue<ConnectionLock?>(nil)
    /// The database file as opened (`nil` in memory): a save checks that its path still names it.
    let openedFile: FileIdentity?
    /// The path SQLite opened (`:memory:` in memory), kept because standardizing the URL again
    /// costs more than the `stat` each save makes on it.
    let databasePath: String
    /// The key of an encrypted database, which every connection to it opens with.
    let pageCipher: SQLitePageCipher?

    /// The version of the storage format this build writes: 2 adds the history table, 3 a checksum
    /// in every row (``RowChecksum``), 4 runs of keys in history bodies (``HistoryTable``). Formats
    /// 1 to 3 are read too, and raised to 4 by the first open, in its transaction (a format-3 file
    /// needs nothing else: its bodies are format-4 bodies without runs).
    static let formatVersion = 4
    /// The oldest format this build opens.
    static let oldestReadableFormat = 1
    /// The oldest format a read-only open reads without raising it (older ones lack tables or
    /// columns that only the upgrade adds).
    static let oldestFormatReadAsIs = 3

    /// Opens the database, creating it (with its folder) if it doesn't exist, and migrates a
    /// database of an older schema version in one transaction.
    ///
    /// A new store's file is built beside its path and linked into place whole, so a file at the path
    /// always holds a store. The open reads only the `modelstore_meta` table (it costs the same however
    /// many rows the store has), so damage elsewhere in the file is found when its rows are read
    /// (every row carries a checksum) or by ``integrityProblems(at:)``.
    ///
    /// Throws ``DataStoreError/corrupted`` for a file that is not an SQLite database, is damaged,
    /// is empty (0 bytes), or holds tables of another program; ``DataStoreError/invalidSchema`` for a database of a newer
    /// schema version or one whose changes a lightweight migration cannot make; what a migration
    /// plan's stage throws, naming the stage (the plan's stages, custom ones included, run through
    /// ``SchemaMigrationRunner`` inside the open's transaction); and
    /// ``DataStoreError/locked`` when another writer holds the database past the busy timeout. A
    /// failed open leaves the file as it was.
    public init(_ configuration: SQLiteStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the SQLite store '\(configuration.name)' has no schema",
                remedy: "Create it through a ModelContainer, or set the configuration's schema")
        }
        try configuration.validate()
        self.configuration = configuration
        self.schema = schema
        layouts = EntityLayout.layouts(of: schema)
        let path = configuration.path
        databasePath = path
        if configuration.url != nil && !configuration.allowsSave {
            guard FileIO.exists(path) else {
                throw DataStoreError(
                    .notFound,
                    "there is no SQLite store at '\(path)', and a read-only configuration (allowsSave: false) does "
                        + "not create one",
                    remedy: "Check the path, or open the store once with a configuration that allows saves")
            }
            guard FileIO.size(of: path) > 0 else { throw Self.emptyFileError(path) }
            pageCipher = try SQLitePageCipher.forOpening(path, with: configuration.encryption)
            try WriteAheadLogCheck.check(path, cipher: pageCipher)
            let connection = try SQLiteConnection(
                path: path, readOnly: true, create: false, busyTimeout: configuration.busyTimeout, cipher: pageCipher)
            try connection.keepPages(configuration, encrypted: pageCipher != nil)
            identifier = try StoreOpener(connection: connection, schema: schema, layouts: layouts, path: path)
                .openReadOnly()
            openedFile = try FileIO.identity(of: path)
            database = ConnectionLock(connection)
            return
        }
        if configuration.url != nil {
            // The path is standardized and absolute: its folder is everything before its last slash.
            let folder = path.lastIndex(of: "/").map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
            do {
                try FileIO.createDirectory(folder, permissions: configuration.filePermissions)
            } catch let error as DataStoreError {
                throw error.inContext("creating the folder of the SQLite store '\(path)'")
            }
        }
        var cipher: SQLitePageCipher?
        if configuration.url != nil {
            if !FileIO.exists(path) {
                cipher = try SQLitePageCipher.forOpening(path, with: configuration.encryption)
                try Self.createFile(
                    at: path, schema: schema, layouts: layouts, busyTimeout: configuration.busyTimeout,
                    permissions: configuration.filePermissions, cipher: cipher)
            } else if FileIO.size(of: path) == 0 {
                throw Self.emptyFileError(path)
            }
            // The file may be another process's, created in the same instant with its own salt.
            cipher = try SQLitePageCipher.forOpening(path, with: configuration.encryption, reusing: cipher)
            try WriteAheadLogCheck.check(path, cipher: cipher)
        }
        pageCipher = cipher
        // A write-ahead log with transactions in it is left as it is if the open fails (closing
        // would checkpoint it into the database and remove it): a failed open writes nothing.
        let keepsLog = configuration.url != nil && FileIO.size(of: path + "-wal") > 0
        let connection = try SQLiteConnection(
            path: path, readOnly: false, create: configuration.url == nil, busyTimeout: configuration.busyTimeout,
            cipher: cipher)
        do {
            let opener = StoreOpener(connection: connection, schema: schema, layouts: layouts, path: path)
            identifier = try opener.open(migrationPlan: migrationPlan)
            try connection.execute("PRAGMA synchronous = \(configuration.durability.pragma)", during: "configuring")
            try connection.keepPages(configuration, encrypted: cipher != nil)
            openedFile = configuration.url == nil ? nil : try FileIO.identity(of: path)
        } catch {
            if keepsLog { connection.keepWriteAheadLogOnClose() }
            throw error
        }
        database = ConnectionLock(connection)
    }

    /// Every filter kind and sorting, offset and limit, and uniqueness (unique indexes).
    public var queryCapabilities: QueryCapabilities { .all }

    /// `true`: a save compares the request's expected values with the stored models under its
    /// write's lock, and throws ``DataStoreError/Code/conflict`` when one differs.
    public var checksExpectedValues: Bool { true }

    /// Removes every model and its external files (the key counter is kept, so keys are never
    /// reused), and the history: tokens from before the erase expire.
    public func erase() throws {
        try withWriter { writer in
            try HistoryTable.deleteAll(on: writer.connection)
            for layout in layouts.values {
                try writer.releaseExternalFiles(of: layout, where: "", [])
                try writer.connection.execute("DELETE FROM \(layout.table)", during: "erasing")
                for join in layout.joinTables {
                    try writer.connection.execute("DELETE FROM \(join.table)", during: "erasing")
                }
            }
        }
    }

    /// The current snapshots of these models, read from the database.
    public func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        try database.withLock { connection in
            try connection.readTransaction {
                var result: [PersistentIdentifier: DefaultSnapshot] = [:]
                let reader = RowReader(connection: connection, storeIdentifier: identifier)
                for id in identifiers {
                    guard let key = localKey(id), let layout = layouts[id.entityName] else { continue }
                    if let snapshot = try reader.snapshot(key, layout: layout) { result[id] = snapshot }
                }
                return result
            }
        }
    }

    /// The integer key of an identifier this store minted, or `nil`.
    func localKey(_ id: PersistentIdentifier) -> Int64? {
        guard id.storeIdentifier == identifier else { return nil }
        return id.primaryKey.intValue
    }

    /// The schema recorded in the SQLite store at `url`, without opening the store: what tools
    /// use to open a database without the app's model types.
    ///
    /// Throws ``DataStoreError/notFound`` if there is no file or the database has no tables (made by
    /// another tool: opening it creates the store), and ``DataStoreError/corrupted`` if the file is
    /// empty (0 bytes: the store creates its file whole, so it was emptied) or is not a ModelStore
    /// SQLite database. Writes nothing, not even SQLite's `-wal` and `-shm` files. An encrypted database
    /// needs its key (`encryption`), and throws as ``SQLiteStoreConfiguration/encryption`` says without it.
    public static func storedSchema(at url: URL, encryption: EncryptionKeySource? = nil) throws
        -> Schema.Description
    {
        let path = url.standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: path) else {
            throw DataStoreError(.notFound, "there is no SQLite store at '\(path)'", remedy: "Check the path")
        }
        guard FileIO.size(of: path) > 0 else { throw emptyFileError(path) }
        return try withInspection(of: path, encryption: encryption) { try storedSchema($0) }
    }

    /// The schema recorded in the database of a connection (see ``storedSchema(at:)``).
    static func storedSchema(_ connection: SQLiteConnection) throws -> Schema.Description {
        let path = connection.path
        guard let meta = try StoreOpener.readMeta(connection) else {
            if try StoreOpener.isEmpty(connection) {
                // A database with no tables, made by another tool: opening it creates the store.
                throw DataStoreError(
                    .notFound, "the SQLite database '\(path)' holds no store yet: it has no tables",
                    remedy: "Open it with the app, which creates the store in it, or name another path")
            }
            throw DataStoreError(
                .corrupted,
                "the SQLite database '\(path)' is not a ModelStore store (it has no 'modelstore_meta' table)",
                remedy: "Open a file written by SQLiteStore")
        }
        return try meta.schema(path: path)
    }
}
