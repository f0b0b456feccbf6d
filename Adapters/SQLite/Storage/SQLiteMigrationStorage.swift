import Foundation
import ModelStore
import ModelStoreAdapterKit

/// How ``SchemaMigrationRunner`` reads and commits an SQLite store: inside the open's one write
/// transaction, so the whole migration commits with it or not at all.
///
/// `read(as:)` first brings the tables to the stage's schema with the store's own lightweight
/// rebuild when they differ from it, then reads every row. `commit` drops the tables of that schema,
/// creates the app's, inserts the migrated rows under their own keys, and records the new schema and
/// key counter. Nothing is visible to another connection before the transaction commits, and a
/// crash before the commit rolls everything back.
final class SQLiteMigrationStorage: SchemaMigrationStorage {
    let opener: StoreOpener
    let meta: StoreMeta
    let stored: Schema.Description
    /// The schema the tables have after the last `read(as:)`.
    private var tables: Schema.Description

    init(opener: StoreOpener, meta: StoreMeta, stored: Schema.Description) {
        self.opener = opener
        self.meta = meta
        self.stored = stored
        tables = stored
    }

    var storeDescription: String { "the SQLite store '\(opener.path)'" }
    var storeIdentifier: String { meta.identifier }
    var storedVersion: Schema.Version? { stored.version }

    func read(as schema: Schema) throws -> MigrationData {
        let staged = StoreOpener(
            connection: opener.connection, schema: schema,
            layouts: Dictionary(uniqueKeysWithValues: schema.entities.map { ($0.name, EntityLayout($0)) }),
            path: opener.path)
        if tables != schema.storedDescription {
            try staged.migrate(from: tables)
            tables = schema.storedDescription
        }
        let reader = RowReader(connection: opener.connection, storeIdentifier: meta.identifier)
        var snapshots: [DefaultSnapshot] = []
        for entity in schema.entities {
            guard let layout = staged.layouts[entity.name] else { continue }
            let statement = try opener.connection.prepare("SELECT \(layout.selectList) FROM \(layout.table)")
            while try statement.step(during: "migrating") {
                snapshots.append(try reader.read(statement, layout: layout))
            }
        }
        return MigrationData(schema: schema, snapshots: snapshots, nextPrimaryKey: meta.nextKey)
    }

    func commit(_ data: MigrationData) throws {
        let connection = opener.connection
        let hook = Self.stepHooks.withLock { $0[opener.path] }
        for entity in tables.entities {
            try connection.execute("DROP TABLE IF EXISTS \(quote(entity.name))", during: "migrating")
            for property in entity.properties where property.isToOne == false {
                try connection.execute(
                    "DROP TABLE IF EXISTS \(quote(entity.name + "." + property.name))", during: "migrating")
            }
        }
        try hook?(.droppedTables)
        for layout in opener.schema.entities.compactMap({ opener.layouts[$0.name] }) {
            for sql in layout.creationSQL(table: layout.table) { try connection.execute(sql, during: "migrating") }
        }
        try RowWriter(connection: connection, storeIdentifier: meta.identifier, layouts: opener.layouts)
            .write(data.snapshots, update: false)
        try hook?(.wroteRows)
        let update = try connection.statement("UPDATE \(StoreOpener.metaTable) SET value = ? WHERE key = ?")
        for (key, value) in [
            ("schema", SQLValue.text(try opener.schemaJSON())),
            ("nextKey", .integer(max(meta.nextKey, data.nextPrimaryKey))),
        ] {
            update.reset()
            update.bind([value, .text(key)])
            try update.run(during: "migrating")
        }
        tables = opener.schema.storedDescription
        connection.clearCache()
        try hook?(.wroteMeta)
    }

    /// The steps of a migration's commit inside the transaction; a test hook runs after each.
    enum Step: String, CaseIterable, Sendable {
        case droppedTables, wroteRows, wroteMeta
    }

    /// Test hooks by database path: the store is not open yet when it migrates.
    static let stepHooks = LockedValue<[String: @Sendable (Step) throws -> Void]>([:])
}

extension StoreOpener {
    /// Runs the plan's stages from the stored version (see ``SchemaMigrationRunner``) inside the
    /// open's write transaction; returns `false` when the plan has no stage from it.
    func migrate(
        _ migrationPlan: (any SchemaMigrationPlan.Type)?, meta: StoreMeta, stored: Schema.Description
    ) throws -> Bool {
        let runner = SchemaMigrationRunner(schema: schema, plan: migrationPlan)
        guard !runner.stageNames(from: stored.version).isEmpty else { return false }
        try runner.migrate(SQLiteMigrationStorage(opener: self, meta: meta, stored: stored))
        return true
    }

    /// Seals or opens the values of attributes whose `.encrypted` changed, when no stage migrates the
    /// store (``SchemaMigrationRunner/migrateEncryptedAttributes(_:stored:)``), inside the open's write
    /// transaction; returns `false` when none changed.
    func migrateEncryptedAttributes(meta: StoreMeta, stored: Schema.Description) throws -> Bool {
        try SchemaMigrationRunner(schema: schema, plan: nil).migrateEncryptedAttributes(
            SQLiteMigrationStorage(opener: self, meta: meta, stored: stored), stored: try Schema(stored))
    }
}

/// Thrown to roll back a dry run's transaction.
private struct DryRunRollback: Error {}

extension SQLiteStore: DataStoreMigrationPreviewing {
    /// What opening the database with `migrationPlan` would change: computed inside a write
    /// transaction that is always rolled back, so nothing is written.
    public static func previewMigration(
        _ configuration: SQLiteStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?
    ) throws -> MigrationReport {
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the SQLite store '\(configuration.name)' has no schema",
                remedy: "Preview through ModelContainer.previewMigration, or set the configuration's schema")
        }
        let runner = SchemaMigrationRunner(schema: schema, plan: migrationPlan)
        let path = configuration.path
        let noChange = MigrationReport(
            store: "the SQLite store '\(path)'", fromVersion: schema.version, toVersion: schema.version, stages: [],
            entities: [], isDryRun: true)
        if let url = configuration.url, !FileManager.default.fileExists(atPath: url.path) { return noChange }
        let connection = try SQLiteConnection(
            path: path, readOnly: false, create: false, busyTimeout: configuration.busyTimeout,
            cipher: try SQLitePageCipher.forOpening(path, with: configuration.encryption))
        let opener = StoreOpener(
            connection: connection, schema: schema,
            layouts: Dictionary(uniqueKeysWithValues: schema.entities.map { ($0.name, EntityLayout($0)) }), path: path)
        guard let meta = try StoreOpener.readMeta(connection) else { return noChange }
        let stored = try meta.schema(path: path)
        var report = noChange
        do {
            try connection.writeTransaction {
                report = try runner.preview(SQLiteMigrationStorage(opener: opener, meta: meta, stored: stored))
                throw DryRunRollback()
            }
        } catch is DryRunRollback {}
        return report
    }
}
