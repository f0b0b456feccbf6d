import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

/// A durable store whose saves append only what changed to a log: a save costs what it changes,
/// not the size of the store.
///
/// The store is a directory: a checkpoint of the live data, then log segments with one record
/// per save (the inserted models, the changed values of updated ones, and the deleted
/// identifiers, each framed with its length and CRC-32C checksums). Opening loads the checkpoint
/// and replays the segments after it; every read is then served from memory through
/// ``SnapshotTable``, with native filtering, sorting and unique-constraint enforcement. It is a
/// ``TableLoggingStore``: its fetches, saves and batch operations are the adapter kit's, and its
/// persistence hook, ``commit(author:_:)``, appends a record of each change, read against the table
/// before the table takes it. Its history is the log's records, read back from disk, not a
/// ``StoreHistory`` kept in memory.
///
/// ```swift
/// let container = try ModelContainer(for: Trip.self, configurations: .appendLog(at: url))
/// ```
///
/// ## Durability
/// See ``AppendLogStoreConfiguration/Durability``. Whatever the mode, reopening after a crash at
/// any byte yields whole transactions only: a record cut short at the end of the log (a torn
/// tail) is cut off and reported in ``tornTail``. The log's `synced` mark records the last
/// transaction a sync made durable, so a log cut short from outside (missing a transaction the
/// mark recorded) is refused as damage rather than opened without it.
///
/// ## Compaction and history
/// ``compact()`` (or automatic compaction, ``AppendLogStoreConfiguration/Compaction``) writes
/// the live data to a new checkpoint and switches to it atomically; saves continue meanwhile.
/// The segments it replaces move to `history/` and are kept until ``deleteHistory(before:)``:
/// compaction never deletes history. Read it with ``transactions(after:)``.
///
/// ## Damage
/// A record that fails its checksum anywhere but at the torn end of the log stops the open with
/// ``DataStoreError/Code/corrupted``, whose ``DataStoreError/underlyingError`` is an
/// ``AppendLogDamage`` naming the file and offset. ``repair(at:)`` keeps every transaction
/// before the damage and moves the rest aside.
///
/// ## Sharing
/// One process writes a store at a time: opening takes an exclusive lock on the directory's
/// `lock` file, and a second open (in any process, this one included) fails with
/// ``DataStoreError/Code/locked`` naming the store and the process that holds it. Within the
/// process, the store is safe to use from any thread. The lock is released by ``close()``,
/// when the store is deinitialized, or when the process exits.
public final class AppendLogStore: TableLoggingStore {
    /// The store's snapshot type.
    public typealias Snapshot = DefaultSnapshot

    /// The store's identifier, minted when the store was created and kept in its manifest.
    public let identifier: String
    /// The schema the store was opened with.
    public let schema: Schema
    /// The configuration.
    public let configuration: AppendLogStoreConfiguration
    /// The store's directory.
    public let directory: URL
    /// The torn tail cut off when the store was opened, if the log ended in one.
    public let tornTail: AppendLogTornTail?

    let layout: LogLayout
    let shapes: ShapeTable
    let context: IdentifierContext
    /// The bytes a freshly compacted log of no models takes: checkpoint and segment headers.
    let baseline: Int
    let state: LockedValue<LogState>
    let commits: GroupCommit
    /// Held by compaction, history reads and ``close()``, so they never overlap.
    let maintenance = NSLock()
    let background = DispatchGroup()
    /// Hooks for tests; see ``AppendLogTestHooks``.
    package let hooks = AppendLogTestHooks()

    /// Opens the append log in the configuration's directory, creating it if it does not exist.
    ///
    /// Throws ``DataStoreError/Code/locked`` if another store has it open,
    /// ``DataStoreError/Code/corrupted`` (with an ``AppendLogDamage``) if it is damaged,
    /// ``DataStoreError/Code/invalidConfiguration`` if the directory is not an append log, and
    /// ``DataStoreError/Code/invalidSchema`` if it holds models of an entity the schema lacks or was
    /// written with a newer schema version.
    /// A failed open writes nothing. Properties are matched by name (or `originalName`) when the
    /// schema has changed. With a `migrationPlan`, a log recorded at an older schema version the
    /// plan lists is migrated first, stage by stage, custom stages included, and committed as one
    /// new checkpoint (see ``SchemaMigrationRunner``); a stage that throws fails the open, naming
    /// the stage, and leaves the log as it was.
    public init(_ configuration: AppendLogStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        try configuration.validate()
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the append log '\(configuration.directory.path)' has no schema",
                remedy: "Create it through a ModelContainer, or set the configuration's schema")
        }
        let directory = configuration.directory.standardizedFileURL
        let shapes = ShapeTable(schema: schema)
        let permissions = configuration.filePermissions
        var opener = LogOpener(
            directory: directory, schema: schema, shapes: shapes, permissions: permissions,
            encryption: configuration.encryption)
        let opened: LogOpener.Opened
        try Self.refuseNewerSchema(directory: directory, schema: schema)
        if configuration.allowsSave {
            try Self.migrate(
                directory: directory, schema: schema, migrationPlan: migrationPlan, permissions: permissions,
                encryption: configuration.encryption)
            opened = try opener.open()
        } else {
            if migrationPlan != nil, FileIO.exists(LogLayout(directory: directory).manifestURL) {
                try SchemaMigrationRunner(schema: schema, plan: migrationPlan)
                    .requireNoMigration(
                        try AppendLogMigrationStorage(
                            directory: directory, cipher: try Self.cipher(directory, configuration.encryption)))
            }
            opened = try opener.openReadOnly()
        }
        self.configuration = configuration
        self.schema = schema
        self.directory = directory
        self.identifier = opened.storeIdentifier
        self.tornTail = opened.tornTail
        self.layout = LogLayout(directory: directory, permissions: permissions, cipher: opener.cipher)
        self.shapes = shapes
        self.context = IdentifierContext(storeIdentifier: opened.storeIdentifier, shapes: shapes)
        self.baseline = opened.baseline
        self.commits = GroupCommit(durable: opened.state.lastTransaction)
        if configuration.allowsSave {
            commits.mark = try? SyncedMarkFile(directory: directory, permissions: permissions)
        }
        self.state = LockedValue(opened.state)
    }

    deinit { close() }

    /// Refuses a log written with a newer schema version than `schema`'s: an old release never reads a
    /// newer one's data as if it were its own, nor rewrites it. A log whose headers cannot be read is
    /// left to the opener, which reports the damage.
    static func refuseNewerSchema(directory: URL, schema: Schema) throws {
        guard FileIO.exists(LogLayout(directory: directory).manifestURL),
            let stored = try? storedSchema(at: directory).version, stored > schema.version
        else { return }
        throw DataStoreError(
            .invalidSchema,
            "the append log '\(directory.path)' was written with schema version \(stored), newer than this app's "
                + "\(schema.version)",
            remedy: "Open it with the version of the app that wrote it")
    }

    /// Sets a hook the group-commit leader calls before each sync (for tests).
    package func setBeforeSyncHook(_ hook: @escaping @Sendable (UInt64) -> Void) {
        commits.beforeSync = hook
    }

    /// How many syncs have made saves durable since the store was opened.
    public var syncCount: Int { commits.syncCount }

    // MARK: Reading

    /// Runs `body` on the table fetches read, which holds every save that has returned.
    ///
    /// Throws ``DataStoreError/Code/io`` once the store is closed or a write has failed.
    public func readTable<Result>(_ body: (SnapshotTable) throws -> Result) throws -> Result {
        try state.withLock { state in
            try checkUsable(state)
            return try body(state.table)
        }
    }

    // MARK: Writing

    /// Deletes every model, as one transaction, and the history through it: as on every store,
    /// tokens from before `erase()` expire.
    ///
    /// The models go first; a crash before the history is deleted leaves an empty store that still
    /// keeps its history, which a later `erase()` or ``deleteHistory(_:)`` deletes.
    public func erase() throws {
        let number = try eraseModels()
        let newest = try number ?? transactions(after: nil).last.map { Int64($0.number) }
        if let newest { try expireHistory(through: newest) }
    }

    /// Runs one write (the persistence hook of ``TableLoggingStore``, whose defaults give the store
    /// its saves and batch operations): under the store's lock, prepares the change against the
    /// table, appends its record, and applies it; then waits, outside the lock, until the record is
    /// as durable as the configuration asks, so saves on other threads join one sync.
    ///
    /// If the record cannot be written, the segment is cut back to where it was and the table is
    /// as it was before the write: the store is exactly as before.
    ///
    /// - Parameters:
    ///   - author: The author the record names.
    ///   - write: The kit's write, run on the live table under the lock.
    /// - Returns: `write`'s result, and the number of the transaction written (`nil` when the change
    ///   was empty and nothing was written).
    public func commit<Result>(
        author: String?, _ write: (inout SnapshotTable) throws -> (change: TableChange?, result: Result)
    ) throws -> (result: Result, transaction: Int64?) {
        guard configuration.allowsSave else {
            throw DataStoreError.readOnly(store: directory.path, refusing: "a change")
        }
        let (result, ticket) = try state.withLock { state -> (Result, WriteTicket?) in
            try checkUsable(state)
            let (change, result) = try write(&state.table)
            guard let change else { return (result, nil) }
            let written: (ticket: WriteTicket, delta: LiveSize)?
            do {
                written = try append(change, author: author, table: state.table, to: &state)
            } catch {
                state.table.takeBack(change)
                throw error
            }
            state.table.apply(change)
            guard let written else { return (result, nil) }
            state.liveBytes.add(written.delta)
            return (result, written.ticket)
        }
        if let ticket { try waitUntilDurable(ticket) }
        compactInBackgroundIfNeeded()
        return (result, ticket.map { Int64($0.transaction) })
    }

    /// Waits until the record of `ticket` is as durable as the configuration asks; stops the store if that fails.
    func waitUntilDurable(_ ticket: WriteTicket) throws {
        do {
            switch configuration.durability {
            case .none: return
            case .everySave: try commits.syncAlone(ticket.transaction, file: ticket.file)
            case .batched: try commits.waitUntilDurable(ticket.transaction)
            }
        } catch let error as DataStoreError {
            stop(after: error)
            throw error
        }
    }

    /// Marks the store failed: the log's state on disk is unknown, and every later call throws.
    func stop(after error: DataStoreError) {
        state.withLock { if $0.failure == nil { $0.failure = error } }
        commits.fail(error)
    }

    func checkUsable(_ state: LogState) throws {
        if let failure = state.failure {
            throw DataStoreError(
                .io, "the append log '\(directory.path)' stopped after a write failed: \(failure.message)",
                remedy: "Fix the cause, then open the store again; it recovers every acknowledged save",
                underlyingError: failure)
        }
        guard !state.isClosed else {
            throw DataStoreError(
                .io, "the append log '\(directory.path)' is closed", remedy: "Open the store again to use it")
        }
    }

    // MARK: Closing

    /// Closes the store: waits for a running compaction, closes its files and releases the
    /// directory's lock, so another store may open it. Later calls on this store throw.
    ///
    /// Saves that returned are as durable as the configuration promised; under
    /// ``AppendLogStoreConfiguration/Durability/none`` closing syncs them. Calling it again does nothing.
    public func close() {
        background.wait()
        maintenance.lock()
        defer { maintenance.unlock() }
        state.withLock { state in
            // Closing syncs the log whatever the durability, so the 'synced' mark covers every save.
            if state.failure == nil, let active = state.active, (try? active.file.sync()) != nil {
                commits.markDurable(through: state.lastTransaction, countingSync: false)
            }
            state.active = nil
            state.isClosed = true
            state.lock = nil
        }
        commits.releaseFile()
    }
}

/// Where a save's record went: what the save waits on to be durable.
struct WriteTicket {
    /// The transaction's number.
    var transaction: UInt64
    /// The segment it was written to.
    var file: OpenFile
}
