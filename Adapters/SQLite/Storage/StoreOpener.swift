import Foundation
import ModelStore
import ModelStoreFileIO

/// What the `modelstore_meta` table records: format, store identifier, schema, key counter.
struct StoreMeta {
    var format: Int
    var identifier: String
    var schemaJSON: String
    var nextKey: Int64

    /// The recorded schema, decoded. Decoding costs more than the rest of an open, so the schemas
    /// decoded last are kept with their text: a process that opens stores of one schema again (a server
    /// with a store per tenant, tests, a tool) decodes it once. The text's bytes are the whole key, so
    /// a kept schema is exactly what decoding the text again would give.
    func schema(path: String) throws -> Schema.Description {
        // Found by comparing bytes, not by hashing the text (which reads every byte of it each time)
        // or by `==` (which would take a canonically equivalent spelling of a name for this one).
        if let kept = Self.decoded.withLock({ $0.first { Self.sameBytes($0.text, schemaJSON) }?.description }) {
            return kept
        }
        do {
            let description = try JSONDecoder().decode(Schema.Description.self, from: Data(schemaJSON.utf8))
            Self.decoded.withLock { kept in
                if kept.count >= Self.keptSchemas { kept.removeFirst() }
                kept.append((schemaJSON, description))
            }
            return description
        } catch {
            throw DataStoreError(
                .corrupted, "the schema recorded in the SQLite store '\(path)' cannot be read",
                remedy: "Restore the file from a backup", underlyingError: error)
        }
    }

    /// Whether two texts are the same bytes: a text of another length differs at once.
    private static func sameBytes(_ first: String, _ second: String) -> Bool {
        guard first.utf8.count == second.utf8.count else { return false }
        var first = first
        var second = second
        return first.withUTF8 { one in
            second.withUTF8 { other in
                one.count == 0 || memcmp(one.baseAddress!, other.baseAddress!, one.count) == 0
            }
        }
    }

    /// How many decoded schemas ``schema(path:)`` keeps.
    private static let keptSchemas = 8
    /// The decoded schemas with their recorded text, oldest first.
    private static let decoded = LockedValue<[(text: String, description: Schema.Description)]>([])
}

/// Opens a store's database: checks what is there, creates the tables of a new store, migrates
/// a store of an older schema version in one transaction (through the plan's stages when it has
/// some from the stored version, see ``SQLiteMigrationStorage``; else by a lightweight rebuild),
/// and turns on the write-ahead log, in that order, so that a file that fails a check is never written.
struct StoreOpener {
    let connection: SQLiteConnection
    let schema: Schema
    let layouts: [String: EntityLayout]
    let path: String

    static let metaTable = "modelstore_meta"

    /// The statement that writes one value of `modelstore_meta` (key, then value), whether or not the
    /// key is there yet: the key counter and the history's counters share it, so a connection
    /// prepares it once (a delete of every model after a batch insert finds it prepared).
    static let metaWriteSQL = CachedSQL("INSERT OR REPLACE INTO \(metaTable) (key, value) VALUES (?, ?)")

    /// Opens the store and returns its identifier.
    ///
    /// A store of this build's format and the schema's version and shape needs nothing written, so
    /// it opens without the write lock: a save in progress on another connection does not make it
    /// wait (or fail with `locked` past the busy timeout). Creating, upgrading or migrating takes
    /// the write transaction, and reads the meta table again under it.
    func open(migrationPlan: (any SchemaMigrationPlan.Type)?) throws -> String {
        if let meta = try Self.readMeta(connection) {
            try checkFormat(meta)
            let stored = try meta.schema(path: path)
            try checkVersion(of: stored)
            if meta.format == SQLiteStore.formatVersion, stored == schema.storedDescription {
                try useWriteAheadLog()
                return meta.identifier
            }
        } else {
            try ensureEmpty()
        }
        let identifier = try connection.writeTransaction { () throws -> String in
            // Read again under the write lock: another process may have created or migrated it.
            guard let meta = try Self.readMeta(connection) else {
                let identifier = try create()
                try connection.execute(HistoryTable.creationSQL, during: "creating")
                return identifier
            }
            let stored = try meta.schema(path: path)
            if meta.format < SQLiteStore.formatVersion {
                // Format 1 (before history) gets its history table; formats 1 and 2 (before row
                // checksums) get their checksum columns; then the new format, so that an older
                // build refuses the file instead of writing rows without them (or, from format 4,
                // failing to read history bodies with runs of keys).
                try connection.execute(HistoryTable.creationSQL, during: "upgrading")
                if meta.format < 3 { try addChecksums(stored: stored) }
                let update = try connection.statement("UPDATE \(Self.metaTable) SET value = ? WHERE key = 'format'")
                update.bind([.integer(Int64(SQLiteStore.formatVersion))])
                try update.run(during: "upgrading")
            }
            if stored != schema.storedDescription {
                try checkFormat(meta)
                try checkVersion(of: stored)
                if try !migrate(migrationPlan, meta: meta, stored: stored),
                    try !migrateEncryptedAttributes(meta: meta, stored: stored)
                {
                    try migrate(from: stored)
                }
            }
            return meta.identifier
        }
        try useWriteAheadLog()
        return identifier
    }

    /// Turns on the write-ahead log of a file (a no-op for a file that has it already).
    private func useWriteAheadLog() throws {
        if path != ":memory:" {
            try connection.execute("PRAGMA journal_mode = WAL", during: "configuring")
        }
    }

    /// Opens the store for reading only and returns its identifier: checks the file as ``open(migrationPlan:)``
    /// does, and refuses with ``DataStoreError/Code/readOnly`` whatever that would have to write (a
    /// format upgrade, a migration), so that nothing is written.
    func openReadOnly() throws -> String {
        guard let meta = try Self.readMeta(connection) else {
            if try Self.isEmpty(connection) {
                throw DataStoreError(
                    .notFound, "the SQLite database '\(path)' holds no store yet: it has no tables",
                    remedy: "Open it once with a configuration that allows saves, which creates the store")
            }
            try ensureEmpty()
            throw DataStoreError(.corrupted, "the SQLite database '\(path)' has no '\(Self.metaTable)' table")
        }
        try check(meta)
        // Format 3 differs from 4 only in what this build reads (runs of keys in history bodies),
        // so it is read as it is; older formats need tables the upgrade adds.
        guard meta.format >= SQLiteStore.oldestFormatReadAsIs else {
            throw DataStoreError(
                .readOnly,
                "the SQLite store '\(path)' has file format \(meta.format), which this build upgrades to "
                    + "\(SQLiteStore.formatVersion) as it opens, and a read-only open (allowsSave: false) cannot write",
                remedy: "Open it once with a configuration that allows saves, then read-only")
        }
        let stored = try meta.schema(path: path)
        guard stored == schema.storedDescription else {
            throw DataStoreError(
                .readOnly,
                "the SQLite store '\(path)' holds schema version \(stored.version) with other entities or "
                    + "properties than this app's \(schema.version), and migrating it on a read-only open "
                    + "(allowsSave: false) would write",
                remedy: "Open it once with a configuration that allows saves, so that it migrates, then read-only")
        }
        return meta.identifier
    }

    /// The meta table's definition: each row with its checksum (format 3).
    static let metaCreationSQL =
        "CREATE TABLE \(metaTable) (key TEXT PRIMARY KEY, value, \(RowChecksum.definition(over: ["key", "value"]))) "
        + "WITHOUT ROWID"

    /// The meta record, or `nil` for a database without the meta table. Throws
    /// ``DataStoreError/corrupted`` for a file that is not an SQLite database, or whose meta rows do not
    /// match their checksums.
    static func readMeta(_ connection: SQLiteConnection) throws -> StoreMeta? {
        // Every column: formats 1 and 2 have no checksum column, format 3 has it third. A store has
        // the table, so it is read at once; only when the statement cannot be prepared (for another
        // reason than a lock, which asking again would wait for twice) is the schema asked whether
        // the table is there (a new or foreign file) or the error is the file's.
        let statement: SQLiteStatement
        do {
            statement = try connection.statement("SELECT * FROM \(metaTable)")
        } catch let error as DataStoreError where error.code != .locked {
            let exists = try connection.statement("SELECT count(*) FROM sqlite_schema WHERE name = '\(metaTable)'")
            try exists.step(during: "reading")
            let hasMeta = exists.int64(0) > 0
            exists.reset()
            if hasMeta { throw error }
            return nil
        }
        var values: [String: SQLValue] = [:]
        while try statement.step(during: "reading") {
            let key = statement.text(0)
            if statement.columnCount > 2, !RowChecksum.matches(statement, columns: 2) {
                throw SQLiteDamage(file: connection.path, table: metaTable, row: nil, key: key).error(entityName: nil)
            }
            values[key] = statement.value(1)
        }
        guard case .integer(let format)? = values["format"], case .text(let identifier)? = values["identifier"],
            case .text(let schemaJSON)? = values["schema"], case .integer(let nextKey)? = values["nextKey"]
        else {
            throw DataStoreError(
                .corrupted, "the '\(metaTable)' table of the SQLite store '\(connection.path)' is incomplete",
                remedy: "Restore the file from a backup")
        }
        return StoreMeta(format: Int(format), identifier: identifier, schemaJSON: schemaJSON, nextKey: nextKey)
    }

    /// Whether the database has no tables at all: a new file, or one whose creation was stopped.
    static func isEmpty(_ connection: SQLiteConnection) throws -> Bool {
        let statement = try connection.statement("SELECT count(*) FROM sqlite_schema")
        try statement.step(during: "reading")
        let tables = statement.int64(0)
        statement.reset()
        return tables == 0
    }

    private func ensureEmpty() throws {
        guard try Self.isEmpty(connection) else {
            throw DataStoreError(
                .corrupted,
                "the SQLite database '\(path)' is not a ModelStore store: it has tables but no "
                    + "'\(Self.metaTable)' table",
                remedy: "Open a file written by SQLiteStore, or choose another path")
        }
    }

    /// Refuses a file format this build cannot read, or a store of a newer schema version.
    private func check(_ meta: StoreMeta) throws {
        try checkFormat(meta)
        try checkVersion(of: try meta.schema(path: path))
    }

    /// Refuses a file format this build cannot read.
    private func checkFormat(_ meta: StoreMeta) throws {
        // One rule and one wording for every store: newer is unsupported, 0 or negative is damage.
        if let refusal = FormatVersion.refusal(
            found: Int64(meta.format), readable: SQLiteStore.oldestReadableFormat...SQLiteStore.formatVersion)
        {
            throw DataStoreError(
                refusal.code, "the SQLite store '\(path)' cannot be opened: \(refusal.reason)",
                remedy: refusal.remedy ?? "Restore the file from a backup")
        }
    }

    /// Refuses a store written with a newer schema version than this app's.
    private func checkVersion(of description: Schema.Description) throws {
        let stored = description.version
        guard stored != schema.version else { return }
        if stored > schema.version {
            throw DataStoreError(
                .invalidSchema,
                "the SQLite store '\(path)' was written with schema version \(stored), newer than this app's "
                    + "\(schema.version)",
                remedy: "Open it with the version of the app that wrote it")
        }
    }

    private func create() throws -> String {
        let identifier = "sqlite-" + UUID().uuidString.prefix(8).lowercased()
        try connection.execute(Self.metaCreationSQL, during: "creating")
        for layout in schema.entities.compactMap({ layouts[$0.name] }) {
            for sql in layout.creationSQL(table: layout.table) { try connection.execute(sql, during: "creating") }
        }
        let insert = try connection.statement("INSERT INTO \(Self.metaTable) (key, value) VALUES (?, ?)")
        for (key, value) in [
            ("format", SQLValue.integer(Int64(SQLiteStore.formatVersion))), ("identifier", .text(identifier)),
            ("schema", .text(try schemaJSON())), ("nextKey", .integer(1)),
        ] {
            insert.reset()
            insert.bind([.text(key), value])
            try insert.run(during: "creating")
        }
        return identifier
    }

    func schemaJSON() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(schema.storedDescription), as: UTF8.self)
    }

    // MARK: Lightweight migration

    /// Rebuilds every table whose entity changed: added columns take their default, removed ones
    /// go, renamed ones (`originalName`) keep their values; new entities get tables, removed ones
    /// lose theirs. Runs inside the open's write transaction, so a failure changes nothing.
    func migrate(from stored: Schema.Description) throws {
        let storedByName = Dictionary(stored.entities.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        let current = schema.storedDescription
        for description in current.entities {
            guard let layout = layouts[description.name] else { continue }
            guard let old = storedByName[description.name] else {
                for sql in layout.creationSQL(table: layout.table) { try connection.execute(sql, during: "migrating") }
                continue
            }
            guard old != description else { continue }
            try rebuild(layout, from: old)
        }
        for old in stored.entities where layouts[old.name] == nil {
            try connection.execute("DROP TABLE IF EXISTS \(quote(old.name))", during: "migrating")
            for property in old.properties where property.isToOne == false {
                try connection.execute(
                    "DROP TABLE IF EXISTS \(quote(old.name + "." + property.name))", during: "migrating")
            }
        }
        let update = try connection.statement("UPDATE \(Self.metaTable) SET value = ? WHERE key = 'schema'")
        update.bind([.text(try schemaJSON())])
        try update.run(during: "migrating")
        connection.clearCache()
    }

    private func source(
        of name: String, originalName: String?, in old: Schema.EntityDescription
    ) -> Schema.PropertyDescription? {
        old.properties.first { $0.name == name }
            ?? originalName.flatMap { original in
                old.properties.first { $0.name == original }
            }
    }

    private func rebuild(_ layout: EntityLayout, from old: Schema.EntityDescription) throws {
        let entity = layout.entity
        let temporary = quote(entity.name + ".migrating")
        for sql in layout.creationSQL(table: temporary, indexes: false) {
            try connection.execute(sql, during: "migrating")
        }
        var expressions: [String] = []
        var parameters: [SQLValue] = []
        for column in layout.columns {
            let property = entity.properties[column.slot]
            let originalName: String? =
                switch property {
                case .attribute(let attribute): attribute.originalName
                case .relationship(let relationship): relationship.originalName
                }
            let found = source(of: column.name, originalName: originalName, in: old)
            if let found, try compatible(found, with: property, of: entity.name) {
                expressions.append(quote(found.name))
            } else if case .attribute(let attribute) = property {
                expressions.append("?")
                parameters.append(try column.kind!.encode(attribute.defaultValue, optional: attribute.isOptional))
            } else {
                expressions.append("NULL")
            }
        }
        let names = ([EntityLayout.primaryKey] + layout.columns.map { quote($0.name) }).joined(separator: ", ")
        let copy = try connection.prepare(
            "INSERT INTO \(temporary) (\(names)) SELECT "
                + ([EntityLayout.primaryKey] + expressions).joined(separator: ", ") + " FROM \(layout.table)")
        copy.bind(parameters)
        try copy.run(during: "migrating")
        try connection.execute("DROP TABLE \(layout.table)", during: "migrating")
        try connection.execute("ALTER TABLE \(temporary) RENAME TO \(layout.table)", during: "migrating")
        for sql in layout.indexSQL { try connection.execute(sql, during: "migrating") }
        // Join tables: keep (renaming if need be), create, or drop.
        var kept: Set<String> = []
        for join in layout.joinTables {
            guard case .relationship(let relationship) = entity.properties[join.slot] else { continue }
            if let found = source(of: join.name, originalName: relationship.originalName, in: old),
                found.isToOne == false
            {
                kept.insert(found.name)
                guard found.name != join.name else { continue }
                try connection.execute(
                    "ALTER TABLE \(quote(entity.name + "." + found.name)) RENAME TO \(join.table)",
                    during: "migrating")
                try connection.execute(
                    "DROP INDEX IF EXISTS \(quote(entity.name + "." + found.name + ".target"))", during: "migrating")
                try connection.execute(
                    "CREATE INDEX \(quote(entity.name + "." + join.name + ".target")) ON \(join.table) (target)",
                    during: "migrating")
            } else {
                for sql in layout.joinTableSQL(join) { try connection.execute(sql, during: "migrating") }
            }
        }
        for property in old.properties where property.isToOne == false && !kept.contains(property.name) {
            try connection.execute(
                "DROP TABLE IF EXISTS \(quote(entity.name + "." + property.name))", during: "migrating")
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
                "cannot migrate '\(entityName).\(attribute.name)' in the SQLite store '\(path)' from \(type) to "
                    + "\(attribute.valueType)",
                remedy: "Add a new attribute instead of changing the type, or migrate the data with your own code")
        case .relationship(let relationship):
            return old.isToOne == true && old.destination == relationship.destination
        }
    }
}
