import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreCrypto
import ModelStoreFileIO

/// A store that keeps its models in one human-readable JSON file: readable, diffable, and never
/// half-written.
///
/// The file is read once, when the store opens; from then on every fetch runs in memory on
/// ``SnapshotTable`` (filters, sorts and uniqueness natively) and never touches the disk. Every
/// save writes the whole file again, atomically:
///
/// 1. `.externalStorage` values that changed are written to `<file>.external/` and flushed;
/// 2. the new document is written to `<file>.tmp` and flushed (`fsync`);
/// 3. the current file is kept as `<file>.backup`;
/// 4. `<file>.tmp` is renamed over the file (the commit point), and the folder is flushed;
/// 5. external files that neither the file nor its backup refer to are removed.
///
/// A crash at any instant leaves the previous file or the new one, complete. A save that throws
/// leaves the file and the store as they were.
///
/// It is a ``TableWritingStore`` whose persistence hook, ``writeTable(_:)``, writes the whole file
/// from a changed copy of the table: its saves, batch operations and history are the kit's, with
/// the kit's two hooks for what is described below, conflicts with other processes
/// (``reconcile(_:with:)``) and referential integrity (``clearsDanglingReferences``). A save throws
/// ``DataStoreError/uniqueConstraintViolation``, ``DataStoreError/notFound`` (an update of a model
/// the store doesn't have, or a relationship to one), ``DataStoreError/conflict`` (another process
/// changed a model this save changes), ``DataStoreError/locked`` and ``DataStoreError/io``. Only
/// ``erase()`` is its own, since it also drops the records of entities the schema doesn't have.
///
/// ## Sharing the file between processes
///
/// Writers take an advisory lock (`flock` on `<file>.lock`), so two processes never interleave
/// writes. A store remembers the identity of the file it last read or wrote (inode, size,
/// modification and change times). When a save finds the file changed by another process, the
/// store **reloads the file and applies the save on top of it**, unless the save touches a model
/// the other process changed or deleted: then it throws ``DataStoreError/conflict`` naming the
/// model, and nothing is written. Either way the store now holds the other process's data, so
/// fetch again and retry. ``reloadIfChanged()`` takes in other processes' saves without saving.
///
/// ## Referential integrity
///
/// The file never holds a relationship to a model that doesn't exist. When a save deletes a
/// model that a relationship without an inverse (or with a `.noAction` rule) still refers to,
/// the store clears that reference as it saves (it would read `nil` anyway) and returns the
/// changed snapshots for the context to re-register. Opening a file that has a dangling
/// reference throws ``DataStoreError/corrupted`` naming the record.
///
/// ## Integrity
///
/// The header holds the CRC-32C of the document (`"checksum"`), so a changed byte (damage, or a
/// hand edit) is refused on open with ``DataStoreError/corrupted`` rather than read as a wrong
/// value. Accept a deliberate edit with ``seal(at:lockTimeout:limits:)`` (`modelstore seal`) or
/// ``JSONFileStoreConfiguration/acceptsHandEdits``. An encrypted document has no checksum: its
/// AES-GCM tag catches any changed byte (``DataStoreError/corrupted``, "fails authentication").
///
/// The file format is documented in `FORMAT.md` beside this source (header, records, value forms,
/// tags, limits, versioning).
public final class JSONFileStore: TableWritingStore {
    /// The store's snapshot type.
    public typealias Snapshot = DefaultSnapshot

    /// The store's identifier, kept in the file so identifiers stay valid across opens.
    public let identifier: String
    /// The schema.
    public let schema: Schema
    /// The configuration.
    public let configuration: JSONFileStoreConfiguration

    let paths: Paths
    /// The writers' lock; `nil` when the store is read-only (``JSONFileStoreConfiguration/allowsSave``).
    let fileLock: FileLock?
    /// What fetches read.
    let table: LockedValue<SnapshotTable>
    /// What writers share; held for the whole of a write, so writes are serialized.
    let writer: LockedValue<WriterState>
    /// The table this store held before the running write read the file again, or `nil`: set by
    /// ``writeTable(_:)`` under the writers' lock for ``reconcile(_:with:)``.
    let reloadedFrom = LockedValue<SnapshotTable?>(nil)
    /// Called after each step of a save, for tests that simulate crashes and failures.
    let saveStepHook = LockedValue<(@Sendable (SaveStep) throws -> Void)?>(nil)

    /// Opens the file, creating it (with its folder) if it doesn't exist.
    ///
    /// Throws ``DataStoreError/corrupted`` naming the line and column of anything in the file that
    /// is not valid JSON or does not match the schema, ``DataStoreError/unsupportedFeature`` for a
    /// file written by a newer format version, and ``DataStoreError/locked`` if another writer
    /// holds the file past the lock timeout. A failed open never writes to the file.
    ///
    /// With a `migrationPlan`, a file recorded at an older schema version the plan lists is migrated
    /// first, stage by stage, and committed as one atomic save (see ``SchemaMigrationRunner``); a
    /// stage that throws fails the open, naming the stage, and leaves the file as it was.
    public init(_ configuration: JSONFileStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the JSON store '\(configuration.name)' has no schema",
                remedy: "Create it through a ModelContainer, or set the configuration's schema")
        }
        try configuration.validate()
        let paths = Paths(configuration.url)
        self.configuration = configuration
        self.schema = schema
        self.paths = paths
        guard configuration.allowsSave else {
            fileLock = nil
            let opened = try Self.openReadOnly(
                paths, schema: schema, configuration: configuration, migrationPlan: migrationPlan)
            identifier = opened.identifier
            table = LockedValue(opened.table)
            writer = LockedValue(opened.state)
            return
        }
        let fileLock: FileLock
        do {
            try FileIO.createDirectory(paths.folder, permissions: configuration.filePermissions)
            fileLock = try FileLock(path: paths.lock, permissions: configuration.filePermissions)
            self.fileLock = fileLock
        } catch let error as DataStoreError where error.code == .io {
            throw error.inContext("opening the JSON store '\(paths.document)'")
        }
        let opened = try fileLock.withLock(timeout: configuration.lockTimeout, document: paths.document) {
            () throws -> (identifier: String, table: SnapshotTable, state: WriterState) in
            try Self.migrate(paths, schema: schema, configuration: configuration, migrationPlan: migrationPlan)
            if let loaded = try Self.loadMigratingEncryptedAttributes(
                paths, schema: schema, configuration: configuration)
            {
                try Self.checkVersion(loaded.header, schema: schema, paths: paths)
                return (loaded.identifier, loaded.table, loaded.state)
            }
            if FileIO.exists(paths.backup) {
                throw DataStoreError(
                    .notFound, "the JSON store '\(paths.document)' is missing, but its backup '\(paths.backup)' exists",
                    remedy:
                        "Rename the backup to '\(paths.document)' to restore it, or delete the backup to start an "
                        + "empty store"
                )
            }
            let identifier = "json-" + UUID().uuidString.prefix(8).lowercased()
            var state = WriterState(
                externals: ExternalFiles(
                    directory: paths.external, permissions: configuration.filePermissions, keys: configuration.keys))
            state.history = JSONFileHistory(limit: configuration.historyLimit)
            let empty = SnapshotTable(schema: schema)
            try Self.persist(
                empty, previous: empty, state: &state, identifier: identifier, schema: schema,
                configuration: configuration, paths: paths, hook: nil)
            return (identifier, empty, state)
        }
        identifier = opened.identifier
        table = LockedValue(opened.table)
        writer = LockedValue(opened.state)
    }

    /// Opens the file for reading only (see ``JSONFileStoreConfiguration/allowsSave``): no lock, no
    /// file, folder or migration written.
    private static func openReadOnly(
        _ paths: Paths, schema: Schema, configuration: JSONFileStoreConfiguration,
        migrationPlan: (any SchemaMigrationPlan.Type)?
    ) throws -> (identifier: String, table: SnapshotTable, state: WriterState) {
        if migrationPlan != nil, FileIO.exists(paths.document) {
            try SchemaMigrationRunner(schema: schema, plan: migrationPlan)
                .requireNoMigration(try JSONFileMigrationStorage(paths: paths, configuration: configuration))
        }
        guard let loaded = try loadMigratingEncryptedAttributes(paths, schema: schema, configuration: configuration)
        else {
            throw DataStoreError(
                .notFound,
                "there is no JSON store at '\(paths.document)', and a read-only configuration (allowsSave: false) "
                    + "does not create one",
                remedy: "Check the path, or open the store once with a configuration that allows saves")
        }
        try checkVersion(loaded.header, schema: schema, paths: paths)
        return (loaded.identifier, loaded.table, loaded.state)
    }

    /// Runs `body` on the table fetches read, as this store last read or wrote the file.
    public func readTable<Result>(_ body: (SnapshotTable) throws -> Result) rethrows -> Result {
        try table.withLock { try body($0) }
    }

    /// Runs `change` on a copy of the table and history and, when it changed them, writes the copy
    /// as the whole document (atomically, see the type's discussion) before fetches see it.
    ///
    /// Holds the writers' lock and the file lock, and reads the file again first if another process
    /// saved it.
    public func writeTable<Result>(
        _ change: (inout SnapshotTable, inout StoreHistory) throws -> (result: Result, changed: Bool)
    ) throws -> Result {
        try write { base, reloadedFrom, state in
            // What ``reconcile(_:with:)`` compares a save with, for the length of this write.
            self.reloadedFrom.withLock { $0 = reloadedFrom }
            defer { self.reloadedFrom.withLock { $0 = nil } }
            var next = base
            let (result, changed) = try change(&next, &state.history.records)
            return (changed ? next : nil, result)
        }
    }

    /// Runs `body` on the history the file keeps now (read again first if another process saved it).
    /// The file keeps at most ``JSONFileStoreConfiguration/historyLimit`` changes.
    public func readHistory<Result>(_ body: (StoreHistory) throws -> Result) throws -> Result {
        try reloadIfChanged()
        let history = writer.withLock { $0.history.records }
        return try body(history)
    }

    /// `true`: the file never holds a relationship to a model that doesn't exist (see the type's
    /// discussion), so every write clears the references its change leaves dangling.
    public var clearsDanglingReferences: Bool { true }

    /// Refuses a save that touches a model another process changed or deleted since this store
    /// read the file, when this write read it again (``DataStoreError/conflict``, naming the model),
    /// and drops the deletions of models the other process deleted too.
    public func reconcile(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, with table: SnapshotTable
    ) throws -> DataStoreSaveChangesRequest<DefaultSnapshot> {
        guard let loaded = reloadedFrom.withLock({ $0 }) else { return request }
        try Self.checkConflicts(request, loaded: loaded, current: table, paths: paths)
        var request = request
        request.deleted.removeAll { table.snapshot(for: $0.persistentIdentifier) == nil }
        return request
    }

    /// Removes every model, including records of entities the schema doesn't have, and the history
    /// (tokens from before expire), and saves the empty file.
    public func erase() throws {
        try write { base, _, state in
            state.preserved = []
            state.history.records.delete(throughNumber: state.history.records.lastNumber)
            var empty = SnapshotTable(schema: schema)
            empty.reserveKeys(below: base.nextPrimaryKey)
            return (empty, ())
        }
    }

    /// Reads the file again if another process saved it since this store last read or wrote it.
    ///
    /// Returns whether it did. Fetches see the other process's data afterwards.
    @discardableResult
    public func reloadIfChanged() throws -> Bool {
        try writer.withLock { state in
            // A read-only store reads without the lock: a writer replaces the file by a rename, so
            // a read sees the old file or the new one, whole.
            guard let fileLock else { return try reloadIfNeeded(&state) != nil }
            return try fileLock.withLock(timeout: configuration.lockTimeout, document: paths.document) {
                try reloadIfNeeded(&state) != nil
            }
        }
    }

    /// The schema recorded in the header of the JSON store at `url`, without opening the store:
    /// what tools use to open a file without the app's model types (`Schema(description)`).
    ///
    /// Throws ``DataStoreError/notFound`` if there is no file and ``DataStoreError/corrupted`` if
    /// the header cannot be read. An encrypted file needs its key (`encryption`): the schema is
    /// inside the sealed document.
    public static func storedSchema(
        at url: URL, limits: JSONFileStoreConfiguration.Limits = .init(), encryption: EncryptionKeySource? = nil
    ) throws -> Schema.Description {
        let paths = Paths(url)
        let header = try readHeader(paths, limits: limits, keys: encryption.map(DocumentKeys.init)).header
        guard let entities = header.entitiesJSON else {
            throw DataStoreError(
                .corrupted, "the JSON store '\(paths.document)' has no 'entities' in its header",
                remedy: "Open it once with the app, which writes the header")
        }
        do {
            let described = try JSONDecoder().decode([Schema.EntityDescription].self, from: Data(entities))
            return Schema.Description(version: header.schemaVersion ?? Schema.Version(1, 0, 0), entities: described)
        } catch {
            throw DataStoreError(
                .corrupted,
                "the header of the JSON store '\(paths.document)' does not describe its entities (\(error))",
                remedy: "Open it once with the app, which rewrites the header")
        }
    }
}

extension JSONFileStore {
    /// Reads the document's bytes and checks its syntax and header, without a schema; throws
    /// ``DataStoreError/notFound`` if there is no file.
    static func readHeader(
        _ paths: Paths, limits: JSONFileStoreConfiguration.Limits, keys: DocumentKeys? = nil
    ) throws -> (bytes: [UInt8], header: DocumentHeader) {
        let file: (bytes: [UInt8], identity: FileIdentity)?
        do {
            file = try FileIO.read(paths.document, limit: limits.maximumFileSize)
        } catch let error as DataStoreError where error.code == .io {
            throw error.inContext("reading the JSON store '\(paths.document)'")
        }
        guard var file else {
            throw DataStoreError(.notFound, "there is no JSON store at '\(paths.document)'", remedy: "Check the path")
        }
        if DocumentEncryption.isEncrypted(file.bytes) {
            file.bytes = try DocumentEncryption.open(file.bytes, document: paths.document, keys: keys)
        }
        let decoder = DocumentDecoder(
            schema: Schema([]), limits: limits.readLimits, fallbackStoreIdentifier: "",
            loadExternalFile: { _ in Data() })
        do {
            let header = try file.bytes.withUnsafeBufferPointer { try decoder.decode($0, headerOnly: true) }.header
            return (file.bytes, header)
        } catch let error as JSONReadError {
            throw error.storeError(
                file: paths.document, input: file.bytes, backup: FileIO.exists(paths.backup) ? paths.backup : nil)
        }
    }
}

extension JSONFileStoreConfiguration.Limits {
    var readLimits: JSONReadLimits {
        JSONReadLimits(
            maximumDepth: maximumDepth, maximumStringLength: maximumStringLength,
            maximumNumberLength: maximumNumberLength)
    }
}

/// The files of a store, derived from its document's path.
struct Paths: Sendable {
    let document: String
    let folder: String
    var backup: String { document + ".backup" }
    var temporary: String { document + ".tmp" }
    var backupTemporary: String { document + ".backup.tmp" }
    var lock: String { document + ".lock" }
    var external: String { document + ".external" }

    init(_ url: URL) {
        document = url.standardizedFileURL.path
        folder = (document as NSString).deletingLastPathComponent
    }
}

/// The steps of a save, in order; a test hook runs after each.
enum SaveStep: String, CaseIterable, Sendable {
    case wroteExternalFiles
    case wroteTemporaryFile
    case syncedTemporaryFile
    case keptBackup
    case renamedDocument
    case syncedDirectory
    case removedUnreferencedFiles
}

/// Thrown by a test hook to stop a save dead at a step, as a crash would: nothing is cleaned up.
struct SimulatedCrash: Error {}
