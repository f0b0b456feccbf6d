import Foundation
import ModelStore
import ModelStoreAdapterKit

/// The store's history in its database: one row per transaction in `modelstore_history`, written
/// in the transaction of the save it records, and two counters in `modelstore_meta`.
///
/// A row holds the transaction's number, its change count and the running total of changes up to
/// it (so the kept total is two indexed reads: the newest row's total minus what came before the
/// oldest), its time, author and changes. The counters, written only when history is deleted or
/// trimmed, are the newest number given before that (`historyLast`, so numbers keep growing after
/// every row is gone) and the highest number deleted (`historyExpiredThrough`). A save thus writes
/// one history row and nothing else.
enum HistoryTable {
    static let table = "modelstore_history"

    /// The columns a row is written with; its checksum (``RowChecksum``, format 3) covers them.
    static let columns = "number, changes, cumulative, timestamp, author, body"

    /// The statement that writes a row (its text built once, and found in the cache without hashing it).
    static let insertSQL = CachedSQL("INSERT INTO \(table) (\(columns)) VALUES (?, ?, ?, ?, ?, ?)")

    /// Creates the table in a database made before history (run in the open's write transaction).
    static let creationSQL =
        "CREATE TABLE IF NOT EXISTS \(table) (number INTEGER PRIMARY KEY, changes INTEGER NOT NULL, "
        + "cumulative INTEGER NOT NULL, timestamp REAL NOT NULL, author TEXT, body TEXT NOT NULL, "
        + RowChecksum.definition(over: ["number", "changes", "cumulative", "timestamp", "author", "body"]) + ")"

    /// Records a transaction with these changes, keeps at most `limit` changes, and returns its
    /// number; records nothing and returns `nil` when there are no changes.
    ///
    /// A store over its limit trims to nine tenths of it, so that at the limit a save trims (and
    /// writes the counters) once per tenth of the limit rather than every time.
    static func record(
        _ changes: [StoreHistoryRecord.Change], author: String?, limit: Int?, on connection: SQLiteConnection
    ) throws -> Int64? {
        try record(count: changes.count, author: author, limit: limit, on: connection) { changes }
    }

    /// ``record(_:author:limit:on:)`` for `count` changes that `changes` lists only if a row is
    /// written: a bulk change over the limit builds no list.
    static func record(
        count changeCount: Int, author: String?, limit: Int?, on connection: SQLiteConnection,
        changes: () throws -> [StoreHistoryRecord.Change]
    ) throws -> Int64? {
        try record(count: changeCount, author: author, limit: limit, on: connection) {
            try bodyBytes(of: try changes())
        }
    }

    /// ``record(count:author:limit:on:changes:)`` for `count` changes of one kind to the models
    /// `identifiers` names, in order: a batch's identifiers, whose runs of keys are written as the
    /// body's runs without a change made per model.
    static func record(
        count changeCount: Int, of kind: StoreHistoryRecord.Change.Kind, _ identifiers: PersistentIdentifiers,
        author: String?, limit: Int?, on connection: SQLiteConnection
    ) throws -> Int64? {
        try record(count: changeCount, author: author, limit: limit, on: connection) {
            try bodyBytes(of: kind, identifiers)
        }
    }

    /// ``record(count:author:limit:on:changes:)`` with the row's body (``bodyBytes(of:)``), made
    /// only if a row is written.
    private static func record(
        count changeCount: Int, author: String?, limit: Int?, on connection: SQLiteConnection,
        body: () throws -> [UInt8]
    ) throws -> Int64? {
        guard changeCount > 0 else { return nil }
        let state = try connection.history.state(on: connection) ?? readState(connection)
        let number = max(state.newest ?? 0, state.last) + 1
        let count = Int64(changeCount)
        let total = state.cumulative + count
        // The changes before the oldest kept row once this one is written (it is the oldest when
        // there is no row), and what a trim keeps: at most nine tenths of the limit.
        let oldest = state.beforeOldest ?? (total - count)
        let keep = limit.map { Int64($0) * 9 / 10 }
        if let limit, let keep, total - oldest > Int64(limit), count > keep {
            // The trim below would delete this row with every older one (it holds more than the
            // trim keeps), so write none of them: a bulk insert or delete then builds no body it
            // throws away. The counters end as the trim would leave them.
            let trim = try connection.statement("DELETE FROM \(table)")
            try trim.run()
            try writeCounters(Counters(last: number, expiredThrough: number), connection)
            connection.history.pending = .known(State(last: number))
            return number
        }
        let insert = try connection.statement(insertSQL)
        insert.bind(1, number)
        insert.bind(2, count)
        insert.bind(3, total)
        insert.bind(4, Date().timeIntervalSince1970)
        if let author { insert.bind(5, author) } else { insert.bindNull(5) }
        insert.bind(6, utf8: try body())
        try insert.run()
        guard let limit, let keep, total - oldest > Int64(limit) else {
            connection.history.pending = .known(
                State(newest: number, cumulative: total, beforeOldest: oldest, last: state.last))
            return number
        }
        // A trim moves the oldest row: the next transaction reads the state again.
        connection.history.pending = .changed
        // Delete the oldest rows until what is left holds at most nine tenths of the limit.
        let cut = try connection.statement(
            "SELECT number FROM \(table) WHERE cumulative >= ? ORDER BY number LIMIT 1")
        cut.bind(1, total - keep)
        let through = try cut.step() ? cut.int64(0) : number
        cut.reset()
        let trim = try connection.statement("DELETE FROM \(table) WHERE number <= ?")
        trim.bind(1, through)
        try trim.run()
        var counters = try readCounters(connection)
        counters.last = number
        counters.expiredThrough = max(counters.expiredThrough, through)
        try writeCounters(counters, connection)
        return number
    }

    /// What a new record is numbered and counted from, read in one statement when the
    /// connection's ``Memo`` does not know it (after another connection's commit, or a trim).
    struct State {
        /// The newest row's number, if there is a row.
        var newest: Int64?
        /// The newest row's running total of changes (0 without rows).
        var cumulative: Int64 = 0
        /// The running total before the oldest row, if there is a row.
        var beforeOldest: Int64?
        /// The `historyLast` counter (0 when absent).
        var last: Int64 = 0
    }

    /// What a connection knows of the history's state between transactions: the state its last
    /// commit left, under the file's data version right after that commit (``State`` costs a
    /// statement of four subqueries to read, a fifth of an update's save).
    ///
    /// The kept state is used only while the data version is still the one after that commit:
    /// any later commit, by this connection or by another (in any process), moves the version, and
    /// the state is read again. A transaction that changes history in another way (a trim, a
    /// deletion of history) marks it ``Pending/changed``, so its commit forgets the state.
    struct Memo {
        /// What the open write transaction did to the history table.
        enum Pending {
            /// Nothing: a commit keeps what was known (under an older version, so it is read again).
            case untouched
            /// It recorded a transaction, which leaves this state.
            case known(State)
            /// It changed the history in a way not followed here.
            case changed
        }

        /// The state the last commit that recorded history left, and the data version after it.
        private var kept: (version: UInt32, state: State)?
        /// What the open write transaction did to the history table.
        var pending = Pending.untouched

        /// The state as the open write transaction sees it, if known without reading it.
        func state(on connection: SQLiteConnection) -> State? {
            switch pending {
            case .known(let state): return state
            case .changed: return nil
            case .untouched:
                guard let kept, kept.version == connection.dataVersion() else { return nil }
                return kept.state
            }
        }

        /// Keeps the state the committed transaction left, under the data version after the commit.
        mutating func keepCommitted(dataVersion: UInt32?) {
            switch pending {
            case .known(let state): kept = dataVersion.map { ($0, state) }
            case .changed: kept = nil
            case .untouched: break
            }
            pending = .untouched
        }
    }

    static func readState(_ connection: SQLiteConnection) throws -> State {
        let statement = try connection.statement(
            "SELECT (SELECT number FROM \(table) ORDER BY number DESC LIMIT 1), "
                + "(SELECT cumulative FROM \(table) ORDER BY number DESC LIMIT 1), "
                + "(SELECT cumulative - changes FROM \(table) ORDER BY number LIMIT 1), "
                + "(SELECT value FROM \(StoreOpener.metaTable) WHERE key = '\(keys.0)')")
        defer { statement.reset() }
        try statement.step()
        var state = State()
        if !statement.isNull(0) {
            state.newest = statement.int64(0)
            state.cumulative = statement.int64(1)
            state.beforeOldest = statement.int64(2)
        }
        if !statement.isNull(3) { state.last = statement.int64(3) }
        return state
    }

    /// The history as a value (the kept records in `window`, oldest first; every one by default),
    /// for descriptors to run on. Every open store has the table: the open creates it, or adds it
    /// to a format-1 file. The window's rows are found through the primary key, so a fetch after a
    /// recent token reads only the rows after it, however long the history.
    static func load(
        storeIdentifier: String, window: HistoryReadWindow = HistoryReadWindow(), from connection: SQLiteConnection
    ) throws -> StoreHistory {
        let counters = try readCounters(connection)
        var sql = "SELECT \(columns), \(RowChecksum.column) FROM \(table)"
        if window.after != nil { sql += " WHERE number > ?" }
        sql += window.newestFirst ? " ORDER BY number DESC" : " ORDER BY number"
        if window.limit != nil { sql += " LIMIT ?" }
        let rows = try connection.statement(sql)
        defer { rows.reset() }
        var parameter: Int32 = 1
        if let after = window.after {
            rows.bind(parameter, after)
            parameter += 1
        }
        if let limit = window.limit { rows.bind(parameter, Int64(limit)) }
        var records: [StoreHistoryRecord] = []
        while try rows.step() {
            guard RowChecksum.matches(rows, columns: 6) else {
                throw SQLiteDamage(file: connection.path, table: table, row: rows.int64(0)).error(entityName: nil)
            }
            let author: String? = if case .text(let text) = rows.value(4) { text } else { nil }
            records.append(
                StoreHistoryRecord(
                    number: rows.int64(0), timestamp: Date(timeIntervalSince1970: rows.double(3)), author: author,
                    changes: try changes(
                        in: rows.text(5), count: rows.int64(1), storeIdentifier: storeIdentifier,
                        path: connection.path)))
        }
        if window.newestFirst { records.reverse() }
        return StoreHistory(
            records: records, lastNumber: counters.last, expiredThrough: counters.expiredThrough)
    }

    /// Deletes the kept transactions that `history` (loaded from the table, then changed) no
    /// longer holds, and stores its counters.
    static func store(_ history: StoreHistory, replacing old: StoreHistory, on connection: SQLiteConnection) throws {
        connection.history.pending = .changed
        let kept = Set(history.records.map(\.number))
        let delete = try connection.statement("DELETE FROM \(table) WHERE number = ?")
        for record in old.records where !kept.contains(record.number) {
            delete.reset()
            delete.bind(1, record.number)
            try delete.run()
        }
        try writeCounters(Counters(last: history.lastNumber, expiredThrough: history.expiredThrough), connection)
    }

    /// Deletes every transaction (an erase): tokens from before it expire.
    static func deleteAll(on connection: SQLiteConnection) throws {
        connection.history.pending = .changed
        var counters = try readCounters(connection)
        let newest = try pair(connection, "SELECT number, 0 FROM \(table) ORDER BY number DESC LIMIT 1")
        counters.last = max(counters.last, newest?.0 ?? 0)
        try connection.execute("DELETE FROM \(table)")
        counters.expiredThrough = counters.last
        try writeCounters(counters, connection)
    }

    /// Removes one transaction a save across stores undid after committing; its number stays used.
    static func remove(_ number: Int64, on connection: SQLiteConnection) throws {
        connection.history.pending = .changed
        let delete = try connection.statement("DELETE FROM \(table) WHERE number = ?")
        delete.bind(1, number)
        try delete.run()
        var counters = try readCounters(connection)
        counters.last = max(counters.last, number)
        try writeCounters(counters, connection)
    }

    /// The first row of a query of two integer columns, or `nil` when it returns none.
    private static func pair(_ connection: SQLiteConnection, _ sql: String) throws -> (Int64, Int64)? {
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        return (statement.int64(0), statement.int64(1))
    }

    // MARK: The body

    // One line per change, its fields separated by tabs: the kind (`i`, `u`, `d`), the entity, the
    // model's key, the updated property names (comma-separated), and a delete's tombstone as JSON
    // (empty when it keeps nothing). Names are Swift identifiers and JSON escapes control
    // characters, so neither separator occurs inside a field. Written by hand: JSONEncoder over the
    // whole record cost more than the rest of a one-model save.
    //
    // Format 4: consecutive inserts (or deletes without tombstones) of one entity whose keys follow
    // one another are one line whose key field is a run, `first..last`. A batch of 10,000 new models
    // is then one short line instead of 140 KB, which SQLite keeps on the row's page rather than in
    // 34 overflow pages that every trim or deletion of the row must free (and, with
    // `secure_delete`, zero and log).

    static func body(of changes: [StoreHistoryRecord.Change]) throws -> String {
        String(decoding: try bodyBytes(of: changes), as: UTF8.self)
    }

    /// ``body(of:)`` as UTF-8, written into one buffer (a string built field by field allocated
    /// several times per change: a third of a one-model save's history row).
    static func bodyBytes(of changes: [StoreHistoryRecord.Change]) throws -> [UInt8] {
        let (tab, comma) = (UInt8(ascii: "\t"), UInt8(ascii: ","))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(changes.count, 4096) * 24)
        var index = changes.startIndex
        while index < changes.endIndex {
            let change = changes[index]
            if !bytes.isEmpty { bytes.append(UInt8(ascii: "\n")) }
            switch change.kind {
            case .insert: bytes.append(UInt8(ascii: "i"))
            case .update: bytes.append(UInt8(ascii: "u"))
            case .delete: bytes.append(UInt8(ascii: "d"))
            }
            bytes.append(tab)
            bytes.append(contentsOf: change.id.entityName.utf8)
            bytes.append(tab)
            let key = change.id.primaryKey.intValue ?? 0
            RowWriter.appendDecimal(key, to: &bytes)
            let last = runEnd(in: changes, from: index)
            if last > index {
                bytes.append(contentsOf: "..".utf8)
                RowWriter.appendDecimal(changes[last].id.primaryKey.intValue ?? 0, to: &bytes)
            }
            bytes.append(tab)
            for (position, name) in change.updatedProperties.enumerated() {
                if position > 0 { bytes.append(comma) }
                bytes.append(contentsOf: name.utf8)
            }
            bytes.append(tab)
            if !change.tombstone.isEmpty {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                bytes.append(contentsOf: try encoder.encode(change.tombstone))
            }
            index = last + 1
        }
        return bytes
    }

    /// The body of `kind` changes (inserts or plain deletes) to the models `identifiers` names, in
    /// order, as ``bodyBytes(of:)`` writes them: from the identifiers' runs of keys when they are
    /// runs of one entity, one line a run, without a change made per model.
    static func bodyBytes(of kind: StoreHistoryRecord.Change.Kind, _ identifiers: PersistentIdentifiers) throws
        -> [UInt8]
    {
        guard kind != .update, let (_, entityName, runs) = identifiers.keyRuns else {
            return try bodyBytes(of: identifiers.map { StoreHistoryRecord.Change(kind, $0) })
        }
        let tab = UInt8(ascii: "\t")
        var bytes: [UInt8] = []
        for run in runs {
            if !bytes.isEmpty { bytes.append(UInt8(ascii: "\n")) }
            bytes.append(kind == .insert ? UInt8(ascii: "i") : UInt8(ascii: "d"))
            bytes.append(tab)
            bytes.append(contentsOf: entityName.utf8)
            bytes.append(tab)
            RowWriter.appendDecimal(run.lowerBound, to: &bytes)
            if run.lowerBound < run.upperBound {
                bytes.append(contentsOf: "..".utf8)
                RowWriter.appendDecimal(run.upperBound, to: &bytes)
            }
            bytes.append(tab)
            bytes.append(tab)
        }
        return bytes
    }

    /// The index of the last change of the run that starts at `start`: the changes after it of the
    /// same kind (insert or delete) and entity, without updated properties or tombstones, whose
    /// integer keys follow one another. `start` itself when no run starts there.
    private static func runEnd(in changes: [StoreHistoryRecord.Change], from start: Int) -> Int {
        let first = changes[start]
        guard first.kind != .update, first.tombstone.isEmpty, first.updatedProperties.isEmpty,
            case .int(var key) = first.id.primaryKey
        else {
            return start
        }
        var end = start
        while end + 1 < changes.endIndex, key < .max {
            let next = changes[end + 1]
            guard next.kind == first.kind, case .int(let nextKey) = next.id.primaryKey, nextKey == key + 1,
                next.tombstone.isEmpty, next.updatedProperties.isEmpty, next.id.entityName == first.id.entityName
            else { break }
            key = nextKey
            end += 1
        }
        return end
    }

    /// The changes a body lists, in order; `count` is the row's change count, which the runs of a
    /// body can never exceed (a damaged run would otherwise expand without bound).
    static func changes(
        in body: String, count: Int64, storeIdentifier: String, path: String
    ) throws -> [StoreHistoryRecord.Change] {
        var changes: [StoreHistoryRecord.Change] = []
        for line in body.split(separator: "\n", omittingEmptySubsequences: true) {
            let fields = line.split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false)
            guard fields.count == 5 else { throw damaged(path) }
            let kind: StoreHistoryRecord.Change.Kind
            switch fields[0] {
            case "i": kind = .insert
            case "u": kind = .update
            case "d": kind = .delete
            default: throw damaged(path)
            }
            let entityName = String(fields[1])
            if let run = try keyRun(fields, kind: kind, path: path) {
                // Checked before expanding: the run and what was read must fit the row's count.
                let (span, spanOverflows) = run.upperBound.subtractingReportingOverflow(run.lowerBound)
                let (room, roomOverflows) = count.subtractingReportingOverflow(Int64(changes.count))
                guard !spanOverflows, !roomOverflows, span < room else { throw damaged(path) }
                for key in run {
                    changes.append(
                        StoreHistoryRecord.Change(
                            kind, .identifier(for: storeIdentifier, entityName: entityName, primaryKey: key)))
                }
                continue
            }
            guard let key = Int64(fields[2]) else { throw damaged(path) }
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
                    kind, .identifier(for: storeIdentifier, entityName: entityName, primaryKey: key),
                    updatedProperties: fields[3].isEmpty ? [] : fields[3].split(separator: ",").map(String.init),
                    tombstone: tombstone))
        }
        return changes
    }

    /// The keys of a line whose key field is a run (`first..last`), or `nil` for a single key. A
    /// run is only an insert's or a tombstone-free delete's, from a smaller key to a larger one.
    private static func keyRun(
        _ fields: [Substring], kind: StoreHistoryRecord.Change.Kind, path: String
    ) throws -> ClosedRange<Int64>? {
        guard let separator = fields[2].range(of: "..") else { return nil }
        guard kind != .update, fields[3].isEmpty, fields[4].isEmpty,
            let first = Int64(fields[2][..<separator.lowerBound]), let last = Int64(fields[2][separator.upperBound...]),
            first < last
        else { throw damaged(path) }
        return first...last
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
    }

    private static let keys = ("historyLast", "historyExpiredThrough")

    static func readCounters(_ connection: SQLiteConnection) throws -> Counters {
        let statement = try connection.statement("SELECT key, value FROM \(StoreOpener.metaTable) WHERE key IN (?, ?)")
        defer { statement.reset() }
        statement.bind([.text(keys.0), .text(keys.1)])
        var counters = Counters()
        while try statement.step() {
            if statement.text(0) == keys.0 {
                counters.last = statement.int64(1)
            } else {
                counters.expiredThrough = statement.int64(1)
            }
        }
        return counters
    }

    /// Writes both counters, one row each, through the statement that writes the key counter
    /// (``StoreOpener/metaWriteSQL``), which the connection has usually prepared already.
    private static func writeCounters(_ counters: Counters, _ connection: SQLiteConnection) throws {
        let statement = try connection.statement(StoreOpener.metaWriteSQL)
        for (key, value) in [(keys.0, counters.last), (keys.1, counters.expiredThrough)] {
            statement.reset()
            statement.bind([.text(key), .integer(value)])
            try statement.run()
        }
    }
}
