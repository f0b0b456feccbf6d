import CModelStoreSQLiteCipher
import CSQLite
import Foundation
import ModelStore
import ModelStoreFileIO

/// One open SQLite database: our thin, safe wrapper over the C API.
///
/// A connection is not thread-safe by itself; ``SQLiteStore`` keeps it behind a lock. Statements
/// are prepared once per SQL text and cached for the life of the connection. Every failure comes
/// back as a ``DataStoreError`` naming the file, with SQLite's result code and message.
final class SQLiteConnection {
    /// The file, as it appears in error messages (`:memory:` for an in-memory database).
    let path: String
    /// The folder of external values beside the database (`nil` in memory), worked out once
    /// rather than by every write transaction.
    let externalValues: ExternalValueFolder?
    private let handle: OpaquePointer
    /// The key of an encrypted file, registered while the connection is open.
    private let cipher: SQLitePageCipher?
    /// Whether the file opens through the page cipher.
    var isEncrypted: Bool { cipher != nil }
    /// The page cipher the file opens through, if it is encrypted.
    var pageCipher: SQLitePageCipher? { cipher }
    private var cache: [String: SQLiteStatement] = [:]
    /// Statements cached by what they do rather than by their text (``statement(shape:sql:)``).
    private var shapeCache: [StatementShape: SQLiteStatement] = [:]
    /// Statements cached by the identity of their ``CachedSQL``, which the entry keeps alive.
    private var keyedCache: [ObjectIdentifier: (sql: CachedSQL, statement: SQLiteStatement)] = [:]
    /// The fetch plans and push-down answers kept per shape for this connection's store.
    var queries = SQLiteQueryCache()

    /// Opens (or, with `create`, creates) the database and registers the `SWIFT` collation, the
    /// `swift_contains` / `swift_has_prefix` functions and the rows' checksum function.
    ///
    /// `path` may be a `file:` URI; `shownAs` is then the path messages name (and the folder of
    /// external values is found from). With `cipher`, the file opens through the page cipher
    /// (``SQLitePageCipher``), which the connection keeps for its life.
    init(
        path: String, readOnly: Bool, create: Bool, busyTimeout: Duration, shownAs: String? = nil,
        cipher: SQLitePageCipher? = nil
    ) throws {
        let shownAs = shownAs ?? (cipher == nil ? nil : path)
        self.path = shownAs ?? path
        self.cipher = cipher
        externalValues = ExternalValueFolder(databasePath: shownAs ?? path)
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        var opened: OpaquePointer?
        let code = sqlite3_open_v2(cipher?.uri(for: path) ?? path, &opened, flags, nil)
        guard let opened else {
            throw DataStoreError(.io, "cannot open the SQLite store '\(shownAs ?? path)': out of memory")
        }
        guard code == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(opened))
            let systemError = sqlite3_system_errno(opened)
            sqlite3_close_v2(opened)
            throw Self.error(
                code: code, message: message, path: shownAs ?? path, during: "opening", systemError: systemError)
        }
        handle = opened
        sqlite3_extended_result_codes(handle, 1)
        // A quoted name the file lacks (such as a damaged column name) is an error, never a text value.
        modelstore_strict_quotes(handle)
        let milliseconds =
            busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
        SwiftCollation.register(on: handle)
        RowChecksum.register(on: handle)
        if cipher != nil { try sealEverything() }
    }

    /// Makes an encrypted connection write nothing the cipher does not seal: every page keeps room
    /// for its nonce and tag (set before a new file's first page is written), and temporary tables,
    /// sorts and statement journals stay in memory, where the VFS does not see them.
    private func sealEverything() throws {
        reserveCipherBytes()
        try execute("PRAGMA temp_store = MEMORY", during: "configuring")
    }

    /// Sets the page cache to the configuration's size, when it gives one or the database is
    /// encrypted (see ``SQLiteStoreConfiguration/pageCacheSize``); otherwise SQLite's default stays.
    func keepPages(_ configuration: SQLiteStoreConfiguration, encrypted: Bool) throws {
        guard configuration.pageCacheSize != nil || encrypted else { return }
        let bytes = configuration.pageCacheSize ?? SQLiteStoreConfiguration.defaultPageCacheSize(encrypted: encrypted)
        // A negative size is in KiB; rounded up, so a size under 1 KiB is not "no limit".
        let kibibytes = bytes / 1024 + (bytes % 1024 == 0 ? 0 : 1)
        try execute("PRAGMA cache_size = -\(kibibytes)", during: "configuring")
    }

    /// Asks for the bytes the page cipher keeps at the end of every page: a new file gets them with its
    /// first page, and a `VACUUM INTO` copy of an existing one has them whatever the file has.
    func reserveCipherBytes() {
        var reserve = Int32(MODELSTORE_CIPHER_RESERVE)
        sqlite3_file_control(handle, "main", SQLITE_FCNTL_RESERVE_BYTES, &reserve)
    }

    /// Leaves the write-ahead log as it is when this connection closes: no checkpoint into the
    /// database, no removal. A failed open calls it, so that it writes nothing.
    func keepWriteAheadLogOnClose() {
        _ = modelstore_keep_wal_on_close(handle)
    }

    deinit {
        for statement in cache.values { statement.finalize() }
        for statement in shapeCache.values { statement.finalize() }
        for entry in keyedCache.values { entry.statement.finalize() }
        sqlite3_close_v2(handle)
    }

    // MARK: Running SQL

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String, during activity: String = "writing") throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        guard code == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_free(message)
            throw Self.error(code: code, message: text, path: path, during: activity)
        }
    }

    /// The most statements the cache keeps; past it, new SQL texts are prepared for one use.
    static let cacheLimit = 512

    /// The cached prepared statement for `sql`, reset and with its bindings cleared.
    ///
    /// Once the cache holds ``cacheLimit`` statements, a new SQL text gets a statement of its own
    /// (finalized when released): a cached statement may be running in an outer loop, so none is evicted.
    func statement(_ sql: String) throws -> SQLiteStatement {
        if let cached = cache[sql] {
            cached.reset()
            return cached
        }
        let statement = try prepare(sql)
        if cache.count < Self.cacheLimit { cache[sql] = statement }
        return statement
    }

    /// The cached prepared statement for `sql`, reset and with its bindings cleared, found without
    /// hashing its text (``CachedSQL``). The same limit applies as to a statement cached by its text.
    func statement(_ sql: CachedSQL) throws -> SQLiteStatement {
        if let cached = keyedCache[ObjectIdentifier(sql)] {
            cached.statement.reset()
            return cached.statement
        }
        let statement = try prepare(sql.text)
        if keyedCache.count < Self.cacheLimit { keyedCache[ObjectIdentifier(sql)] = (sql, statement) }
        return statement
    }

    /// The statements that start and commit a write transaction.
    private static let beginSQL = CachedSQL("BEGIN IMMEDIATE")
    private static let commitSQL = CachedSQL("COMMIT")

    /// What a statement whose text depends on its inputs does, as a cache key: the columns (by
    /// position in the entity's layout) an `UPDATE` of one row of a table sets. Looking it up
    /// costs a hash of a few integers instead of writing out and hashing the SQL text.
    struct StatementShape: Hashable {
        /// The quoted table name.
        let table: String
        /// The positions of the columns set, in order.
        let columns: [Int]
    }

    /// The cached prepared statement for `shape`, reset and with its bindings cleared; `sql` writes
    /// its text, called only when the shape is first prepared. The same limit as ``statement(_:)``
    /// applies.
    func statement(shape: StatementShape, sql: () -> String) throws -> SQLiteStatement {
        if let cached = shapeCache[shape] {
            cached.reset()
            return cached
        }
        let statement = try prepare(sql())
        if shapeCache.count < Self.cacheLimit { shapeCache[shape] = statement }
        return statement
    }

    /// A statement prepared for one use (not cached): for SQL whose text changes with its inputs.
    func prepare(_ sql: String) throws -> SQLiteStatement {
        var prepared: OpaquePointer?
        let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard code == SQLITE_OK, let prepared else {
            throw failure(code, during: "preparing a statement for")
        }
        return SQLiteStatement(prepared, connection: self)
    }

    /// Forgets every cached statement (after the schema changed).
    func clearCache() {
        for statement in cache.values { statement.finalize() }
        for statement in shapeCache.values { statement.finalize() }
        for entry in keyedCache.values { entry.statement.finalize() }
        cache = [:]
        shapeCache = [:]
        keyedCache = [:]
    }

    /// Runs `body` in a transaction: `BEGIN IMMEDIATE` takes the write lock at once, so two writers
    /// never deadlock; the transaction commits if `body` returns and rolls back if it throws.
    func writeTransaction<Result>(_ body: () throws -> Result) throws -> Result {
        try begin()
        do {
            let result = try body()
            try commit()
            return result
        } catch {
            rollBack()
            throw error
        }
    }

    /// Starts a write transaction (`BEGIN IMMEDIATE`), waiting up to the busy timeout for the lock.
    func begin() throws {
        try statement(Self.beginSQL).run(during: "starting a write transaction on")
        history.pending = .untouched
    }

    /// Commits the open transaction, and keeps the history state it recorded with the file's data
    /// version after the commit.
    func commit() throws {
        try statement(Self.commitSQL).run(during: "committing a save to")
        history.keepCommitted(dataVersion: dataVersion())
    }

    /// Rolls back the open transaction, if there is one.
    func rollBack() {
        if sqlite3_get_autocommit(handle) == 0 { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
        history.pending = .untouched
    }

    /// What this connection knows of the history table's state between its transactions, so that
    /// a save need not read it (``HistoryTable/Memo``).
    var history = HistoryTable.Memo()

    /// SQLite's data version of the file (`SQLITE_FCNTL_DATA_VERSION`), or `nil` if SQLite cannot
    /// tell: it changes with every commit to the file, this connection's or another's (in any
    /// process), and this connection sees another's when its next transaction starts.
    func dataVersion() -> UInt32? {
        var version: UInt32 = 0
        guard sqlite3_file_control(handle, "main", SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK else {
            return nil
        }
        return version
    }

    /// Runs `body` in a read transaction, so every statement sees one consistent state of the file.
    func readTransaction<Result>(_ body: () throws -> Result) throws -> Result {
        guard sqlite3_get_autocommit(handle) != 0 else { return try body() }
        try statement("BEGIN DEFERRED").run(during: "reading")
        defer {
            // A read transaction left open would pin an old snapshot for every later fetch.
            if (try? statement("COMMIT").run(during: "reading")) == nil, sqlite3_get_autocommit(handle) == 0 {
                sqlite3_exec(handle, "ROLLBACK", nil, nil, nil)
            }
        }
        return try body()
    }

    /// The rows changed by the last `INSERT`, `UPDATE` or `DELETE`.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// The latest result code and message as a ``DataStoreError``.
    func failure(_ code: Int32, during activity: String) -> DataStoreError {
        Self.error(
            code: code, message: String(cString: sqlite3_errmsg(handle)), path: path, during: activity,
            systemError: sqlite3_system_errno(handle))
    }

    /// `SQLITE_CONSTRAINT_UNIQUE` and `SQLITE_CONSTRAINT_PRIMARYKEY`, extended result codes whose C
    /// macros Swift does not import.
    private static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)
    private static let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)

    /// Maps an SQLite result code to a ``DataStoreError`` code: busy and locked are
    /// ``DataStoreError/locked``, damaged files, non-databases and a missing table or column of the
    /// store's own ``DataStoreError/corrupted``, a
    /// full disk and other I/O ``DataStoreError/io``; of the constraint failures only unique and
    /// primary-key ones are ``DataStoreError/uniqueConstraintViolation``, the rest (which the store's
    /// own tables cannot raise) ``DataStoreError/corrupted``.
    ///
    /// `systemError` is the `errno` of SQLite's last failed system call: out of file descriptors
    /// (`EMFILE`, `ENFILE`), which SQLite reports as "unable to open database file" or as an I/O
    /// error, is named as such, with the remedy that fits.
    static func error(
        code: Int32, message: String, path: String, during activity: String, systemError: Int32 = 0
    ) -> DataStoreError {
        let primary = code & 0xff
        if (primary == SQLITE_CANTOPEN || primary == SQLITE_IOERR) && (systemError == EMFILE || systemError == ENFILE) {
            let failure = FileIOFailure(operation: activity, path: path, code: systemError)
            return DataStoreError(
                .io,
                "\(activity) the SQLite store '\(path)' failed: SQLite error \(code) '\(message)': "
                    + "\(String(cString: strerror(systemError))) (errno \(systemError))",
                remedy: failure.remedy, underlyingError: failure)
        }
        let storeCode: DataStoreError.Code
        let remedy: String
        switch primary {
        case SQLITE_IOERR where code == Int32(modelstore_cipher_auth_failed):
            return DataStoreError(
                .corrupted,
                "\(activity) the encrypted SQLite store '\(path)' failed: a page fails authentication (it was "
                    + "changed or damaged on disk)",
                remedy: "Restore the file from a backup")
        case SQLITE_BUSY, SQLITE_LOCKED:
            storeCode = .locked
            remedy = "Another connection holds the database past the busy timeout; retry, or raise the timeout"
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            storeCode = .corrupted
            remedy = "The file is not an intact SQLite database; restore it from a backup, or open another path"
        case SQLITE_FULL:
            storeCode = .io
            remedy = "Free space on the volume, then retry"
        case SQLITE_CANTOPEN:
            storeCode = .io
            remedy = "Check that the folder exists and that the process may read and write it"
        case SQLITE_READONLY, SQLITE_PERM, SQLITE_AUTH:
            storeCode = .io
            remedy = "Check the file's permissions"
        case SQLITE_ERROR where message.hasPrefix("no such table") || message.hasPrefix("no such column"):
            // The store's own statements name only the tables and columns it created: the file's
            // schema was changed by another program, or damaged.
            storeCode = .corrupted
            remedy =
                "The database's tables do not match what the store created (changed by another program, or "
                + "damaged); run 'modelstore verify', or restore the file from a backup"
        case SQLITE_CONSTRAINT where code == constraintUnique || code == constraintPrimaryKey:
            storeCode = .uniqueConstraintViolation
            remedy = "Change the value so that it is unique"
        case SQLITE_CONSTRAINT:
            // NOT NULL, CHECK and foreign-key failures: the store declares none of its own, so the
            // table was changed by something else.
            storeCode = .corrupted
            remedy = "The database's tables do not match what the store created; check what else writes to the file"
        default:
            storeCode = .io
            remedy = "See SQLite's message; the store is unchanged"
        }
        return DataStoreError(
            storeCode, "\(activity) the SQLite store '\(path)' failed: SQLite error \(code) '\(message)'",
            remedy: remedy)
    }
}
