import Foundation
import GRDB

/// A user as a GRDB Codable record.
struct UserRecord: Codable, Sendable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "user"
    var id: Int64?
    var name: String
    var age: Int
    var email: String
    var joined: Date
    var score: Double

    init(_ row: UserRow) {
        id = nil
        name = row.name
        age = row.age
        email = row.email
        joined = row.joined
        score = row.score
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
}

/// GRDB doing the same work through its record API, with an index on `name` and a unique `email`,
/// like the ModelStore model.
struct GRDBSystem: BenchSystem {
    /// Where the database lives.
    enum Kind {
        /// An in-memory `DatabaseQueue`.
        case memory
        /// A `DatabasePool` file in WAL mode, with GRDB's default `synchronous = NORMAL`.
        case file
        /// A `DatabasePool` file in WAL mode with `synchronous = FULL`: every commit is fsynced.
        case fileSynced
    }

    let kind: Kind

    func notApplicable(_ workload: Workload) -> String? {
        if (workload == .open || workload == .openPage) && kind == .memory {
            return "an in-memory database has nothing on disk to open"
        }
        if workload == .updateLive { return "live queries are ModelStore's (LiveQuery)" }
        if workload.isHierarchy { return Workload.hierarchyNotApplicable }
        return nil
    }

    // MARK: Databases

    private func database(at url: URL) throws -> any DatabaseWriter {
        switch kind {
        case .memory:
            return try DatabaseQueue()
        case .file, .fileSynced:
            let pool = try DatabasePool(path: url.path)
            if kind == .fileSynced {
                // GRDB sets NORMAL when it enables WAL; FULL syncs the WAL on every commit.
                try pool.writeWithoutTransaction { try $0.execute(sql: "PRAGMA synchronous = FULL") }
                let mode = try pool.writeWithoutTransaction { try Int.fetchOne($0, sql: "PRAGMA synchronous") }
                if mode != 2 { throw WrongResult("grdb-file-sync: synchronous is \(mode ?? -1), not FULL (2)") }
            }
            return pool
        }
    }

    private func createSchema(_ writer: any DatabaseWriter) throws {
        try writer.write { db in
            try db.create(table: UserRecord.databaseTableName) { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("name", .text).notNull().indexed()
                table.column("age", .integer).notNull()
                table.column("email", .text).notNull().unique()
                table.column("joined", .datetime).notNull()
                table.column("score", .double).notNull()
            }
        }
    }

    private static func insertAll(_ rows: [UserRow], into writer: any DatabaseWriter) throws {
        try writer.write { db in
            for row in rows {
                var record = UserRecord(row)
                try record.insert(db)
            }
        }
    }

    /// Closes the previous repetition's database, removes its files, and opens a fresh one at `store-<repetition>`.
    private func freshDatabase(_ directory: URL, _ repetition: Int, into writer: inout (any DatabaseWriter)?) throws {
        writer = nil
        let previous = directory.appendingPathComponent("store-\(repetition - 1).sqlite").path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: previous + suffix) }
        let fresh = try database(at: directory.appendingPathComponent("store-\(repetition).sqlite"))
        try createSchema(fresh)
        writer = fresh
    }

    private func filledDatabase(_ data: Dataset, _ directory: URL) throws -> any DatabaseWriter {
        let writer = try database(at: directory.appendingPathComponent("store.sqlite"))
        try createSchema(writer)
        try Self.insertAll(data.rows, into: writer)
        return writer
    }

    private static func count(_ reader: any DatabaseReader) throws -> Int {
        try reader.read { try UserRecord.fetchCount($0) }
    }

    /// Fails unless SQLite plans the query through an index.
    private static func expectIndex(_ reader: any DatabaseReader, _ request: QueryInterfaceRequest<UserRecord>) throws {
        let plan = try reader.read { db -> String in
            let statement = try request.makePreparedRequest(db).statement
            let rows = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
            return rows.map { $0["detail"] as String? ?? "" }.joined(separator: "; ")
        }
        if !plan.contains("INDEX") { throw WrongResult("GRDB does not use an index: \(plan)") }
    }

    // MARK: Workloads

    private var pathPrefix: String {
        switch kind {
        case .memory: "DatabaseQueue() in memory"
        case .file: "DatabasePool (WAL, synchronous=NORMAL)"
        case .fileSynced: "DatabasePool (WAL, synchronous=FULL)"
        }
    }

    func insert(_ data: Dataset, _ directory: URL) throws -> Trial {
        var writer: (any DatabaseWriter)?
        return Trial(
            path: "\(pathPrefix): record.insert(db) for each, one write transaction",
            prepare: { repetition in try freshDatabase(directory, repetition, into: &writer) },
            run: { _ in try Self.insertAll(data.rows, into: writer!) },
            check: { _, repetition in
                if repetition == 0 { try Expect.count(try Self.count(writer!), data.count, "insert, counted back") }
            })
    }

    func fetchIndexed(_ data: Dataset, _ directory: URL) throws -> Trial {
        let writer = try filledDatabase(data, directory)
        let request = UserRecord.filter(Column("name") == Dataset.indexedName).order(Column("age"))
        try Self.expectIndex(writer, request)
        return Trial(
            path: "\(pathPrefix): filter(name == \"Jane\").order(age).fetchAll (name index)",
            run: { _ in try writer.read { try request.fetchAll($0) } },
            check: { users, _ in
                try Expect.count(users.count, data.indexedNameCount, "fetch-indexed")
                try Expect.sortedByAge(users.map(\.age))
            })
    }

    func fetchUnique(_ data: Dataset, _ directory: URL) throws -> Trial {
        let writer = try filledDatabase(data, directory)
        try Self.expectIndex(writer, UserRecord.filter(Column("email") == "x"))
        return Trial(
            path: "\(pathPrefix): filter(email == x).fetchOne (unique index)",
            run: { repetition in
                let email = data.rows[data.lookupTarget(repetition)].email
                return try writer.read { try UserRecord.filter(Column("email") == email).fetchOne($0) }
            },
            check: { user, repetition in
                if user?.email != data.rows[data.lookupTarget(repetition)].email {
                    throw WrongResult("fetch-unique: wrong user")
                }
            })
    }

    func fetchScan(_ data: Dataset, _ directory: URL) throws -> Trial {
        let writer = try filledDatabase(data, directory)
        let request = UserRecord.filter(
            Column("age") >= Dataset.scanMinimumAge && Column("score") >= Dataset.scanMinimumScore
                && Column("joined") < Dataset.scanJoinedBefore)
        return Trial(
            path: "\(pathPrefix): filter(age && score && joined).fetchAll (no index)",
            run: { _ in try writer.read { try request.fetchAll($0) } },
            check: { users, _ in try Expect.count(users.count, data.scanMatchCount, "fetch-scan") })
    }

    func fetchAll(_ data: Dataset, _ directory: URL) throws -> Trial {
        let writer = try filledDatabase(data, directory)
        return Trial(
            path: "\(pathPrefix): UserRecord.fetchAll",
            run: { _ in try writer.read { try UserRecord.fetchAll($0) } },
            check: { users, repetition in
                try Expect.everyUser(users, email: \.email, age: \.age, repetition: repetition, of: data)
            })
    }

    func updateOne(_ data: Dataset, _ directory: URL) throws -> Trial {
        let writer = try filledDatabase(data, directory)
        var record: UserRecord?
        return Trial(
            path: "\(pathPrefix): change one fetched record, record.update(db) in a write",
            prepare: { repetition in
                let id = Int64(data.lookupTarget(repetition) + 1)
                record = try writer.read { try UserRecord.fetchOne($0, key: id) }
                if record == nil { throw WrongResult("update-one: the user to change is missing") }
            },
            run: { repetition in
                var changed = record!
                changed.score = Double(repetition) + 0.5
                try writer.write { [changed] db in try changed.update(db) }
                return changed.id!
            },
            check: { id, repetition in
                guard repetition == 0 else { return }
                let stored = try writer.read { try UserRecord.fetchOne($0, key: id) }
                if stored?.score != 0.5 { throw WrongResult("update-one: the change was not stored") }
            })
    }

    func open(_ data: Dataset, _ directory: URL) throws -> Trial {
        let url = directory.appendingPathComponent("store.sqlite")
        do {
            let writer = try filledDatabase(data, directory)
            _ = writer
        }
        return Trial(
            path: "DatabasePool(path:) + UserRecord.fetchAll",
            run: { _ in
                let pool = try database(at: url)
                let users = try pool.read { try UserRecord.fetchAll($0) }
                return (pool, users)
            },
            check: { opened, _ in try Expect.count(opened.1.count, data.count, "open") })
    }

    func openPage(_ data: Dataset, _ directory: URL) throws -> Trial {
        let url = directory.appendingPathComponent("store.sqlite")
        do {
            let writer = try filledDatabase(data, directory)
            try Self.expectIndex(writer, UserRecord.order(Column("name")).limit(Dataset.pageSize))
        }
        return Trial(
            path: "DatabasePool(path:) + UserRecord.order(name).limit(20).fetchAll",
            run: { _ in
                let pool = try database(at: url)
                let users = try pool.read { try UserRecord.order(Column("name")).limit(Dataset.pageSize).fetchAll($0) }
                return (pool, users)
            },
            check: { opened, repetition in
                if repetition == 0 { try Expect.firstPage(opened.1.map(\.name), of: data) }
            })
    }

    func deleteAll(_ data: Dataset, _ directory: URL) throws -> Trial {
        var writer: (any DatabaseWriter)?
        return Trial(
            path: "\(pathPrefix): UserRecord.deleteAll(db) in a write",
            prepare: { repetition in
                try freshDatabase(directory, repetition, into: &writer)
                try Self.insertAll(data.rows, into: writer!)
            },
            run: { _ in try writer!.write { try UserRecord.deleteAll($0) } },
            check: { deleted, _ in
                try Expect.count(deleted, data.count, "delete-all")
                try Expect.count(try Self.count(writer!), 0, "delete-all, counted back")
            })
    }
}
