import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreFileIO

extension SQLiteStore {
    /// What ``compact()`` did: the database's size before and after.
    public struct CompactionReport: Sendable, Hashable {
        /// The database file and its write-ahead log before, in bytes.
        public var byteCountBefore: Int
        /// The same after.
        public var byteCountAfter: Int
        /// The files of `<database>.external/` that no row named (left by a process killed during a
        /// save, or by a migration that removed an attribute), now removed.
        public var unnamedExternalFilesRemoved: Int
    }

    /// Checkpoints the write-ahead log into the database, rebuilds the file without free pages
    /// (`VACUUM`), refreshes the planner's statistics (`ANALYZE`), and removes the external files no row
    /// names. Other connections must not be writing; a busy database throws ``DataStoreError/locked``.
    @discardableResult
    public func compact() throws -> CompactionReport {
        let before = byteCount
        let removed = try database.withLock { connection in
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)", during: "checkpointing")
            try connection.execute("VACUUM", during: "compacting")
            // Fresh statistics for the planner, and for the counts tools estimate from them.
            try connection.execute("ANALYZE", during: "analyzing")
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)", during: "checkpointing")
            return try removeUnnamedExternalFiles(connection)
        }
        return CompactionReport(
            byteCountBefore: before, byteCountAfter: byteCount, unnamedExternalFilesRemoved: removed)
    }

    /// Removes the files of the external folder that no row names, holding the write lock so that no
    /// save is between writing its files and committing; returns how many.
    private func removeUnnamedExternalFiles(_ connection: SQLiteConnection) throws -> Int {
        guard let folder = ExternalValueFolder(databasePath: databasePath), FileIO.isDirectory(folder.directory)
        else { return 0 }
        return try connection.writeTransaction {
            let named = try Self.externalFileNames(connection, layouts: layouts.values).names
            let unnamed = try folder.fileNames().filter { !named.contains($0) }
            // Files the store wrote, and the temporary files of a killed save; nothing else.
            let removable = unnamed.filter {
                ExternalValueFolder.isValidName($0)
                    || ($0.hasSuffix(".tmp") && ExternalValueFolder.isValidName(String($0.dropLast(4))))
            }
            for name in removable { try? FileIO.remove(folder.directory + "/" + name) }
            return removable.count
        }
    }

    /// The external files the rows name (text in a data column), and the row naming each.
    static func externalFileNames(_ connection: SQLiteConnection, layouts: some Sequence<EntityLayout>) throws
        -> (names: Set<String>, owners: [(name: String, owner: String)])
    {
        let rows = try externalFileRows(connection, layouts: layouts)
        return (Set(rows.map(\.name)), rows.map { ($0.name, $0.owner) })
    }

    /// Every row's external file: the table, the quoted column, the row's key, the file's name, and
    /// the row described for messages.
    static func externalFileRows(_ connection: SQLiteConnection, layouts: some Sequence<EntityLayout>) throws
        -> [(table: String, column: String, key: Int64, name: String, owner: String)]
    {
        var rows: [(table: String, column: String, key: Int64, name: String, owner: String)] = []
        for layout in layouts {
            for column in layout.columns where column.kind == .data {
                let statement = try connection.prepare(
                    "SELECT \(EntityLayout.primaryKey), \(quote(column.name)) FROM \(layout.table) "
                        + "WHERE typeof(\(quote(column.name))) = 'text'")
                while try statement.step() {
                    let owner = "'\(layout.entity.name).\(column.name)' of row \(statement.int64(0))"
                    rows.append((layout.table, quote(column.name), statement.int64(0), statement.text(1), owner))
                }
            }
        }
        return rows
    }

    /// The size of the database file and its write-ahead log, in bytes (0 in memory).
    var byteCount: Int {
        guard let url = configuration.url?.standardizedFileURL else { return 0 }
        return [url.path, url.path + "-wal"].reduce(0) { total, path in
            let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber
            return total + (size?.intValue ?? 0)
        }
    }

    /// Checks the SQLite store at `url` without changing it (it writes no file, not even SQLite's
    /// `-wal` and `-shm`): SQLite's own `PRAGMA integrity_check` (pages, indexes, the `SWIFT`
    /// collation's order), that every entity of the recorded schema has its table, columns and join
    /// tables, that every row matches its checksum (format 3), and that the external files the rows
    /// name are there. Returns one line per problem; empty when healthy. It reads the whole file.
    ///
    /// Throws ``DataStoreError/notFound`` if there is no file and ``DataStoreError/corrupted`` if it is
    /// not a ModelStore SQLite database at all.
    public static func integrityProblems(at url: URL, encryption: EncryptionKeySource? = nil) throws -> [String] {
        try verification(at: url, encryption: encryption).problems
    }

    /// Gives `body` a read-only connection to the database (see ``withInspection(of:encryption:_:)``),
    /// with the meta table's record and the schema it holds.
    private static func withRecordedSchema<Result>(
        at url: URL, encryption: EncryptionKeySource?,
        _ body: (SQLiteConnection, StoreMeta, Schema) throws -> Result
    ) throws -> Result {
        let path = url.standardizedFileURL.path
        _ = try storedSchema(at: url, encryption: encryption)
        return try withInspection(of: path, encryption: encryption) { connection in
            guard let meta = try StoreOpener.readMeta(connection) else {
                throw DataStoreError(.notFound, "the SQLite database '\(path)' holds no store")
            }
            return try body(connection, meta, try Schema(try meta.schema(path: path)))
        }
    }

    /// What `modelstore inspect` reports, read without opening the store or writing any file: the store
    /// identifier, the format, the schema version recorded, and the number of models of each entity.
    static func summary(at url: URL, encryption: EncryptionKeySource? = nil) throws -> (
        identifier: String, format: Int, version: Schema.Version, counts: [(entity: String, count: Int)]
    ) {
        try withRecordedSchema(at: url, encryption: encryption) { connection, meta, schema in
            let counts = try schema.entities.map { entity in
                let count = try connection.prepare("SELECT count(*) FROM \(quote(entity.name))")
                try count.step()
                return (entity: entity.name, count: Int(count.int64(0)))
            }
            return (meta.identifier, meta.format, schema.version, counts)
        }
    }

    /// How many models of each entity the database holds, without reading a large table whole:
    /// counted up to `limit` rows a table; past that, estimated from `sqlite_stat1` where `ANALYZE`
    /// has run, else from the range of the table's keys, which the store never reuses (so the
    /// estimate is exact until models are deleted, and never below the count). Opens nothing for
    /// writing.
    public static func estimatedCounts(
        at url: URL, encryption: EncryptionKeySource? = nil, countingUpTo limit: Int
    ) throws
        -> [(entity: String, count: Int, isEstimate: Bool)]
    {
        try withRecordedSchema(at: url, encryption: encryption) { connection, _, schema in
            let analyzed = try analyzedRowCounts(connection)
            return try schema.entities.map { entity in
                let table = quote(entity.name)
                let bounded = try connection.prepare("SELECT count(*) FROM (SELECT 1 FROM \(table) LIMIT \(limit + 1))")
                try bounded.step()
                let counted = Int(bounded.int64(0))
                if counted <= limit { return (entity.name, counted, false) }
                if let rows = analyzed[entity.name] { return (entity.name, max(rows, counted), true) }
                let key = EntityLayout.primaryKey
                let range = try connection.prepare("SELECT max(\(key)) - min(\(key)) + 1 FROM \(table)")
                try range.step()
                return (entity.name, max(Int(range.int64(0)), counted), true)
            }
        }
    }

    /// The rows of each table as `ANALYZE` last found them (`sqlite_stat1`), empty where it never ran.
    private static func analyzedRowCounts(_ connection: SQLiteConnection) throws -> [String: Int] {
        let exists = try connection.prepare(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'")
        guard try exists.step() else { return [:] }
        let statistics = try connection.prepare("SELECT tbl, stat FROM sqlite_stat1")
        var rows: [String: Int] = [:]
        while try statistics.step() {
            // The first number of `stat` is the number of rows in the table (or in the index, which has one per row).
            guard let first = statistics.text(1).split(separator: " ").first, let count = Int(first) else { continue }
            rows[statistics.text(0), default: 0] = max(rows[statistics.text(0)] ?? 0, count)
        }
        return rows
    }

    /// What ``integrityProblems(at:)`` finds, then every relationship that refers to a model the store
    /// does not hold, the number of models of each entity, and the schema version recorded.
    static func verification(at url: URL, encryption: EncryptionKeySource? = nil) throws -> (
        problems: [String], counts: [(entity: String, count: Int)], version: Schema.Version
    ) {
        let path = url.standardizedFileURL.path
        _ = try storedSchema(at: url, encryption: encryption)
        return try withInspection(of: path, encryption: encryption) { connection in
            var problems: [String] = []
            if let offset = try WriteAheadLogCheck.damage(ofLogOf: path, cipher: connection.pageCipher) {
                problems.append(
                    "the write-ahead log '\(path)-wal' is damaged at byte \(offset), before committed transactions")
            }
            let format = try StoreOpener.readMeta(connection)?.format ?? formatVersion
            if let refusal = FormatVersion.refusal(found: Int64(format), readable: oldestReadableFormat...formatVersion)
            {
                problems.append("the store cannot be opened: \(refusal.reason)")
            }
            // Format 3 on: every table has its checksum column.
            let checksummed = { (table: String, columns: Set<String>) in
                if format >= 3 && !columns.contains("_crc") {
                    problems.append("the table '\(table)' has no checksum column '_crc'")
                }
                return columns.contains("_crc")
            }
            do {
                let check = try connection.prepare("PRAGMA integrity_check")
                while try check.step() {
                    let line = check.text(0)
                    if line != "ok" { problems.append("SQLite integrity check: \(line)") }
                }
            } catch let error as DataStoreError where error.code == .corrupted {
                problems.append(error.message)
            }
            let schema = try Schema(try storedSchema(connection))
            var counts: [(entity: String, count: Int)] = []
            do {
                var readable: [EntityLayout] = []
                for entity in schema.entities {
                    let layout = EntityLayout(entity)
                    let columns = try tableColumns(entity.name, connection)
                    guard !columns.isEmpty else {
                        problems.append("the table of '\(entity.name)' is missing")
                        continue
                    }
                    for column in layout.columns where !columns.contains(column.name) {
                        problems.append("the table of '\(entity.name)' has no column '\(column.name)'")
                    }
                    if layout.columns.allSatisfy({ columns.contains($0.name) }) { readable.append(layout) }
                    for join in layout.joinTables {
                        let joinColumns = try tableColumns(entity.name + "." + join.name, connection)
                        if joinColumns.isEmpty {
                            problems.append("the join table of '\(entity.name).\(join.name)' is missing")
                        } else if checksummed(entity.name + "." + join.name, joinColumns) {
                            problems += try damagedRows(
                                "SELECT owner, position, \(EntityLayout.joinColumns), \(RowChecksum.column) "
                                    + "FROM \(join.table)", checked: 3, in: join.table, connection)
                        }
                    }
                    if checksummed(entity.name, columns) {
                        problems += try damagedRows(
                            "SELECT \(EntityLayout.primaryKey), NULL, \(layout.selectList) FROM \(layout.table)",
                            checked: layout.checksumIndex, in: layout.table, connection)
                    }
                }
                let history = try tableColumns(HistoryTable.table, connection)
                if !history.isEmpty && checksummed(HistoryTable.table, history) {
                    problems += try damagedRows(
                        "SELECT number, NULL, \(HistoryTable.columns), \(RowChecksum.column) FROM \(HistoryTable.table)",
                        checked: 6, in: HistoryTable.table, connection)
                }
                for layout in readable {
                    let count = try connection.prepare("SELECT count(*) FROM \(layout.table)")
                    try count.step()
                    counts.append((layout.entity.name, Int(count.int64(0))))
                    problems += try danglingReferences(from: layout, among: readable, connection)
                }
                if let folder = ExternalValueFolder(databasePath: path) {
                    for (name, owner) in try externalFileNames(connection, layouts: readable).owners {
                        if !ExternalValueFolder.isValidName(name) {
                            problems.append(
                                "\(owner) names the external file '\(name)', which is not a name the store writes")
                        } else if !FileIO.exists(folder.directory + "/" + name) {
                            problems.append("the external file '\(folder.directory)/\(name)' of \(owner) is missing")
                        }
                    }
                }
            } catch let error as DataStoreError where error.code == .corrupted {
                // A page SQLite cannot read stops the reading of the tables: reported, not thrown.
                problems.append(error.message)
            }
            return (problems, counts, schema.version)
        }
    }

    /// The relationships of an entity's rows that refer to a row its destination does not have.
    private static func danglingReferences(
        from layout: EntityLayout, among layouts: [EntityLayout], _ connection: SQLiteConnection
    ) throws -> [String] {
        let tables = Dictionary(layouts.map { ($0.entity.name, $0.table) }, uniquingKeysWith: { $1 })
        var queries: [(name: String, sql: String)] = []
        for column in layout.columns where column.kind == nil {
            guard let destination = column.destination.flatMap({ tables[$0] }) else { continue }
            queries.append(
                (
                    column.name,
                    "SELECT \(EntityLayout.primaryKey), \(quote(column.name)) FROM \(layout.table) WHERE "
                        + "\(quote(column.name)) NOT IN (SELECT \(EntityLayout.primaryKey) FROM \(destination))"
                ))
        }
        for join in layout.joinTables {
            guard let destination = tables[join.destination] else { continue }
            queries.append(
                (
                    join.name,
                    "SELECT owner, target FROM \(join.table) WHERE target NOT IN "
                        + "(SELECT \(EntityLayout.primaryKey) FROM \(destination))"
                ))
        }
        var problems: [String] = []
        for (name, sql) in queries {
            let statement = try connection.prepare(sql)
            while try statement.step(), problems.count < 100 {
                problems.append(
                    "row \(statement.int64(0)) of '\(layout.entity.name)' refers through '\(name)' to the key "
                        + "\(statement.int64(1)), which '\(layout.entity.name).\(name)''s destination does not hold")
            }
        }
        return problems
    }

    /// The rows of a query that do not match their checksums, as problems (the first 100). The query
    /// selects the row's key, its position (or `NULL`), then the columns the checksum covers and the
    /// checksum.
    private static func damagedRows(
        _ sql: String, checked count: Int32, in table: String, _ connection: SQLiteConnection
    ) throws -> [String] {
        let statement = try connection.prepare(sql)
        var problems: [String] = []
        var damaged = 0
        while try statement.step() {
            guard !RowChecksum.matches(statement, columns: count, from: 2) else { continue }
            damaged += 1
            guard damaged <= 100 else { continue }
            let position: Int64? = statement.isNull(1) ? nil : statement.int64(1)
            problems.append(
                SQLiteDamage(file: connection.path, table: table, row: statement.int64(0), position: position)
                    .description)
        }
        if damaged > 100 { problems.append("\(damaged - 100) more rows of '\(table)' do not match their checksums") }
        return problems
    }

    private static func tableColumns(_ table: String, _ connection: SQLiteConnection) throws -> Set<String> {
        // `table_xinfo`: the generated checksum column too.
        let statement = try connection.prepare("SELECT name FROM pragma_table_xinfo(?)")
        statement.bind(1, table)
        var names: Set<String> = []
        while try statement.step() { names.insert(statement.text(0)) }
        return names
    }
}
