import Foundation
import PostgresNIO

/// Raw PostgresNIO on one connection with prepared statements, decoding rows into `UserRow`
/// structs: the floor, what hand-written SQL costs without any model layer.
struct PostgresNIOSystem: BenchSystem {
    func notApplicable(_ workload: Workload) -> String? { nil }

    /// A user as a row: the key, then the five columns.
    typealias Row = (Int, String, Int, String, Date, Double)

    private static func userRow(_ row: Row) -> UserRow {
        UserRow(name: row.1, age: row.2, email: row.3, joined: row.4, score: row.5)
    }

    /// Every user in one statement: five arrays unnested into rows.
    struct InsertAll: PostgresPreparedStatement {
        static let sql = """
            INSERT INTO users (name, age, email, joined, score) \
            SELECT * FROM unnest($1::text[], $2::int8[], $3::text[], $4::timestamptz[], $5::float8[])
            """
        typealias Row = ()
        let rows: [UserRow]
        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 5)
            bindings.append(rows.map(\.name))
            bindings.append(rows.map(\.age))
            bindings.append(rows.map(\.email))
            bindings.append(rows.map(\.joined))
            bindings.append(rows.map(\.score))
            return bindings
        }
        func decodeRow(_ row: PostgresRow) throws -> Row {}
    }

    struct ByName: PostgresPreparedStatement {
        static let sql = "SELECT id, name, age, email, joined, score FROM users WHERE name = $1 ORDER BY age"
        let name: String
        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(name)
            return bindings
        }
        func decodeRow(_ row: PostgresRow) throws -> PostgresNIOSystem.Row {
            try row.decode(PostgresNIOSystem.Row.self)
        }
    }

    struct ByEmail: PostgresPreparedStatement {
        static let sql = "SELECT id, name, age, email, joined, score FROM users WHERE email = $1 LIMIT 1"
        let email: String
        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(email)
            return bindings
        }
        func decodeRow(_ row: PostgresRow) throws -> PostgresNIOSystem.Row {
            try row.decode(PostgresNIOSystem.Row.self)
        }
    }

    struct Scan: PostgresPreparedStatement {
        static let sql = """
            SELECT id, name, age, email, joined, score FROM users WHERE age >= $1 AND score >= $2 AND joined < $3
            """
        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(Dataset.scanMinimumAge)
            bindings.append(Dataset.scanMinimumScore)
            bindings.append(Dataset.scanJoinedBefore)
            return bindings
        }
        func decodeRow(_ row: PostgresRow) throws -> PostgresNIOSystem.Row {
            try row.decode(PostgresNIOSystem.Row.self)
        }
    }

    struct All: PostgresPreparedStatement {
        static let sql = "SELECT id, name, age, email, joined, score FROM users"
        func makeBindings() throws -> PostgresBindings { PostgresBindings() }
        func decodeRow(_ row: PostgresRow) throws -> PostgresNIOSystem.Row {
            try row.decode(PostgresNIOSystem.Row.self)
        }
    }

    struct SetScore: PostgresPreparedStatement {
        static let sql = "UPDATE users SET score = $1 WHERE id = $2"
        typealias Row = ()
        let score: Double
        let id: Int
        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 2)
            bindings.append(score)
            bindings.append(id)
            return bindings
        }
        func decodeRow(_ row: PostgresRow) throws -> Row {}
    }

    struct DeleteAll: PostgresPreparedStatement {
        static let sql = "DELETE FROM users"
        typealias Row = ()
        func makeBindings() throws -> PostgresBindings { PostgresBindings() }
        func decodeRow(_ row: PostgresRow) throws -> Row {}
    }

    private static func count(_ connection: PostgresConnection) async throws -> Int {
        let rows = try await connection.query("SELECT count(*) FROM users", logger: Server.logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// Runs a statement that returns no rows, to its end. (The command-tag overload of `execute`
    /// stops at a precondition in PostgresNIO 1.33.2, so the row sequence is drained instead.)
    private static func run<Statement: PostgresPreparedStatement>(
        _ statement: Statement, on connection: PostgresConnection
    ) async throws where Statement.Row == () {
        for try await _ in try await connection.execute(statement, logger: Server.logger) {}
    }

    private static func collect<S: AsyncSequence>(_ rows: S) async throws -> [Row] where S.Element == Row {
        var result: [Row] = []
        for try await row in rows { result.append(row) }
        return result
    }

    /// A connection over an empty users table in `namespace`.
    private func emptyTable(_ namespace: String) async throws -> PostgresConnection {
        try await Server.createNamespace(namespace)
        let connection = try await Server.connect(namespace: namespace)
        try await connection.query(PostgresQuery(unsafeSQL: UsersTable.create), logger: Server.logger)
        try await connection.query(PostgresQuery(unsafeSQL: UsersTable.index), logger: Server.logger)
        return connection
    }

    private func filledTable(_ data: Dataset, _ namespace: String) async throws -> PostgresConnection {
        let connection = try await emptyTable(namespace)
        try await Self.run(InsertAll(rows: data.rows), on: connection)
        try Expect.count(try await Self.count(connection), data.count, "filling the table")
        return connection
    }

    func trial(_ workload: Workload, data: Dataset, namespace: String) async throws -> Trial {
        let logger = Server.logger
        switch workload {
        case .insert:
            let connection = try await emptyTable(namespace)
            return Trial(
                path: "one prepared INSERT … SELECT unnest($1…$5) of five arrays (one statement)",
                prepare: { _ in try await connection.query("TRUNCATE users RESTART IDENTITY", logger: logger) },
                run: { _ in try await Self.run(InsertAll(rows: data.rows), on: connection) },
                check: { _, _ in
                    try Expect.count(try await Self.count(connection), data.count, "insert, counted back")
                }, finish: { try await connection.close() })
        case .fetchIndexed:
            let connection = try await filledTable(data, namespace)
            return Trial(
                path: "prepared SELECT … WHERE name = $1 ORDER BY age",
                run: { _ in
                    try await Self.collect(connection.execute(ByName(name: Dataset.indexedName), logger: logger))
                },
                check: { rows, _ in try Expect.indexed(names: rows.map(\.1), ages: rows.map(\.2), of: data) },
                finish: { try await connection.close() })
        case .fetchUnique:
            let connection = try await filledTable(data, namespace)
            return Trial(
                path: "prepared SELECT … WHERE email = $1 LIMIT 1",
                run: { repetition in
                    let email = data.rows[data.lookupTarget(repetition)].email
                    return try await Self.collect(connection.execute(ByEmail(email: email), logger: logger))
                },
                check: { rows, repetition in
                    try Expect.unique(emails: rows.map(\.3), repetition: repetition, of: data)
                }, finish: { try await connection.close() })
        case .fetchScan:
            let connection = try await filledTable(data, namespace)
            return Trial(
                path: "prepared SELECT … WHERE age >= $1 AND score >= $2 AND joined < $3",
                run: { _ in try await Self.collect(connection.execute(Scan(), logger: logger)).map(Self.userRow) },
                check: { rows, _ in try Expect.scan(rows, of: data) }, finish: { try await connection.close() })
        case .updateOne:
            let connection = try await filledTable(data, namespace)
            return Trial(
                path: "prepared UPDATE users SET score = $1 WHERE id = $2 (autocommit)",
                run: { repetition -> Int in
                    let id = data.lookupTarget(repetition) + 1
                    try await Self.run(SetScore(score: Double(repetition) + 0.5, id: id), on: connection)
                    return id
                },
                check: { (id: Int, repetition: Int) in
                    let rows = try await connection.query(
                        "SELECT score, email FROM users WHERE id = \(id)", logger: logger)
                    var found = 0
                    for try await (score, email) in rows.decode((Double, String).self) {
                        found += 1
                        if score != Double(repetition) + 0.5 || email != data.rows[id - 1].email {
                            throw WrongResult("update-one: the change was not stored")
                        }
                    }
                    try Expect.count(found, 1, "update-one, read back")
                }, finish: { try await connection.close() })
        case .open:
            try await filledTable(data, namespace).close()
            return Trial(
                path: "PostgresConnection.connect + SET search_path + prepared SELECT of every row",
                run: { _ -> (PostgresConnection, [Row]) in
                    let connection = try await Server.connect(namespace: namespace)
                    return (connection, try await Self.collect(connection.execute(All(), logger: logger)))
                },
                check: { opened, _ in
                    try await opened.0.close()
                    try Expect.count(opened.1.count, data.count, "open")
                })
        case .deleteAll:
            let connection = try await emptyTable(namespace)
            return Trial(
                path: "prepared DELETE FROM users (autocommit)",
                prepare: { _ in
                    // The rows the repetition before deleted no longer take pages (see `ModelStoreSystem`).
                    try await connection.query("VACUUM users", logger: logger)
                    try await Self.run(InsertAll(rows: data.rows), on: connection)
                },
                run: { _ in try await Self.run(DeleteAll(), on: connection) },
                check: { _, _ in
                    try Expect.count(try await Self.count(connection), 0, "delete-all, counted back")
                }, finish: { try await connection.close() })
        }
    }
}
