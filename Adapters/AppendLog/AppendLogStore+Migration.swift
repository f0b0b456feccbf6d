import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreCrypto
import ModelStoreFileIO

/// The steps of a migration's commit, in order; a test hook runs after each.
enum MigrationCommitStep: String, CaseIterable, Sendable {
    /// The migrated models are in a new checkpoint, synced; the manifest still names the old state.
    case wroteCheckpoint
    /// The manifest names the new checkpoint: the commit point.
    case wroteManifest
}

/// How ``SchemaMigrationRunner`` reads and commits an append log.
///
/// `read(as:)` replays the checkpoint and segments against a stage's schema, as an open does, and
/// writes nothing. `commit` works like a compaction into a new schema: the migrated models go to a
/// new checkpoint (written to a temporary file, synced, renamed), whose base is a segment number
/// after every existing one; then the manifest is replaced atomically to name it, the commit
/// point. A crash before the manifest's rename leaves the old manifest, whose checkpoint and
/// segments are all still there (opening removes the orphaned checkpoint); after it, opening moves
/// the replaced segments to `history/`, as after an interrupted compaction.
final class AppendLogMigrationStorage: SchemaMigrationStorage {
    let layout: LogLayout
    private let manifest: Manifest
    private var loaded: LoadedLog?
    private let stored: Schema.Version?

    /// Reads the manifest and the recorded schema version, if the directory is an append log; writes nothing.
    init(directory: URL, permissions: FilePermissions = .private, cipher: LogCipher? = nil) throws {
        layout = LogLayout(directory: directory, permissions: permissions, cipher: cipher)
        let url = layout.manifestURL
        guard FileIO.exists(url) else {
            manifest = Manifest(storeIdentifier: "", checkpoint: nil, firstSegment: 1)
            stored = nil
            return
        }
        manifest = try Manifest.decode(try OpenFile(url, writable: false).readAll(), url: url)
        stored = try AppendLogStore.storedSchema(at: directory).version
    }

    var storeDescription: String { "the append log '\(layout.directory.path)'" }
    var storeIdentifier: String { manifest.storeIdentifier }
    var storedVersion: Schema.Version? { stored }

    func read(as schema: Schema) throws -> MigrationData {
        do {
            let log = try LogLoader.load(layout: layout, manifest: manifest, listing: try layout.list(), schema: schema)
            loaded = log
            return MigrationData(
                schema: schema, snapshots: log.table.allSnapshots, nextPrimaryKey: log.table.nextPrimaryKey)
        } catch let damage as AppendLogDamage {
            throw damage.error(directory: layout.directory)
        }
    }

    func commit(_ data: MigrationData) throws {
        guard let loaded else { return }
        let hook = AppendLogStore.migrationStepHooks.withLock { $0[layout.directory.path] }
        let shapes = ShapeTable(schema: data.schema)
        let context = IdentifierContext(storeIdentifier: manifest.storeIdentifier, shapes: shapes)
        let base = (loaded.segments.last?.number ?? manifest.firstSegment) + 1
        let name = LogLayout.checkpointName(base)
        let header = CheckpointHeader(
            storeIdentifier: manifest.storeIdentifier, baseSegment: base, lastTransaction: loaded.lastTransaction,
            nextPrimaryKey: data.nextPrimaryKey, created: Date(), modelCount: data.snapshots.count, shapes: shapes)
        _ = try CheckpointFile.write(
            header: header, count: data.snapshots.count, to: layout.url(name), permissions: layout.permissions,
            cipher: layout.cipher
        ) {
            index, writer in
            StoredRow.encode(data.snapshots[index], into: &writer, context: context)
        }
        try hook?(.wroteCheckpoint)
        let next = Manifest(storeIdentifier: manifest.storeIdentifier, checkpoint: name, firstSegment: base)
        try FileIO.writeAtomically(next.encoded(), to: layout.manifestURL, permissions: layout.permissions)
        try hook?(.wroteManifest)
    }
}

extension AppendLogStore {
    /// Test hooks run after each step of a migration's commit, by directory path: the store is not
    /// open yet when it migrates.
    static let migrationStepHooks = LockedValue<[String: @Sendable (MigrationCommitStep) throws -> Void]>([:])

    /// Runs the plan's stages from the log's recorded version (see ``SchemaMigrationRunner``), or,
    /// without a stage, seals or opens the values of attributes whose `.encrypted` changed
    /// (``SchemaMigrationRunner/migrateEncryptedAttributes(_:stored:)``), holding the directory's
    /// lock; the open that follows takes the lock again.
    static func migrate(
        directory: URL, schema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?,
        permissions: FilePermissions = .private, encryption: EncryptionKeySource? = nil
    ) throws {
        guard FileIO.exists(LogLayout(directory: directory).manifestURL) else { return }
        // Without a plan, the lock is taken only when an attribute's encryption changed.
        // A log whose header cannot be read is left to the open, which says why.
        if migrationPlan == nil {
            guard let stored = try? Schema(try storedSchema(at: directory)),
                LightweightMapping.resealing(from: stored, to: schema) != nil
            else { return }
        }
        let lock = try DirectoryLock.acquire(directory: directory, permissions: permissions)
        defer { withExtendedLifetime(lock) {} }
        let cipher = try LogCipher.unlock(directory: directory, source: encryption, hasManifest: true, creating: false)
        let storage = try AppendLogMigrationStorage(directory: directory, permissions: permissions, cipher: cipher)
        let runner = SchemaMigrationRunner(schema: schema, plan: migrationPlan)
        if try runner.migrate(storage) == nil {
            try runner.migrateEncryptedAttributes(storage, stored: try Schema(try storedSchema(at: directory)))
        }
    }
}

extension AppendLogStore: DataStoreMigrationPreviewing {
    /// What opening the log with `migrationPlan` would change, computed in memory; writes nothing
    /// and takes no lock.
    public static func previewMigration(
        _ configuration: AppendLogStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?
    ) throws -> MigrationReport {
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the append log '\(configuration.directory.path)' has no schema",
                remedy: "Preview through ModelContainer.previewMigration, or set the configuration's schema")
        }
        let directory = configuration.directory.standardizedFileURL
        let storage = try AppendLogMigrationStorage(
            directory: directory, cipher: try cipher(directory, configuration.encryption))
        return try SchemaMigrationRunner(schema: schema, plan: migrationPlan).preview(storage)
    }
}
