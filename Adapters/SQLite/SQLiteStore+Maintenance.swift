import Foundation
import ModelStore
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
    /// (`VACUUM`), and removes the external files no row names. Other connections must not be
    /// writing; a busy database throws ``DataStoreError/locked``.
    @discardableResult
    public func compact() throws -> CompactionReport {
        let before = byteCount
        let removed = try database.withLock { connection in
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)", during: "checkpointing")
            try connection.execute("VACUUM", during: "compacting")
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
        var names: Set<String> = []
        var owners: [(name: String, owner: String)] = []
        for layout in layouts {
            for column in layout.columns where column.kind == .data {
                let statement = try connection.prepare(
                    "SELECT \(EntityLayout.primaryKey), \(quote(column.name)) FROM \(layout.table) "
                        + "WHERE typeof(\(quote(column.name))) = 'text'")
                while try statement.step() {
                    let name = statement.text(1)
                    names.insert(name)
                    owners.append((name, "'\(layout.entity.name).\(column.name)' of row \(statement.int64(0))"))
                }
            }
        }
        return (names, owners)
    }

    /// The size of the database file and its write-ahead log, in bytes (0 in memory).
    var byteCount: Int {
        guard let url = configuration.url?.standardizedFileURL else { return 0 }
        return [url.path, url.path + "-wal"].reduce(0) { total, path in
            let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber
            return total + (size?.intValue ?? 0)
        }
    }

    /// Checks the SQLite store at `url` without changing it: SQLite's own `PRAGMA integrity_check`
    /// (pages, indexes, the `SWIFT` collation's order), then that every entity of the recorded schema
    /// has its table, columns and join tables. Returns one line per problem; empty when healthy.
    ///
    /// Throws ``DataStoreError/notFound`` if there is no file and ``DataStoreError/corrupted`` if it is
    /// not a ModelStore SQLite database at all.
    public static func integrityProblems(at url: URL) throws -> [String] {
        let description = try storedSchema(at: url)
        let path = url.standardizedFileURL.path
        let connection = try SQLiteConnection(path: path, readOnly: true, create: false, busyTimeout: .seconds(5))
        var problems: [String] = []
        let check = try connection.prepare("PRAGMA integrity_check")
        while try check.step() {
            let line = check.text(0)
            if line != "ok" { problems.append("SQLite integrity check: \(line)") }
        }
        let schema = try Schema(description)
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
            for join in layout.joinTables where try tableColumns(entity.name + "." + join.name, connection).isEmpty {
                problems.append("the join table of '\(entity.name).\(join.name)' is missing")
            }
        }
        if let folder = ExternalValueFolder(databasePath: path) {
            let layouts = try schema.entities.map(EntityLayout.init).filter { layout in
                let columns = try tableColumns(layout.entity.name, connection)
                return layout.columns.allSatisfy { columns.contains($0.name) }
            }
            for (name, owner) in try externalFileNames(connection, layouts: layouts).owners {
                if !ExternalValueFolder.isValidName(name) {
                    problems.append("\(owner) names the external file '\(name)', which is not a name the store writes")
                } else if !FileIO.exists(folder.directory + "/" + name) {
                    problems.append("the external file '\(folder.directory)/\(name)' of \(owner) is missing")
                }
            }
        }
        return problems
    }

    private static func tableColumns(_ table: String, _ connection: SQLiteConnection) throws -> Set<String> {
        let statement = try connection.prepare("SELECT name FROM pragma_table_info(?)")
        statement.bind(1, table)
        var names: Set<String> = []
        while try statement.step() { names.insert(statement.text(0)) }
        return names
    }
}
