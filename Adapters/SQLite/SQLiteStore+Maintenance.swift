import Foundation
import ModelStore

extension SQLiteStore {
    /// What ``compact()`` did: the database's size before and after.
    public struct CompactionReport: Sendable, Hashable {
        /// The database file and its write-ahead log before, in bytes.
        public var byteCountBefore: Int
        /// The same after.
        public var byteCountAfter: Int
    }

    /// Checkpoints the write-ahead log into the database and rebuilds the file without free pages
    /// (`VACUUM`). Other connections must not be writing; a busy database throws ``DataStoreError/locked``.
    @discardableResult
    public func compact() throws -> CompactionReport {
        let before = byteCount
        try database.withLock { connection in
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)", during: "checkpointing")
            try connection.execute("VACUUM", during: "compacting")
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)", during: "checkpointing")
        }
        return CompactionReport(byteCountBefore: before, byteCountAfter: byteCount)
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
