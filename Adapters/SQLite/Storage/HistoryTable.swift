import Foundation
@_spi(AdapterKit) import ModelStore

/// The store's history in its database: one row per transaction in `modelstore_history`, written
/// in the transaction of the save it records, and three counters in `modelstore_meta`.
///
/// A row holds the transaction's number, how many changes it has, and the record as JSON. The
/// counters are the newest number ever given (`historyLast`, so numbers keep growing after
/// history is deleted), the highest number deleted or trimmed (`historyExpiredThrough`), and the
/// changes the kept rows hold (`historyChanges`, for the limit).
enum HistoryTable {
    static let table = "modelstore_history"

    /// Creates the table in a database made before history (run in the open's write transaction).
    static let creationSQL =
        "CREATE TABLE IF NOT EXISTS \(table) (number INTEGER PRIMARY KEY, changes INTEGER NOT NULL, "
        + "timestamp REAL NOT NULL, author TEXT, body TEXT NOT NULL)"

    /// Records a transaction with these changes, keeps at most `limit` changes, and returns its
    /// number; records nothing and returns `nil` when there are no changes.
    static func record(
        _ changes: [StoreHistoryRecord.Change], author: String?, limit: Int?, on connection: SQLiteConnection
    ) throws -> Int64? {
        guard !changes.isEmpty else { return nil }
        var counters = try readCounters(connection)
        let record = StoreHistoryRecord(
            number: counters.last + 1, timestamp: Date(), author: author, changes: changes)
        let insert = try connection.statement(
            "INSERT INTO \(table) (number, changes, timestamp, author, body) VALUES (?, ?, ?, ?, ?)")
        insert.bind([
            .integer(record.number), .integer(Int64(changes.count)), .real(record.timestamp.timeIntervalSince1970),
            author.map(SQLValue.text) ?? .null, .text(try body(of: changes)),
        ])
        try insert.run()
        counters.last = record.number
        counters.changes += Int64(changes.count)
        if let limit, counters.changes > Int64(limit) {
            // The oldest transactions go first, as StoreHistory trims.
            let oldest = try connection.statement("SELECT number, changes FROM \(table) ORDER BY number")
            var through: Int64 = 0
            while counters.changes > Int64(limit), try oldest.step() {
                through = oldest.int64(0)
                counters.changes -= oldest.int64(1)
            }
            oldest.reset()
            let trim = try connection.statement("DELETE FROM \(table) WHERE number <= ?")
            trim.bind(1, through)
            try trim.run()
            counters.expiredThrough = max(counters.expiredThrough, through)
        }
        try writeCounters(counters, connection)
        return record.number
    }

    /// The history as a value (every kept record, oldest first), for descriptors to run on.
    static func load(limit: Int?, storeIdentifier: String, from connection: SQLiteConnection) throws -> StoreHistory {
        guard try exists(connection) else { return StoreHistory(limit: limit) }
        let counters = try readCounters(connection)
        let rows = try connection.statement(
            "SELECT number, timestamp, author, body FROM \(table) ORDER BY number")
        defer { rows.reset() }
        var records: [StoreHistoryRecord] = []
        while try rows.step() {
            let author: String? = if case .text(let text) = rows.value(2) { text } else { nil }
            records.append(
                StoreHistoryRecord(
                    number: rows.int64(0), timestamp: Date(timeIntervalSince1970: rows.double(1)), author: author,
                    changes: try changes(in: rows.text(3), storeIdentifier: storeIdentifier, path: connection.path)))
        }
        return StoreHistory(
            records: records, lastNumber: counters.last, expiredThrough: counters.expiredThrough, limit: limit)
    }

    /// Deletes the kept transactions that `history` (loaded from the table, then changed) no
    /// longer holds, and stores its counters.
    static func store(_ history: StoreHistory, replacing old: StoreHistory, on connection: SQLiteConnection) throws {
        let kept = Set(history.records.map(\.number))
        let delete = try connection.statement("DELETE FROM \(table) WHERE number = ?")
        for record in old.records where !kept.contains(record.number) {
            delete.reset()
            delete.bind(1, record.number)
            try delete.run()
        }
        try writeCounters(
            Counters(
                last: history.lastNumber, expiredThrough: history.expiredThrough,
                changes: Int64(history.records.reduce(0) { $0 + $1.changes.count })),
            connection)
    }

    /// Deletes every transaction (an erase): tokens from before it expire.
    static func deleteAll(on connection: SQLiteConnection) throws {
        var counters = try readCounters(connection)
        try connection.execute("DELETE FROM \(table)")
        counters.expiredThrough = counters.last
        counters.changes = 0
        try writeCounters(counters, connection)
    }

    /// Removes one transaction a save across stores undid after committing; its number stays used.
    static func remove(_ number: Int64, on connection: SQLiteConnection) throws {
        let delete = try connection.statement("DELETE FROM \(table) WHERE number = ?")
        delete.bind(1, number)
        try delete.run()
        var counters = try readCounters(connection)
        let sum = try connection.statement("SELECT COALESCE(SUM(changes), 0) FROM \(table)")
        defer { sum.reset() }
        _ = try sum.step()
        counters.changes = sum.int64(0)
        try writeCounters(counters, connection)
    }

    // MARK: The body

    // One line per change, its fields separated by tabs: the kind (`i`, `u`, `d`), the entity, the
    // model's key, the updated property names (comma-separated), and a delete's tombstone as JSON
    // (empty when it keeps nothing). Names are Swift identifiers and JSON escapes control
    // characters, so neither separator occurs inside a field. Written by hand: JSONEncoder over the
    // whole record cost more than the rest of a one-model save.

    static func body(of changes: [StoreHistoryRecord.Change]) throws -> String {
        var body = ""
        for change in changes {
            if !body.isEmpty { body += "\n" }
            switch change.kind {
            case .insert: body += "i\t"
            case .update: body += "u\t"
            case .delete: body += "d\t"
            }
            body += change.id.entityName + "\t"
            body += String(change.id.primaryKey.intValue ?? 0) + "\t"
            body += change.updatedProperties.joined(separator: ",") + "\t"
            if !change.tombstone.isEmpty {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                body += String(decoding: try encoder.encode(change.tombstone), as: UTF8.self)
            }
        }
        return body
    }

    static func changes(in body: String, storeIdentifier: String, path: String) throws -> [StoreHistoryRecord.Change] {
        var changes: [StoreHistoryRecord.Change] = []
        for line in body.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false)
            guard fields.count == 5, let key = Int64(fields[2]) else { throw damaged(path) }
            let kind: StoreHistoryRecord.Change.Kind
            switch fields[0] {
            case "i": kind = .insert
            case "u": kind = .update
            case "d": kind = .delete
            default: throw damaged(path)
            }
            var tombstone: [String: StoreValue] = [:]
            if !fields[4].isEmpty {
                do {
                    tombstone = try JSONDecoder().decode([String: StoreValue].self, from: Data(fields[4].utf8))
                } catch {
                    throw damaged(path)
                }
            }
            changes.append(
                StoreHistoryRecord.Change(
                    kind, .identifier(for: storeIdentifier, entityName: String(fields[1]), primaryKey: key),
                    updatedProperties: fields[3].isEmpty ? [] : fields[3].split(separator: ",").map(String.init),
                    tombstone: tombstone))
        }
        return changes
    }

    private static func damaged(_ path: String) -> DataStoreError {
        DataStoreError(
            .corrupted, "a history record of the SQLite store '\(path)' cannot be read",
            remedy: "Delete the history (deleteHistory) or restore the file from a backup")
    }

    // MARK: Counters

    struct Counters {
        var last: Int64 = 0
        var expiredThrough: Int64 = 0
        var changes: Int64 = 0
    }

    private static let keys = ("historyLast", "historyExpiredThrough", "historyChanges")

    private static func exists(_ connection: SQLiteConnection) throws -> Bool {
        let statement = try connection.statement("SELECT count(*) FROM sqlite_schema WHERE name = '\(table)'")
        defer { statement.reset() }
        _ = try statement.step()
        return statement.int64(0) > 0
    }

    static func readCounters(_ connection: SQLiteConnection) throws -> Counters {
        let statement = try connection.statement(
            "SELECT key, value FROM \(StoreOpener.metaTable) WHERE key IN (?, ?, ?)")
        defer { statement.reset() }
        statement.bind([.text(keys.0), .text(keys.1), .text(keys.2)])
        var counters = Counters()
        while try statement.step() {
            let value = statement.int64(1)
            switch statement.text(0) {
            case keys.0: counters.last = value
            case keys.1: counters.expiredThrough = value
            default: counters.changes = value
            }
        }
        return counters
    }

    private static func writeCounters(_ counters: Counters, _ connection: SQLiteConnection) throws {
        let statement = try connection.statement(
            "INSERT OR REPLACE INTO \(StoreOpener.metaTable) (key, value) VALUES (?, ?), (?, ?), (?, ?)")
        statement.bind([
            .text(keys.0), .integer(counters.last), .text(keys.1), .integer(counters.expiredThrough),
            .text(keys.2), .integer(counters.changes),
        ])
        try statement.run()
    }
}
