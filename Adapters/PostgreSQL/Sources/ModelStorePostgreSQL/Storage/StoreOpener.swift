import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

/// Opens a store's namespace: creates its tables on first use, checks the recorded schema, and
/// migrates a store of an older schema version (through the plan's stages when it has some from
/// the stored version, see ``PostgreSQLMigrationStorage``; through the same storage when an
/// attribute's `.encrypted` changed, so its values are sealed or opened; else by a lightweight
/// `ALTER`), all in
/// one transaction that holds an advisory lock on the namespace, so processes opening it at once
/// take turns and a failure changes nothing.
///
/// Table `"ns"."modelstore_meta"` (`key text PRIMARY KEY`, `value text`) records `format`,
/// `identifier` (the store identifier), `schema` (the schema's JSON, with its version) and the
/// history counters (see ``HistoryLog``); the sequence `"ns"."modelstore_keys"` mints primary keys
/// for every entity. Format 2 added the history table; a format-1 namespace gets it on open.
/// Format 3 keys the text columns of indexes by their NFC form, as filters compare them (see
/// ``TableLayout/indexSQL``); format 4 does so for unique indexes too, so canonically equivalent
/// strings are one value to the constraint, as to the context. Format 5 skips the normalization of
/// ASCII values in those keys (``TableLayout/textKey(_:)``). Opening an older namespace rebuilds
/// its indexes, once (and fails, changing nothing, if its rows hold two canonically equivalent
/// values of a unique constraint, which only formats before 4 let in).
struct StoreOpener: Sendable {
    let schema: Schema
    let layouts: [String: TableLayout]
    let namespace: String
    let url: String

    static let formatVersion = 5
    var metaTable: String { quote(namespace) + ".\"modelstore_meta\"" }
    var history: HistoryLog {
        HistoryLog(
            namespace: namespace, url: url,
            hasDeferredConstraints: layouts.values.contains { layout in
                !layout.joinTables.isEmpty || layout.columns.contains { $0.type == nil }
            })
    }
    var keySequence: String { quote(namespace) + ".\"modelstore_keys\"" }
    /// The `fillfactor` the layouts create tables with.
    var fillFactor: Int { layouts.values.first?.fillFactor ?? 100 }

    /// Opens (creating or migrating) and returns the store identifier. A migration plan's stages
    /// run on `thread` (the thread waiting for the open), with this task suspended meanwhile.
    func open(
        _ session: Session, migrationPlan: (any SchemaMigrationPlan.Type)?, stagesOn thread: WaitingThread
    ) async throws -> String {
        try await lockNamespace(session)
        try await session.execute("CREATE SCHEMA IF NOT EXISTS \(quote(namespace))")
        guard let meta = try await readMeta(session) else { return try await create(session) }
        let stored = try decodeSchema(meta["schema"])
        guard let format = meta["format"].flatMap(Int.init), let identifier = meta["identifier"] else {
            throw incomplete()
        }
        guard format <= Self.formatVersion else {
            throw DataStoreError(
                .unsupportedFeature,
                "the PostgreSQL store '\(url)' has storage format \(format), newer than this build's \(Self.formatVersion)",
                remedy: "Open it with a newer version of ModelStore")
        }
        if format < 2 { try await history.create(session) }
        var indexesBuilt = false
        if stored != schema.storedDescription {
            try check(stored.version)
            let plan = migrationPlan.map { SendablePlan(type: $0) }
            let ranStages = try await thread.run {
                try self.migrate(session, plan: plan?.type, identifier: identifier, stored: stored)
                    || self.migrateEncryptedAttributes(session, identifier: identifier, stored: stored)
            }
            if !ranStages {
                try await migrate(session, from: stored)
            }
            indexesBuilt = ranStages
        }
        if format < 5 && !indexesBuilt {
            // Format 3 keys text columns of indexes by their NFC form, format 4 those of unique
            // indexes too (see `TableLayout.indexSQL`), format 5 by an expression that leaves ASCII
            // values as they are (`TableLayout.textKey`), which queries of the older keys' form
            // would not use.
            for layout in schema.entities.compactMap({ layouts[$0.name] }) {
                try await dropIndexes(session, of: layout)
                try await createIndexes(session, of: layout)
                // The new expression indexes have no statistics until the table is analyzed.
                try await session.execute("ANALYZE \(layout.table)")
            }
        }
        if format < Self.formatVersion {
            try await session.execute(
                "UPDATE \(metaTable) SET value = '\(Self.formatVersion)' WHERE key = 'format'")
        }
        return identifier
    }

    /// What opening with `migrationPlan` would change (see ``SchemaMigrationRunner/preview(_:)``),
    /// in the caller's transaction, which the caller rolls back; the stages run on `thread`.
    func preview(
        _ session: Session, migrationPlan: (any SchemaMigrationPlan.Type)?, stagesOn thread: WaitingThread
    ) async throws -> MigrationReport {
        try await lockNamespace(session)
        guard let meta = try await readMeta(session), let identifier = meta["identifier"] else {
            return MigrationReport(
                store: "the PostgreSQL store '\(url)'", fromVersion: schema.version, toVersion: schema.version,
                stages: [], entities: [], isDryRun: true)
        }
        let stored = try decodeSchema(meta["schema"])
        try check(stored.version)
        let runner = SchemaMigrationRunner(schema: schema, plan: migrationPlan)
        return try await thread.run {
            try runner.preview(
                PostgreSQLMigrationStorage(opener: self, session: session, storeIdentifier: identifier, stored: stored))
        }
    }

    /// Takes the advisory lock on the namespace until the transaction ends: opens, migrations and
    /// previews of one namespace take turns.
    private func lockNamespace(_ session: Session) async throws {
        var binds = PostgresBindings()
        binds.append(namespace)
        try await session.execute("SELECT pg_advisory_xact_lock(hashtext($1))", binds)
    }

    /// The meta table's rows, or `nil` when the namespace has none.
    func readMeta(_ session: Session) async throws -> [String: String]? {
        try await Self.readMeta(session, namespace: namespace)
    }

    /// The rows of the meta table of `namespace`, or `nil` when the namespace has none.
    static func readMeta(_ session: Session, namespace: String) async throws -> [String: String]? {
        var binds = PostgresBindings()
        binds.append("\(quote(namespace)).modelstore_meta")
        let exists = try await session.query("SELECT to_regclass($1) IS NOT NULL", binds)
        guard try exists.first?.decode(Bool.self) == true else { return nil }
        var meta: [String: String] = [:]
        for row in try await session.query("SELECT key, value FROM \(quote(namespace)).\"modelstore_meta\"") {
            let (key, value) = try row.decode((String, String).self)
            meta[key] = value
        }
        return meta
    }

    func decodeSchema(_ json: String?) throws -> Schema.Description {
        try Self.decodeSchema(json, url: url)
    }

    /// The schema recorded in `modelstore_meta` (its `schema` row), of the store at `url` (for errors).
    static func decodeSchema(_ json: String?, url: String) throws -> Schema.Description {
        guard let json else { throw incompleteMeta(url) }
        do {
            return try JSONDecoder().decode(Schema.Description.self, from: Data(json.utf8))
        } catch {
            throw DataStoreError(
                .corrupted, "the schema recorded in the PostgreSQL store '\(url)' cannot be read",
                remedy: "Restore the namespace from a backup", underlyingError: error)
        }
    }

    private func incomplete() -> DataStoreError { Self.incompleteMeta(url) }

    /// The error for a `modelstore_meta` table that lacks a row every store has.
    static func incompleteMeta(_ url: String) -> DataStoreError {
        DataStoreError(
            .corrupted, "the 'modelstore_meta' table of the PostgreSQL store '\(url)' is incomplete",
            remedy: "Restore the namespace from a backup, or use another namespace")
    }

    private func create(_ session: Session) async throws -> String {
        var binds = PostgresBindings()
        binds.append(namespace)
        let tables = try await session.integer("SELECT count(*) FROM pg_tables WHERE schemaname = $1", binds) ?? 0
        guard tables == 0 else {
            throw DataStoreError(
                .corrupted,
                "the namespace of the PostgreSQL store '\(url)' has tables but no 'modelstore_meta' table: "
                    + "it belongs to another program",
                remedy: "Choose another namespace (?namespace=NAME) or another database")
        }
        let identifier = "postgres-" + UUID().uuidString.prefix(8).lowercased()
        try await session.execute("CREATE TABLE \(metaTable) (key text PRIMARY KEY, value text NOT NULL)")
        try await session.execute("CREATE SEQUENCE \(keySequence)")
        for layout in schema.entities.compactMap({ layouts[$0.name] }) {
            for sql in layout.creationSQL { try await session.execute(sql) }
        }
        for layout in layouts.values {
            for sql in layout.foreignKeySQL(layouts: layouts) { try await session.execute(sql) }
        }
        for (key, value) in [
            ("format", String(Self.formatVersion)), ("identifier", identifier), ("schema", try schemaJSON()),
        ] {
            var row = PostgresBindings()
            row.append(key)
            row.append(value)
            try await session.execute("INSERT INTO \(metaTable) (key, value) VALUES ($1, $2)", row)
        }
        try await history.create(session)
        return identifier
    }

    private func schemaJSON() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(schema.storedDescription), as: UTF8.self)
    }

    /// Refuses a store written with a newer schema version than the app's.
    private func check(_ stored: Schema.Version) throws {
        guard stored > schema.version else { return }
        throw DataStoreError(
            .invalidSchema,
            "the PostgreSQL store '\(url)' was written with schema version \(stored), newer than this app's "
                + "\(schema.version)",
            remedy: "Open it with the version of the app that wrote it")
    }

    // MARK: Lightweight migration

    /// Alters the tables in place, inside the open's transaction: new entities get tables, removed
    /// ones lose theirs; added columns take their default, removed ones go, renamed ones
    /// (`originalName`) keep their values; indexes are rebuilt.
    func migrate(_ session: Session, from stored: Schema.Description) async throws {
        let storedByName = Dictionary(stored.entities.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        var created: [TableLayout] = []
        for description in schema.storedDescription.entities {
            guard let layout = layouts[description.name] else { continue }
            guard let old = storedByName[description.name] else {
                for sql in layout.creationSQL { try await session.execute(sql) }
                created.append(layout)
                continue
            }
            guard old != description else { continue }
            try await alter(session, layout, from: old)
        }
        for old in stored.entities where layouts[old.name] == nil {
            for property in old.properties where property.isToOne == false {
                try await session.execute(
                    "DROP TABLE IF EXISTS \(quote(namespace)).\(quote(old.name + "." + property.name)) CASCADE")
            }
            try await session.execute("DROP TABLE IF EXISTS \(quote(namespace)).\(quote(old.name)) CASCADE")
        }
        for layout in created {
            for sql in layout.foreignKeySQL(layouts: layouts) { try await session.execute(sql) }
        }
        try await recordSchema(session)
    }

    /// Records the schema as the stored one.
    func recordSchema(_ session: Session) async throws {
        var binds = PostgresBindings()
        binds.append(try schemaJSON())
        try await session.execute("UPDATE \(metaTable) SET value = $1 WHERE key = 'schema'", binds)
    }

    private func alter(_ session: Session, _ layout: TableLayout, from old: Schema.EntityDescription) async throws {
        let entity = layout.entity
        // Indexes and foreign keys are rebuilt from the new schema.
        try await dropIndexes(session, of: layout)
        var tableName = PostgresBindings()
        tableName.append(namespace)
        tableName.append(entity.name)
        for row in try await session.query(
            "SELECT c.conname FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid "
                + "JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = $1 AND t.relname = $2 "
                + "AND c.contype = 'f'", tableName)
        {
            try await session.execute(
                "ALTER TABLE \(layout.table) DROP CONSTRAINT \(quote(try row.decode(String.self)))")
        }
        var kept: Set<String> = []
        for column in layout.columns {
            let property = entity.properties[column.slot]
            let originalName: String? =
                switch property {
                case .attribute(let attribute): attribute.originalName
                case .relationship(let relationship): relationship.originalName
                }
            let found =
                old.properties.first { $0.name == column.name }
                ?? originalName.flatMap { original in old.properties.first { $0.name == original } }
            if let found, try compatible(found, with: property, of: entity.name) {
                kept.insert(found.name)
                if found.name != column.name {
                    try await session.execute(
                        "ALTER TABLE \(layout.table) RENAME COLUMN \(quote(found.name)) TO \(column.quoted)")
                }
                continue
            }
            if let found, found.isToOne != false { kept.insert(found.name) }
            if let found, found.isToOne != false {
                try await session.execute("ALTER TABLE \(layout.table) DROP COLUMN \(quote(found.name))")
            }
            try await session.execute(
                "ALTER TABLE \(layout.table) ADD COLUMN \(column.quoted) \(column.type?.declaration ?? "bigint")")
            if case .attribute(let attribute) = property, let type = column.type, attribute.defaultValue != .null {
                var value = PostgresBindings()
                try type.bind(attribute.defaultValue, to: &value)
                try await session.execute(
                    "UPDATE \(layout.table) SET \(column.quoted) = \(type.placeholder(1))", value)
            }
        }
        for property in old.properties where property.isToOne != false && !kept.contains(property.name) {
            try await session.execute("ALTER TABLE \(layout.table) DROP COLUMN IF EXISTS \(quote(property.name))")
        }
        var keptJoins: Set<String> = []
        for join in layout.joinTables {
            guard case .relationship(let relationship) = entity.properties[join.slot] else { continue }
            let found =
                old.properties.first { $0.name == join.name }
                ?? relationship.originalName.flatMap { original in old.properties.first { $0.name == original } }
            if let found, found.isToOne == false {
                keptJoins.insert(found.name)
                if found.name != join.name {
                    try await session.execute(
                        "ALTER TABLE \(quote(namespace)).\(quote(entity.name + "." + found.name)) RENAME TO "
                            + quote(entity.name + "." + join.name))
                }
            } else {
                for sql in layout.joinTableSQL(join) { try await session.execute(sql) }
            }
        }
        for property in old.properties where property.isToOne == false && !keptJoins.contains(property.name) {
            try await session.execute(
                "DROP TABLE IF EXISTS \(quote(namespace)).\(quote(entity.name + "." + property.name)) CASCADE")
        }
        try await createIndexes(session, of: layout)
        for join in layout.joinTables where keptJoins.contains(join.name) {
            try await session.execute(
                "CREATE INDEX IF NOT EXISTS \(quote(entity.name + "." + join.name + ".target.m")) ON \(join.table) (target)"
            )
        }
        for sql in layout.foreignKeySQL(layouts: layouts) { try await session.execute(sql) }
    }

    /// Builds an entity's indexes (``TableLayout/indexSQL``) on its existing rows; a unique index
    /// the rows break (two canonically equivalent values, which a namespace of format 3 or older could
    /// hold) fails with ``DataStoreError/Code/uniqueConstraintViolation`` naming the constraint.
    private func createIndexes(_ session: Session, of layout: TableLayout) async throws {
        for sql in layout.indexSQL {
            do {
                try await session.execute(sql)
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                let names =
                    layout.entity.uniquenessConstraints.indices
                    .first { sql.contains(quote(layout.uniqueIndexName($0))) }
                    .map { layout.entity.uniquenessConstraints[$0] } ?? []
                throw DataStoreError(
                    .uniqueConstraintViolation,
                    "the PostgreSQL store '\(url)' holds two '\(layout.entity.name)' models with equal "
                        + names.map { "'\($0)'" }.joined(separator: ", ")
                        + " (equal as Swift compares strings, though spelled differently), which its unique "
                        + "index cannot allow",
                    remedy: "Open it with the previous version of ModelStore and change or delete one of them",
                    entityName: layout.entity.name, propertyNames: names, underlyingError: error)
            }
        }
    }

    /// Drops the indexes of an entity's table (not its primary key's), to be built again from `indexSQL`.
    private func dropIndexes(_ session: Session, of layout: TableLayout) async throws {
        var tableName = PostgresBindings()
        tableName.append(namespace)
        tableName.append(layout.entity.name)
        for row in try await session.query(
            "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = $2 "
                + "AND indexname NOT LIKE '%_pkey'", tableName)
        {
            try await session.execute("DROP INDEX \(quote(namespace)).\(quote(try row.decode(String.self)))")
        }
    }

    /// Whether stored values of `old` can be read as `property`: the same type, or made optional.
    private func compatible(
        _ old: Schema.PropertyDescription, with property: Schema.Property, of entityName: String
    ) throws -> Bool {
        switch property {
        case .attribute(let attribute):
            guard let type = old.type else { return false }
            if type == attribute.valueType || AttributeType.optional(type) == attribute.valueType { return true }
            throw DataStoreError(
                .invalidSchema,
                "cannot migrate '\(entityName).\(attribute.name)' in the PostgreSQL store '\(url)' from \(type) to "
                    + "\(attribute.valueType)",
                remedy: "Add a new attribute instead of changing the type, or migrate the data with your own code")
        case .relationship(let relationship):
            return old.isToOne == true && old.destination == relationship.destination
        }
    }
}
