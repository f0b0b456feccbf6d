import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

/// How ``SchemaMigrationRunner`` reads and commits a JSON store.
///
/// `read(as:)` decodes the document with a stage's schema, as an open does. `commit` writes the
/// migrated document with the save's own steps: the new document goes to `<file>.tmp`, is flushed,
/// the current file is kept as `<file>.backup`, and the rename over the file is the commit point.
/// A crash before the rename leaves the old file; after it, the migrated one.
final class JSONFileMigrationStorage: SchemaMigrationStorage {
    let paths: Paths
    let configuration: JSONFileStoreConfiguration
    private let header: DocumentHeader?
    /// What the last `read(as:)` loaded: the writer state (external files, preserved records) it found.
    private var loaded: LoadedDocument?

    /// Reads the header of the document at `paths`, if there is one; writes nothing.
    init(paths: Paths, configuration: JSONFileStoreConfiguration) throws {
        self.paths = paths
        self.configuration = configuration
        header =
            FileIO.exists(paths.document)
            ? try JSONFileStore.readHeader(paths, limits: configuration.limits, keys: configuration.keys).header : nil
    }

    var storeDescription: String { "the JSON store '\(paths.document)'" }
    var storeIdentifier: String { loaded?.identifier ?? header?.storeIdentifier ?? "" }
    var storedVersion: Schema.Version? { header.map { $0.schemaVersion ?? Schema.Version(1, 0, 0) } }

    func read(as schema: Schema) throws -> MigrationData {
        guard let document = try JSONFileStore.load(paths, schema: schema, configuration: configuration) else {
            throw DataStoreError(
                .notFound, "\(storeDescription) disappeared while it was being migrated",
                remedy: "Check what else removes the file, then open it again")
        }
        loaded = document
        return MigrationData(
            schema: schema, snapshots: document.table.allSnapshots, nextPrimaryKey: document.table.nextPrimaryKey)
    }

    func commit(_ data: MigrationData) throws {
        guard let loaded else { return }
        var table = SnapshotTable(schema: data.schema)
        try table.load(data.snapshots)
        table.reserveKeys(below: data.nextPrimaryKey)
        var state = loaded.state
        try JSONFileStore.persist(
            table, previous: SnapshotTable(schema: data.schema), state: &state, identifier: loaded.identifier,
            schema: data.schema, configuration: configuration, paths: paths,
            hook: JSONFileStore.migrationStepHooks.withLock { $0[paths.document] })
    }
}

extension JSONFileStore {
    /// Test hooks run after each step of a migration's commit, by document path: the store is not
    /// open yet when it migrates, so its own `saveStepHook` cannot be set.
    static let migrationStepHooks = LockedValue<[String: @Sendable (SaveStep) throws -> Void]>([:])

    /// Runs the plan's stages from the file's recorded version (see ``SchemaMigrationRunner``); call
    /// it holding the file lock.
    static func migrate(
        _ paths: Paths, schema: Schema, configuration: JSONFileStoreConfiguration,
        migrationPlan: (any SchemaMigrationPlan.Type)?
    ) throws {
        guard migrationPlan != nil else { return }
        let storage = try JSONFileMigrationStorage(paths: paths, configuration: configuration)
        try SchemaMigrationRunner(schema: schema, plan: migrationPlan).migrate(storage)
    }
}

extension JSONFileStore {
    /// Loads the document (``load(_:schema:configuration:)``), first sealing or opening the values of
    /// attributes whose `.encrypted` changed since the file was written, when no migration stage
    /// did (``SchemaMigrationRunner/migrateEncryptedAttributes(_:stored:)``); call it holding the
    /// file lock.
    ///
    /// The header's schema is compared only when the load fails (a plaintext value read as sealed
    /// `Data`), or when either schema mentions an encrypted attribute (sealed `Data` reads as text).
    ///
    /// A read-only open (`allowsSave` off) refuses such a file with ``DataStoreError/Code/readOnly``.
    static func loadMigratingEncryptedAttributes(
        _ paths: Paths, schema: Schema, configuration: JSONFileStoreConfiguration
    ) throws -> LoadedDocument? {
        let loaded: LoadedDocument?
        do {
            loaded = try load(paths, schema: schema, configuration: configuration)
        } catch let error as DataStoreError {
            let url = URL(fileURLWithPath: paths.document)
            guard
                let stored = try? Schema(
                    storedSchema(at: url, limits: configuration.limits, encryption: configuration.encryption)),
                try migrateEncryptedAttributes(paths, schema: schema, configuration: configuration, stored: stored)
            else { throw error }
            return try load(paths, schema: schema, configuration: configuration)
        }
        let mentionsEncryption =
            schema.entities.contains { $0.attributes.contains { $0.options.contains(.encrypted) } }
            || loaded?.header.entitiesJSON?.firstRange(of: Array("\"encrypted\"".utf8)) != nil
        guard mentionsEncryption, let header = loaded?.header, let entities = header.entitiesJSON,
            let described = try? JSONDecoder().decode([Schema.EntityDescription].self, from: Data(entities)),
            let stored = try? Schema(
                Schema.Description(version: header.schemaVersion ?? Schema.Version(1, 0, 0), entities: described)),
            try migrateEncryptedAttributes(paths, schema: schema, configuration: configuration, stored: stored)
        else { return loaded }
        return try load(paths, schema: schema, configuration: configuration)
    }

    /// Seals or opens what ``loadMigratingEncryptedAttributes(_:schema:configuration:)`` finds to
    /// change against the schema the file records (`stored`); returns whether it did.
    private static func migrateEncryptedAttributes(
        _ paths: Paths, schema: Schema, configuration: JSONFileStoreConfiguration, stored: Schema
    ) throws -> Bool {
        guard LightweightMapping.resealing(from: stored, to: schema) != nil else { return false }
        guard configuration.allowsSave else {
            throw DataStoreError(
                .readOnly,
                "the JSON store '\(paths.document)' holds attributes whose encryption (@Attribute(.encrypted)) "
                    + "changed, and a read-only open (allowsSave: false) cannot seal or open their values",
                remedy: "Open the store once with a configuration that allows saves, so that it migrates, then "
                    + "read-only")
        }
        return try SchemaMigrationRunner(schema: schema, plan: nil).migrateEncryptedAttributes(
            try JSONFileMigrationStorage(paths: paths, configuration: configuration), stored: stored)
    }
}

extension JSONFileStore: DataStoreMigrationPreviewing {
    /// What opening the file with `migrationPlan` would change, computed in memory; writes nothing
    /// (it does not even take the file lock, whose file it would create).
    public static func previewMigration(
        _ configuration: JSONFileStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?
    ) throws -> MigrationReport {
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the JSON store '\(configuration.name)' has no schema",
                remedy: "Preview through ModelContainer.previewMigration, or set the configuration's schema")
        }
        let storage = try JSONFileMigrationStorage(paths: Paths(configuration.url), configuration: configuration)
        return try SchemaMigrationRunner(schema: schema, plan: migrationPlan).preview(storage)
    }
}
