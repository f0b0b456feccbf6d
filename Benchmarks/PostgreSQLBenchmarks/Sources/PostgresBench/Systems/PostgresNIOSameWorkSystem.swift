import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgresNIO

/// Raw PostgresNIO doing exactly the work of the PostgreSQL adapter's statements, with nothing of
/// ModelStore around them: the same statement texts, sent prepared, on one connection, over the
/// namespace the adapter created and filled (its tables, expression indexes, meta and history).
///
/// `update-one` is the adapter's one statement: the versioned `UPDATE` that checks every value it
/// read, takes the history's next number and inserts the history row; when that row takes the
/// history past the adapter's default limit, the adapter's trim follows, as the adapter runs it. The fetches are its
/// `SELECT`s, rows decoded into structs. The texts are the adapter's (`SQL` below), as its store
/// sent them to the server (PostgreSQL's `log_statement = all`), with the namespace put in.
struct PostgresNIOSameWorkSystem: BenchSystem {
    func notApplicable(_ workload: Workload) -> String? {
        [.fetchUnique, .fetchIndexed, .updateOne].contains(workload)
            ? nil : "measured for the goal's workloads only: fetch-unique, fetch-indexed and update-one"
    }

    /// A statement whose name and text are chosen at run time (PostgresNIO takes both from the
    /// statement's type), read from the task-local ``text`` while `execute` starts.
    struct Named: PostgresPreparedStatement {
        typealias Row = PostgresRow
        struct Text: Sendable {
            let name: String
            let sql: String
        }
        @TaskLocal static var text = Text(name: "", sql: "")
        static var name: String { text.name }
        static var sql: String { text.sql }
        let bindings: PostgresBindings
        func makeBindings() -> PostgresBindings { bindings }
        func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
    }

    /// Runs `sql` prepared under `name` with `bindings` and returns its rows.
    private static func run(
        _ sql: String, named name: String, _ bindings: PostgresBindings, on connection: PostgresConnection
    ) async throws -> [PostgresRow] {
        let rows = try await Named.$text.withValue(Named.Text(name: name, sql: sql)) {
            try await connection.execute(Named(bindings: bindings), logger: Server.logger)
        }
        var result: [PostgresRow] = []
        for try await row in rows { result.append(row) }
        return result
    }

    /// The namespace filled by the adapter, untimed; returns a raw connection to it.
    private func filled(_ data: Dataset, _ namespace: String) async throws -> PostgresConnection {
        try await Server.dropNamespace(namespace)
        let container = try ModelContainer(
            for: User.self, configurations: .postgreSQL(Server.storeURL(), namespace: namespace))
        let ids = try ModelContext(container).insert(User.self, rows: data.rows.map(UserQueries.assignments))
        try Expect.count(ids.count, data.count, "filling the store")
        return try await Server.connect(namespace: namespace)
    }

    func trial(_ workload: Workload, data: Dataset, namespace: String) async throws -> Trial {
        let connection = try await filled(data, namespace)
        let sql = SQL(namespace: namespace)
        switch workload {
        case .fetchUnique:
            return Trial(
                path: "the adapter's prepared SELECT by email (LIMIT 1), rows decoded",
                run: { repetition in
                    var bindings = PostgresBindings()
                    bindings.append(data.rows[data.lookupTarget(repetition)].email)
                    return try await Self.run(sql.byEmail, named: "same_1", bindings, on: connection).map(Self.user)
                },
                check: { users, repetition in
                    try Expect.unique(emails: users.map(\.email), repetition: repetition, of: data)
                }, finish: { try await connection.close() })
        case .fetchIndexed:
            return Trial(
                path: "the adapter's prepared SELECT by name, ordered by age, rows decoded",
                run: { _ in
                    var bindings = PostgresBindings()
                    bindings.append(Dataset.indexedName)
                    return try await Self.run(sql.byName, named: "same_2", bindings, on: connection).map(Self.user)
                },
                check: { users, _ in
                    try Expect.indexed(names: users.map(\.name), ages: users.map(\.age), of: data)
                }, finish: { try await connection.close() })
        case .updateOne:
            return updateOne(data, sql, connection)
        default:
            try await connection.close()
            throw NotApplicable(notApplicable(workload) ?? "")
        }
    }

    /// What the raw side knows of a row, as a context knows what it read: its version and values.
    private final class Stored: @unchecked Sendable {
        // Safety: read and written only by the trial's repetitions, which run one after another.
        var versions: [Int64: Int64] = [:]
        var scores: [Int64: Double] = [:]
    }

    /// The adapter's one statement of a save that changes one model's score: the versioned
    /// `UPDATE` checking every value read, the history's number and its row, as one autocommit
    /// statement; its parameters bound as the adapter binds them.
    private func updateOne(_ data: Dataset, _ sql: SQL, _ connection: PostgresConnection) -> Trial {
        let stored = Stored()
        return Trial(
            path: "the adapter's one prepared statement: versioned UPDATE, history number and row (autocommit)",
            run: { repetition -> (Int64, Double) in
                let index = data.lookupTarget(repetition)
                let key = Int64(index + 1)
                let row = data.rows[index]
                let version = stored.versions[key] ?? 1
                let score = Double(repetition) + 0.5
                var bindings = PostgresBindings()
                bindings.append(key)
                bindings.append(version)
                for new in [true, false] {
                    bindings.append(row.name)
                    bindings.append(row.age)
                    bindings.append(row.email)
                    bindings.append(row.joined.timeIntervalSinceReferenceDate)
                    bindings.append(new ? score : stored.scores[key] ?? row.score)
                }
                bindings.append(Date().timeIntervalSince1970)
                bindings.appendNull()
                bindings.append("[{\"k\":\"u\",\"e\":\"User\",\"p\":\(key),\"u\":[\"score\"]}]")
                let rows = try await Self.run(sql.updateOne, named: "same_3", bindings, on: connection)
                guard let first = rows.first else { throw WrongResult("update-one: the statement returned no row") }
                let (written, number, total, before) = try first.decode((Int64, Int64?, Int64?, Int64?).self)
                guard number != nil, let total, let before else {
                    throw WrongResult("update-one: the history row was not written")
                }
                if total - before > SQL.historyLimit {
                    // The adapter's trim after its commit, as its own autocommit statement.
                    var cut = PostgresBindings()
                    cut.append(total - SQL.historyLimit * 9 / 10)
                    _ = try await connection.query(
                        PostgresQuery(unsafeSQL: sql.trim, binds: cut), logger: Server.logger
                    ).collect()
                }
                stored.versions[key] = written
                stored.scores[key] = score
                return (key, score)
            },
            check: { (changed: (Int64, Double), _) in
                var bindings = PostgresBindings()
                bindings.append(changed.0)
                let rows = try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT \"score\" FROM \"User\" WHERE \"_pk\" = $1", binds: bindings),
                    logger: Server.logger)
                var found = 0
                for try await score in rows.decode(Double.self) {
                    found += 1
                    if score != changed.1 { throw WrongResult("update-one: the change was not stored") }
                }
                try Expect.count(found, 1, "update-one, read back")
            }, finish: { try await connection.close() })
    }

    /// A row of the adapter's `SELECT`: the key, the version, then the five columns.
    private static func user(_ row: PostgresRow) throws -> UserRow {
        let (_, _, name, age, email, joined, score) = try row.decode(
            (Int64, Int64, String, Int, String, Double, Double).self)
        return UserRow(
            name: name, age: age, email: email, joined: Date(timeIntervalSinceReferenceDate: joined), score: score)
    }
}

/// The adapter's statement texts for the `User` table of a namespace, as its store sends them.
struct SQL {
    let namespace: String

    private var table: String { "\"\(namespace)\".\"User\"" }
    private var meta: String { "\"\(namespace)\".\"modelstore_meta\"" }
    private var history: String { "\"\(namespace)\".\"modelstore_history\"" }
    private var columns: String {
        "t.\"_pk\", t.\"_version\", t.\"name\", t.\"age\", t.\"email\", t.\"joined\", t.\"score\""
    }

    /// The adapter's comparison key of a text column or parameter, which its indexes are keyed by:
    /// the NFC form under `COLLATE "C"`, ASCII values as they are (its `TableLayout.textKey`).
    static func textKey(_ expression: String) -> String {
        "(CASE WHEN octet_length(\(expression)) = length(\(expression)) THEN \(expression) "
            + "ELSE normalize(\(expression), NFC) END) COLLATE \"C\""
    }

    var byEmail: String {
        "SELECT \(columns) FROM \(table) t WHERE \(Self.textKey("t.\"email\"")) = \(Self.textKey("$1")) "
            + "ORDER BY t.\"_pk\" LIMIT 1"
    }

    var byName: String {
        "SELECT \(columns) FROM \(table) t WHERE \(Self.textKey("t.\"name\"")) = \(Self.textKey("$1")) "
            + "ORDER BY t.\"age\" ASC NULLS FIRST, t.\"_pk\""
    }

    /// The history limit of the adapter's default configuration, in changes.
    static let historyLimit: Int64 = 10_000

    /// The adapter's trim of its history to nine tenths of the limit (its `HistoryLog.trim`), `$1`
    /// the running total to keep from.
    var trim: String {
        "WITH doomed AS (DELETE FROM \(history) WHERE number <= coalesce((SELECT number FROM \(history) WHERE "
            + "cumulative >= $1 ORDER BY number LIMIT 1), 0) RETURNING number) UPDATE \(meta) SET value = "
            + "greatest(value::bigint, (SELECT max(number) FROM doomed))::text WHERE key = 'historyExpiredThrough' "
            + "AND EXISTS (SELECT 1 FROM doomed)"
    }

    var updateOne: String {
        "WITH w AS (UPDATE \(table) SET \"_version\" = \"_version\" + 1, \"name\" = $3, \"age\" = $4, \"email\" = $5, "
            + "\"joined\" = $6, \"score\" = $7 WHERE \"_pk\" = $1 AND \"_version\" = $2 AND \"name\" IS NOT DISTINCT FROM $8 "
            + "AND \"age\" IS NOT DISTINCT FROM $9 AND \"email\" IS NOT DISTINCT FROM $10 AND float8send(\"joined\") "
            + "IS NOT DISTINCT FROM float8send($11::double precision) AND float8send(\"score\") IS NOT DISTINCT FROM "
            + "float8send($12::double precision) RETURNING \"_version\"), n AS (UPDATE \(meta) SET value = "
            + "(value::bigint + 1)::text WHERE key = 'historyLast' AND EXISTS (SELECT 1 FROM w) RETURNING "
            + "value::bigint AS number, txid_current() AS transaction), h AS (INSERT INTO \(history) (number, changes, "
            + "cumulative, committed, author, body) SELECT n.number, 1, 1 + coalesce(p.cumulative, CASE WHEN "
            + "n.number - 1 <= (SELECT value::bigint FROM \(meta) WHERE key = 'historyExpiredThrough') THEN "
            + "coalesce((SELECT cumulative FROM \(history) ORDER BY number DESC LIMIT 1), 0) END), "
            + "$13::double precision, $14::text, $15::text::json FROM n LEFT JOIN \(history) p ON p.number = "
            + "n.number - 1 RETURNING cumulative, coalesce((SELECT cumulative - changes FROM \(history) ORDER BY "
            + "number LIMIT 1), cumulative - changes) AS previous_total) SELECT w.\"_version\", n.number, "
            + "h.cumulative, h.previous_total FROM w LEFT JOIN n ON true LEFT JOIN h ON true"
    }
}
