import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

/// How ``SchemaMigrationRunner`` reads and commits a PostgreSQL store: on the open's connection,
/// inside its one transaction and under its advisory lock on the namespace, so the whole migration
/// commits with the open or not at all, and no other process writes in between.
///
/// `read(as:)` first brings the tables to the stage's schema with the store's own lightweight
/// `ALTER`s when they differ from it, then reads every row. `commit` drops the tables of that
/// schema, creates the app's, inserts the migrated rows under their own keys, moves the key
/// sequence past every key the migration minted, and records the new schema. The history table is
/// kept: its transactions name models by entity and key, which a migration keeps.
///
/// The runner calls these methods synchronously, on the thread that waits for the open (lent to it
/// by ``WaitingThread`` while the open's task is suspended); each blocks that thread, never an
/// event loop, while its statements run on the open's session.
///
/// Safety (`@unchecked Sendable`): the runner calls the methods one after another from one thread;
/// `tables` is read and written only by those calls.
final class PostgreSQLMigrationStorage: SchemaMigrationStorage, @unchecked Sendable {
    let opener: StoreOpener
    let session: Session
    let storeIdentifier: String
    let stored: Schema.Description
    /// The schema the tables have after the last `read(as:)`.
    private var tables: Schema.Description

    init(opener: StoreOpener, session: Session, storeIdentifier: String, stored: Schema.Description) {
        self.opener = opener
        self.session = session
        self.storeIdentifier = storeIdentifier
        self.stored = stored
        tables = stored
    }

    var storeDescription: String { "the PostgreSQL store '\(opener.url)'" }
    var storedVersion: Schema.Version? { stored.version }

    func read(as schema: Schema) throws -> MigrationData {
        try BridgeExecutor.shared.wait(for: { try await self.readRows(as: schema) }, storeURL: opener.url)
    }

    func commit(_ data: MigrationData) throws {
        try BridgeExecutor.shared.wait(for: { try await self.write(data) }, storeURL: opener.url)
    }

    private func staged(_ schema: Schema) -> StoreOpener {
        StoreOpener(
            schema: schema,
            layouts: TableLayout.layouts(of: schema, namespace: opener.namespace, fillFactor: opener.fillFactor),
            namespace: opener.namespace, url: opener.url)
    }

    private func readRows(as schema: Schema) async throws -> MigrationData {
        let staged = staged(schema)
        if tables != schema.storedDescription {
            try await staged.migrate(session, from: tables)
            tables = schema.storedDescription
        }
        let reader = RowReader(session: session, storeIdentifier: storeIdentifier, url: opener.url)
        var snapshots: [DefaultSnapshot] = []
        for entity in schema.entities {
            guard let layout = staged.layouts[entity.name] else { continue }
            snapshots += try await reader.rows(layout, where: "ORDER BY t.\(TableLayout.key)").map(\.snapshot)
        }
        let next =
            try await session.integer(
                "SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END FROM \(opener.keySequence)") ?? 1
        return MigrationData(schema: schema, snapshots: snapshots, nextPrimaryKey: next)
    }

    private func write(_ data: MigrationData) async throws {
        let namespace = quote(opener.namespace)
        for entity in tables.entities {
            for property in entity.properties where property.isToOne == false {
                try await session.execute(
                    "DROP TABLE IF EXISTS \(namespace).\(quote(entity.name + "." + property.name)) CASCADE")
            }
            try await session.execute("DROP TABLE IF EXISTS \(namespace).\(quote(entity.name)) CASCADE")
        }
        let layouts = opener.layouts
        for layout in opener.schema.entities.compactMap({ layouts[$0.name] }) {
            for sql in layout.creationSQL { try await session.execute(sql) }
        }
        for layout in layouts.values {
            for sql in layout.foreignKeySQL(layouts: layouts) { try await session.execute(sql) }
        }
        let writer = RowWriter(
            session: session, storeIdentifier: storeIdentifier, layouts: layouts, keySequence: opener.keySequence,
            url: opener.url)
        _ = try await writer.insert(data.snapshots)
        let highest = data.snapshots.compactMap { $0.persistentIdentifier.primaryKey.intValue }.max() ?? 0
        var binds = PostgresBindings()
        binds.append(max(data.nextPrimaryKey, highest + 1))
        try await session.execute(
            "SELECT setval('\(opener.keySequence)', greatest($1, (SELECT CASE WHEN is_called THEN last_value + 1 "
                + "ELSE last_value END FROM \(opener.keySequence))), false)", binds)
        try await opener.recordSchema(session)
        tables = opener.schema.storedDescription
    }
}

extension StoreOpener {
    /// Runs the plan's stages from the stored version (see ``SchemaMigrationRunner``) inside the
    /// open's transaction; returns `false` when the plan has no stage from it.
    func migrate(
        _ session: Session, plan: (any SchemaMigrationPlan.Type)?, identifier: String, stored: Schema.Description
    ) throws -> Bool {
        let runner = SchemaMigrationRunner(schema: schema, plan: plan)
        guard !runner.stageNames(from: stored.version).isEmpty else { return false }
        try runner.migrate(
            PostgreSQLMigrationStorage(opener: self, session: session, storeIdentifier: identifier, stored: stored))
        return true
    }

    /// Seals or opens the values of attributes whose `.encrypted` changed, when no stage migrates the
    /// store (``SchemaMigrationRunner/migrateEncryptedAttributes(_:stored:)``), inside the open's
    /// transaction; returns `false`, reading nothing, when none changed.
    func migrateEncryptedAttributes(_ session: Session, identifier: String, stored: Schema.Description) throws -> Bool {
        try SchemaMigrationRunner(schema: schema, plan: nil).migrateEncryptedAttributes(
            PostgreSQLMigrationStorage(opener: self, session: session, storeIdentifier: identifier, stored: stored),
            stored: try Schema(stored))
    }
}

extension PostgreSQLStore: DataStoreMigrationPreviewing {
    /// What opening the namespace with `migrationPlan` would change: computed on one connection
    /// inside a transaction that is always rolled back, under the open's advisory lock, so nothing
    /// is written. A namespace without a store reports no change.
    public static func previewMigration(
        _ configuration: PostgreSQLStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?
    ) throws -> MigrationReport {
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the PostgreSQL store '\(configuration.redactedURL)' has no schema",
                remedy: "Preview through ModelContainer.previewMigration, or set the configuration's schema")
        }
        try configuration.validate()
        let opener = StoreOpener(
            schema: schema,
            layouts: TableLayout.layouts(
                of: schema, namespace: configuration.namespace, fillFactor: configuration.fillFactor),
            namespace: configuration.namespace, url: configuration.redactedURL)
        let plan = migrationPlan.map { SendablePlan(type: $0) }
        let database = Database(configuration)
        defer { database.close() }
        return try database.wait { thread in
            try await Database.probe(configuration)
            return try await database.rolledBack("previewing a migration") { session in
                try await opener.preview(session, migrationPlan: plan?.type, stagesOn: thread)
            }
        }
    }
}
