import CSQLiteRaw
import Foundation

/// A user as the raw baselines read it: the row's key and values.
struct RawUser {
    var key: Int64
    var row: UserRow
}

/// The SQLite adapter's limit: the SQLite C API with prepared statements on the tables, indexes,
/// row checksums and durability the adapter gives the `User` model (`Adapters/SQLite/FORMAT.md`),
/// doing each workload's work and no more.
///
/// With `history`, each write also does the adapter's bookkeeping: the next key in
/// `modelstore_meta` after an insert, and the transaction's row in `modelstore_history` (or, for a
/// transaction over nine tenths of the 10,000-change limit, the trim the adapter does instead).
struct SQLiteRawSystem: BenchSystem {
    let history: Bool

    func notApplicable(_ workload: Workload) -> String? {
        switch workload {
        case .updateLive: "live queries are ModelStore's (LiveQuery)"
        case .hierarchyBase, .hierarchyFlat, .hierarchySubclass: Workload.hierarchyNotApplicable
        case .insert, .updateOne, .deleteAll: nil
        default: history ? "reads write no history: sqlite-raw does the same work" : nil
        }
    }

    // MARK: The adapter's schema

    private static let userColumns = ["\"_pk\"", "\"name\"", "\"age\"", "\"email\"", "\"joined\"", "\"score\""]
    private static let selectColumns = (userColumns + ["\"_crc\""]).joined(separator: ", ")
    private static let schema = [
        "CREATE TABLE modelstore_meta (key TEXT PRIMARY KEY, value, "
            + "\"_crc\" INTEGER GENERATED ALWAYS AS (modelstore_crc(0, key, value)) STORED) WITHOUT ROWID",
        "CREATE TABLE modelstore_history (number INTEGER PRIMARY KEY, changes INTEGER NOT NULL, "
            + "cumulative INTEGER NOT NULL, timestamp REAL NOT NULL, author TEXT, body TEXT NOT NULL, "
            + "\"_crc\" INTEGER GENERATED ALWAYS AS "
            + "(modelstore_crc(0, number, changes, cumulative, timestamp, author, body)) STORED)",
        "CREATE TABLE \"User\" (\"_pk\" INTEGER PRIMARY KEY, \"name\" TEXT COLLATE SWIFT, \"age\" INTEGER, "
            + "\"email\" TEXT COLLATE SWIFT, \"joined\" REAL, \"score\", \"_crc\" INTEGER GENERATED ALWAYS AS "
            + "(modelstore_crc(0, \(userColumns.joined(separator: ", ")))) STORED)",
        "CREATE UNIQUE INDEX \"User.unique.0\" ON \"User\" (\"email\")",
        "CREATE INDEX \"User.index.0\" ON \"User\" (\"name\")",
        "INSERT INTO modelstore_meta (key, value) VALUES ('nextKey', 1)",
    ]

    /// The history's limit in changes (the adapter's default `historyLimit`).
    private static let historyLimit = 10_000

    /// What the connection knows of the history after its own last commit, as the adapter keeps it.
    private final class Counters {
        var newest: Int64 = 0
        var cumulative: Int64 = 0
        var oldestBefore: Int64 = 0
    }

    private func open(_ path: String, create: Bool) throws -> RawSQLite {
        let database = try RawSQLite(path: path, create: create)
        if create { try database.execute(Self.schema.joined(separator: ";\n")) }
        return database
    }

    // MARK: Writes

    private func insert(_ rows: [UserRow], into database: RawSQLite, counters: Counters) throws {
        try database.execute("BEGIN IMMEDIATE")
        var first: Int64 = 1
        if history {
            let next = try database.statement("SELECT value FROM modelstore_meta WHERE key = 'nextKey'")
            guard try database.step(next) else { throw WrongResult("sqlite-raw: no nextKey") }
            first = sqlite3_column_int64(next, 0)
            sqlite3_reset(next)
        }
        let insert = try database.statement(
            "INSERT INTO \"User\" (\(Self.userColumns.joined(separator: ", "))) VALUES (?, ?, ?, ?, ?, ?)")
        for (offset, row) in rows.enumerated() {
            sqlite3_reset(insert)
            sqlite3_bind_int64(insert, 1, first + Int64(offset))
            RawSQLite.bind(insert, 2, row.name)
            sqlite3_bind_int64(insert, 3, Int64(row.age))
            RawSQLite.bind(insert, 4, row.email)
            sqlite3_bind_double(insert, 5, row.joined.timeIntervalSinceReferenceDate)
            sqlite3_bind_double(insert, 6, row.score)
            try database.run(insert)
        }
        if history {
            let last = first + Int64(rows.count) - 1
            let next = try database.statement("UPDATE modelstore_meta SET value = ? WHERE key = 'nextKey'")
            sqlite3_bind_int64(next, 1, last + 1)
            try database.run(next)
            try record(rows.count, body: "i\tUser\t\(first)..\(last)\t\t", on: database, counters: counters)
        }
        try database.execute("COMMIT")
    }

    /// Writes the transaction's history row, as the adapter does: numbered after the newest, its
    /// running total after the newest's, and the oldest rows trimmed past the limit; a transaction
    /// over nine tenths of the limit writes no row and empties the history, setting the counters.
    private func record(_ changes: Int, body: String, on database: RawSQLite, counters: Counters) throws {
        let number = counters.newest + 1
        if changes > Self.historyLimit * 9 / 10 {
            try database.execute("DELETE FROM modelstore_history")
            let meta = try database.statement(
                "INSERT INTO modelstore_meta (key, value) VALUES ('historyLast', ?1), ('historyExpiredThrough', ?1) "
                    + "ON CONFLICT (key) DO UPDATE SET value = excluded.value")
            sqlite3_bind_int64(meta, 1, number)
            try database.run(meta)
            (counters.newest, counters.cumulative, counters.oldestBefore) = (number, 0, 0)
            return
        }
        let row = try database.statement(
            "INSERT INTO modelstore_history (number, changes, cumulative, timestamp, author, body) "
                + "VALUES (?, ?, ?, ?, NULL, ?)")
        sqlite3_bind_int64(row, 1, number)
        sqlite3_bind_int64(row, 2, Int64(changes))
        sqlite3_bind_int64(row, 3, counters.cumulative + Int64(changes))
        sqlite3_bind_double(row, 4, Date().timeIntervalSince1970)
        RawSQLite.bind(row, 5, body)
        try database.run(row)
        counters.newest = number
        counters.cumulative += Int64(changes)
        if counters.cumulative - counters.oldestBefore > Int64(Self.historyLimit) {
            throw WrongResult("sqlite-raw: the history passed its limit, which no workload here reaches")
        }
    }

    /// The path of a repetition's database, `store-<repetition>.sqlite`, after removing the previous
    /// repetition's files.
    private static func freshPath(_ directory: URL, _ repetition: Int) -> String {
        let previous = directory.appendingPathComponent("store-\(repetition - 1).sqlite").path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: previous + suffix) }
        return directory.appendingPathComponent("store-\(repetition).sqlite").path
    }

    /// A fresh database of every user at `path`.
    private func filledDatabase(_ data: Dataset, at path: String) throws -> RawSQLite {
        let database = try open(path, create: true)
        try insert(data.rows, into: database, counters: Counters())
        return database
    }

    // MARK: Reads

    /// The users a statement returns, each row checked against its checksum as the adapter checks it.
    private static func users(_ statement: OpaquePointer, _ database: RawSQLite) throws -> [RawUser] {
        var users: [RawUser] = []
        while try database.step(statement) {
            if sqlite3_column_int64(statement, 6) != Int64(RawSQLite.checksum(statement, columns: 6)) {
                throw WrongResult("sqlite-raw: a row does not match its checksum")
            }
            let row = UserRow(
                name: database.text(statement, 1), age: Int(sqlite3_column_int64(statement, 2)),
                email: database.text(statement, 3),
                joined: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(statement, 4)),
                score: sqlite3_column_double(statement, 5))
            users.append(RawUser(key: sqlite3_column_int64(statement, 0), row: row))
        }
        return users
    }

    private static func count(_ database: RawSQLite) throws -> Int {
        let statement = try database.statement("SELECT count(*) FROM \"User\"")
        defer { sqlite3_reset(statement) }
        guard try database.step(statement) else { return 0 }
        return Int(sqlite3_column_int64(statement, 0))
    }

    /// Fails unless SQLite plans the query through an index.
    private static func expectIndex(_ database: RawSQLite, _ sql: String) throws {
        let plan = try database.statement("EXPLAIN QUERY PLAN " + sql)
        // Reset, or the statement stays busy after its last row and keeps the connection's read
        // transaction open: every fetch after it would then skip beginning and ending its own.
        defer { sqlite3_reset(plan) }
        var details: [String] = []
        while try database.step(plan) { details.append(database.text(plan, 3)) }
        if !details.joined().contains("INDEX") { throw WrongResult("sqlite-raw does not use an index: \(details)") }
    }

    private var pathPrefix: String {
        "SQLite C API, prepared statements (WAL, synchronous=NORMAL, the adapter's tables)"
            + (history ? " + the adapter's history rows" : "")
    }

    // MARK: Workloads

    func insert(_ data: Dataset, _ directory: URL) throws -> Trial {
        var database: RawSQLite?
        let counters = Counters()
        return Trial(
            path: "\(pathPrefix): INSERT each row, one transaction",
            prepare: { repetition in
                database = nil
                database = try open(Self.freshPath(directory, repetition), create: true)
                (counters.newest, counters.cumulative, counters.oldestBefore) = (0, 0, 0)
            },
            run: { _ in try insert(data.rows, into: database!, counters: counters) },
            check: { _, repetition in
                if repetition == 0 { try Expect.count(try Self.count(database!), data.count, "insert, counted back") }
            })
    }

    /// A read of a store of N through one prepared statement.
    private func fetchTrial(
        _ data: Dataset, _ directory: URL, sql: String, index: Bool, bind: @escaping (OpaquePointer, Int) -> Void,
        check: @escaping ([RawUser], Int) throws -> Void
    ) throws -> Trial {
        let database = try filledDatabase(data, at: directory.appendingPathComponent("store.sqlite").path)
        if index { try Self.expectIndex(database, sql) }
        try database.expectNoActiveStatement()
        return Trial(
            path: "\(pathPrefix): \(sql)",
            run: { repetition in
                let statement = try database.statement(sql)
                bind(statement, repetition)
                return try Self.users(statement, database)
            },
            check: check)
    }

    func fetchIndexed(_ data: Dataset, _ directory: URL) throws -> Trial {
        try fetchTrial(
            data, directory, sql: "SELECT \(Self.selectColumns) FROM \"User\" WHERE \"name\" = ? ORDER BY \"age\"",
            index: true, bind: { statement, _ in RawSQLite.bind(statement, 1, Dataset.indexedName) },
            check: { users, _ in
                try Expect.count(users.count, data.indexedNameCount, "fetch-indexed")
                try Expect.sortedByAge(users.map(\.row.age))
            })
    }

    func fetchUnique(_ data: Dataset, _ directory: URL) throws -> Trial {
        try fetchTrial(
            data, directory, sql: "SELECT \(Self.selectColumns) FROM \"User\" WHERE \"email\" = ? LIMIT 1",
            index: true,
            bind: { statement, repetition in
                RawSQLite.bind(statement, 1, data.rows[data.lookupTarget(repetition)].email)
            },
            check: { users, repetition in
                try Expect.uniqueUser(users.map(\.row.email), repetition: repetition, of: data)
            })
    }

    func fetchScan(_ data: Dataset, _ directory: URL) throws -> Trial {
        try fetchTrial(
            data, directory,
            sql: "SELECT \(Self.selectColumns) FROM \"User\" WHERE \"age\" >= ? AND \"score\" >= ? AND \"joined\" < ?",
            index: false,
            bind: { statement, _ in
                sqlite3_bind_int64(statement, 1, Int64(Dataset.scanMinimumAge))
                sqlite3_bind_double(statement, 2, Dataset.scanMinimumScore)
                sqlite3_bind_double(statement, 3, Dataset.scanJoinedBefore.timeIntervalSinceReferenceDate)
            },
            check: { users, _ in try Expect.count(users.count, data.scanMatchCount, "fetch-scan") })
    }

    func fetchAll(_ data: Dataset, _ directory: URL) throws -> Trial {
        try fetchTrial(
            data, directory, sql: "SELECT \(Self.selectColumns) FROM \"User\"", index: false, bind: { _, _ in },
            check: { users, repetition in
                try Expect.everyUser(users, email: \.row.email, age: \.row.age, repetition: repetition, of: data)
            })
    }

    func updateOne(_ data: Dataset, _ directory: URL) throws -> Trial {
        let database = try filledDatabase(data, at: directory.appendingPathComponent("store.sqlite").path)
        let counters = Counters()
        counters.newest = 1  // the fill's transaction
        return Trial(
            path: "\(pathPrefix): UPDATE \"User\" SET \"score\" = ? WHERE \"_pk\" = ?, one transaction",
            run: { repetition in
                let key = Int64(data.lookupTarget(repetition) + 1)
                try database.execute("BEGIN IMMEDIATE")
                let update = try database.statement("UPDATE \"User\" SET \"score\" = ? WHERE \"_pk\" = ?")
                sqlite3_bind_double(update, 1, Double(repetition) + 0.5)
                sqlite3_bind_int64(update, 2, key)
                try database.run(update)
                if sqlite3_changes(database.handle) != 1 { throw WrongResult("update-one: no row changed") }
                if history { try record(1, body: "u\tUser\t\(key)\tscore\t", on: database, counters: counters) }
                try database.execute("COMMIT")
                return key
            },
            check: { key, repetition in
                guard repetition == 0 else { return }
                let read = try database.statement("SELECT \"score\" FROM \"User\" WHERE \"_pk\" = ?")
                sqlite3_bind_int64(read, 1, key)
                defer { sqlite3_reset(read) }
                guard try database.step(read), sqlite3_column_double(read, 0) == 0.5 else {
                    throw WrongResult("update-one: the change was not stored")
                }
            })
    }

    func open(_ data: Dataset, _ directory: URL) throws -> Trial {
        let path = directory.appendingPathComponent("store.sqlite").path
        _ = try filledDatabase(data, at: path)
        return Trial(
            path: "\(pathPrefix): sqlite3_open_v2, read modelstore_meta, SELECT every row",
            run: { _ in
                let database = try open(path, create: false)
                let meta = try database.statement("SELECT key, value, \"_crc\" FROM modelstore_meta")
                while try database.step(meta) {
                    if sqlite3_column_int64(meta, 2) != Int64(RawSQLite.checksum(meta, columns: 2)) {
                        throw WrongResult("open: a meta row does not match its checksum")
                    }
                }
                let users = try Self.users(
                    try database.statement("SELECT \(Self.selectColumns) FROM \"User\""), database)
                return (database, users)
            },
            check: { opened, _ in try Expect.count(opened.1.count, data.count, "open") })
    }

    func openPage(_ data: Dataset, _ directory: URL) throws -> Trial {
        let path = directory.appendingPathComponent("store.sqlite").path
        let sql = "SELECT \(Self.selectColumns) FROM \"User\" ORDER BY \"name\" LIMIT \(Dataset.pageSize)"
        try Self.expectIndex(try filledDatabase(data, at: path), sql)
        return Trial(
            path: "\(pathPrefix): sqlite3_open_v2, read modelstore_meta, \(sql)",
            run: { _ in
                let database = try open(path, create: false)
                let meta = try database.statement("SELECT key, value, \"_crc\" FROM modelstore_meta")
                while try database.step(meta) {}
                return (database, try Self.users(try database.statement(sql), database))
            },
            check: { opened, repetition in
                if repetition == 0 { try Expect.firstPage(opened.1.map(\.row.name), of: data) }
            })
    }

    func deleteAll(_ data: Dataset, _ directory: URL) throws -> Trial {
        var database: RawSQLite?
        let counters = Counters()
        return Trial(
            path: "\(pathPrefix): DELETE FROM \"User\", one transaction",
            prepare: { repetition in
                database = nil
                database = try filledDatabase(data, at: Self.freshPath(directory, repetition))
                (counters.newest, counters.cumulative, counters.oldestBefore) = (1, 0, 0)
            },
            run: { _ in
                let database = database!
                try database.execute("BEGIN IMMEDIATE")
                var deleted = 0
                if history {
                    // The adapter's history names the deleted keys (as runs), so it reads them first.
                    let keys = try database.statement("SELECT \"_pk\" FROM \"User\" ORDER BY \"_pk\"")
                    var runs: [(Int64, Int64)] = []
                    while try database.step(keys) {
                        let key = sqlite3_column_int64(keys, 0)
                        if let last = runs.last, last.1 + 1 == key {
                            runs[runs.count - 1].1 = key
                        } else {
                            runs.append((key, key))
                        }
                        deleted += 1
                    }
                    try database.execute("DELETE FROM \"User\"")
                    let body = runs.map { "d\tUser\t\($0.0)..\($0.1)\t\t" }.joined(separator: "\n")
                    try record(deleted, body: body, on: database, counters: counters)
                } else {
                    try database.execute("DELETE FROM \"User\"")
                    deleted = Int(sqlite3_changes(database.handle))
                }
                try database.execute("COMMIT")
                return deleted
            },
            check: { deleted, _ in
                try Expect.count(deleted, data.count, "delete-all")
                try Expect.count(try Self.count(database!), 0, "delete-all, counted back")
            })
    }
}
