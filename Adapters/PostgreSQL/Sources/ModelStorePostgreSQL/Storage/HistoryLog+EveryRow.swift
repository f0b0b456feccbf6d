import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

extension HistoryLog {
    /// Deletes every row of `layout`'s table with a plain `DELETE` and records their deletions as
    /// one history transaction; returns the deleted keys as runs of consecutive keys, ascending
    /// (none, and nothing recorded, when the table was empty). `joinTables` (the entity's own, whose
    /// rows name the deleted ones as owners) are emptied first.
    ///
    /// First of all it locks the table against other writers until the transaction ends
    /// (``lockAgainstWriters(_:)``): under the lock no other transaction writes the table, so the
    /// keys read are exactly the rows deleted. A row another session inserted and committed before
    /// the lock was granted is deleted and reported, one it inserts later waits for the lock and
    /// stays. The caller MUST call this first in its transaction (nothing held yet that another
    /// writer of the table may need while this one waits for the lock).
    ///
    /// Only for an entity whose deletions need no tombstone (no `.preserveValueOnDeletion`
    /// attribute) and whose rows nothing else refers to. The keys never travel one by one. When they
    /// are one run (no model of the entity was ever deleted alone, the common case), the smallest
    /// and largest key come from the primary key's index, and the server's count of the rows the
    /// `DELETE` deleted says whether every key between them was there; nothing scans the table but
    /// the `DELETE`. The statements run together (``Session/run(together:)``, one wait): the lock,
    /// `joinTables` emptied, a savepoint, the plain `DELETE` that also reads the ends of the keys
    /// (``deletingEveryRow(of:)``), and the statement that checks the count and records the run:
    /// the history's number, the row of that run and the trim to `limit` (``recordingEveryRow()``).
    /// Those two are kept prepared on the connection; the second, which is most of the planning,
    /// is planned once a connection. When the keys are not one run, or the recording statement could
    /// not know the running total before its number (see ``previousTotal``), everything after the
    /// savepoint is rolled back, and one statement reads the runs and deletes the rows
    /// (``deleteEveryRowReadingRuns(of:author:limit:on:)``).
    ///
    /// The row's body is of format 3 (see ``bodyFormat``), one line for every deletion,
    /// `{"v":3,"c":[{"k":"d","e":"User","rs":[[1,100000]]}]}`, which readers take as the deletions
    /// format 1 listed one per line (`{"k":"d","e":"User","p":key}`), in ascending order; the row
    /// counts one change per key.
    func deleteEveryRow(
        of layout: TableLayout, emptying joinTables: [String], author: String?, limit: Int?, on session: Session
    ) async throws -> [ClosedRange<Int64>] {
        var statements = [Session.Queued(sql: lockAgainstWriters(layout))]
        statements += joinTables.map { Session.Queued(sql: "DELETE FROM \($0)") }
        // Before the number is taken in the recording statement (see `takeNumber`).
        if hasDeferredConstraints { statements.append(Session.Queued(sql: "SET CONSTRAINTS ALL IMMEDIATE")) }
        statements.append(Session.Queued(sql: "SAVEPOINT modelstore_every_row"))
        let (start, end) = Self.runsBody(entityName: layout.entity.name)
        var binds = PostgresBindings()
        Self.bindCommitted(author: author, to: &binds)
        binds.append(start)
        binds.append(end)
        if let limit { binds.append(Int64(limit)) } else { binds.appendNull() }
        // Both kept prepared: the second's plan, which is most of the planning, is made once a
        // connection (see `deletingEveryRow`).
        statements.append(Session.Queued(sql: deletingEveryRow(of: layout.table), prepared: true))
        statements.append(Session.Queued(sql: recordingEveryRow(), binds: binds, prepared: true))
        let answers: [Session.Answered]
        do {
            answers = try await session.run(together: statements)
        } catch  where OneStatementUpdate.isMissingPredecessor(error) {
            // Only the recording statement writes history here; what came before the savepoint stands.
            try await session.execute("ROLLBACK TO SAVEPOINT modelstore_every_row")
            return try await deleteEveryRowReadingRuns(of: layout, author: author, limit: limit, on: session)
        }
        guard let row = answers.last?.rows.first else {
            return try await readingRunsInstead(layout, author, limit, session)
        }
        let (first, last, deleted, transaction) = try row.decode((Int64?, Int64?, Int64, Int64).self)
        session.transactionID.set(transaction)
        guard let first, let last else {
            // An empty table (under the lock, the DELETE's too): nothing deleted, nothing recorded.
            guard deleted == 0 else { return try await readingRunsInstead(layout, author, limit, session) }
            return []
        }
        // Keys are distinct, so `last - first + 1` rows between them are every key between them, and
        // then the run was recorded. (A server that counts no rows, `track_counts` off, reads the
        // runs every time, as exactly.)
        let (span, overflow) = last.subtractingReportingOverflow(first)
        guard !overflow, deleted > 0, deleted - 1 == span else {
            return try await readingRunsInstead(layout, author, limit, session)
        }
        return [first...last]
    }

    /// Rolls the DELETE's statement of ``deleteEveryRow(of:emptying:author:limit:on:)`` back to its
    /// savepoint, and deletes every row reading the runs.
    private func readingRunsInstead(
        _ layout: TableLayout, _ author: String?, _ limit: Int?, _ session: Session
    ) async throws -> [ClosedRange<Int64>] {
        try await session.execute("ROLLBACK TO SAVEPOINT modelstore_every_row")
        return try await deleteEveryRowReadingRuns(of: layout, author: author, limit: limit, on: session)
    }

    /// The statement of ``deleteEveryRow(of:emptying:author:limit:on:)`` that deletes every row of
    /// `table` with a plain `DELETE` (in a data-modifying common table expression, which PostgreSQL
    /// runs to its end after the statement's query), and in its query, in the same snapshot, reads
    /// the smallest and largest key (two probes of the primary key's index) and leaves them in
    /// ``everyRowFindings`` for ``recordingEveryRow()``, with the server's count of the rows the
    /// transaction deleted from `table` so far and the table's object id (one row, the findings, is
    /// its answer). Were that count read after the `DELETE`, the recording statement would find that
    /// no row was deleted: nothing would be recorded wrongly, the keys would be read as runs instead
    /// (see ``deleteEveryRow(of:emptying:author:limit:on:)``). No parameters. Its plan is the table's
    /// alone, so that the plan of the statement that records the history does not depend on the
    /// table (an `ANALYZE` of the table, which a large insert runs, makes PostgreSQL plan this one
    /// again).
    func deletingEveryRow(of table: String) -> String {
        let key = TableLayout.key
        let oid = "\(Self.literal(table))::regclass"
        return "WITH s AS (SELECT min(\(key)) AS lo, max(\(key)) AS hi FROM \(table)), d AS (DELETE FROM \(table)) "
            + "SELECT set_config('\(Self.everyRowFindings)', concat(lo, ',', hi, ',', "
            + "pg_stat_get_xact_tuples_deleted(\(oid)), ',', \(oid)::oid), true) FROM s"
    }

    /// The setting (local to the transaction) in which ``deletingEveryRow(of:)`` leaves what it found
    /// for ``recordingEveryRow()``: `smallest,largest,deleted,table` with the smallest and largest
    /// key of the table (both empty when it was empty), how many rows of the table the transaction
    /// had deleted before the statement, and the table's object id.
    static let everyRowFindings = "modelstore.every_row"

    /// The statement run right after ``deletingEveryRow(of:)``, which records what it deleted when
    /// that was one run of keys: from ``everyRowFindings`` and the server's count of the rows the
    /// transaction has deleted from the table (`pg_stat_get_xact_tuples_deleted`, which a prepared
    /// `DELETE`'s missing command tag leaves the only count), it learns how many rows the `DELETE`
    /// deleted; when they are every key from the smallest to the largest, it takes the next number
    /// as ``numberTaking(ifAnyRowIn:)`` does and inserts the history row of the run
    /// `[smallest,largest]` with as many changes as keys in it. Returns the smallest and largest key
    /// (`NULL` for an empty table), how many rows the `DELETE` deleted, and the transaction's id: the
    /// caller tells from them whether the run was recorded. Parameters: the committed time, the
    /// author, the body's start and end around the run (``runsBody(entityName:)``), and the history
    /// limit (`NULL` for none). The same text for every table, so one prepared statement serves them all.
    ///
    /// The trim to the limit is in the statement too, with the result of
    /// ``trim(total:before:limit:on:)`` after the insert, though the statement cannot see its own
    /// row (one snapshot): when the changes kept, this row's included, are over the limit, it deletes
    /// the rows up to the first whose running total reaches the cut (this row when no older one
    /// does), and raises `historyExpiredThrough` to that number; when that is this row's number, the
    /// row is not inserted at all, as the trim would have deleted it. When the statement cannot know
    /// the running total before its number (see ``previousTotal``), the row's total is `NULL`, and
    /// its `NOT NULL` fails the whole statement (``OneStatementUpdate/isMissingPredecessor(_:)``).
    func recordingEveryRow() -> String {
        "WITH g AS (SELECT nullif(a[1], '')::bigint AS lo, nullif(a[2], '')::bigint AS hi, "
            + "pg_stat_get_xact_tuples_deleted(a[4]::oid) - a[3]::bigint AS deleted FROM (SELECT "
            + "string_to_array(current_setting('\(Self.everyRowFindings)'), ',') AS a) c), "
            // One run: as many rows deleted as keys from the smallest to the largest.
            + "r AS (SELECT lo, hi, hi - lo + 1 AS changes FROM g WHERE deleted = hi - lo + 1), "
            + "n AS (\(numberTaking(ifAnyRowIn: "r"))), "
            + "v AS (SELECT n.number, r.lo, r.hi, r.changes, r.changes + \(previousTotal) AS total "
            + "FROM n CROSS JOIN r \(predecessorJoin)), "
            // Over the limit: what the history keeps, this row included, is more than the limit.
            + "k AS (SELECT v.number, v.total - $5::bigint * 9 / 10 AS cut FROM v WHERE v.total - coalesce("
            + "(SELECT cumulative - changes FROM \(self.table) ORDER BY number LIMIT 1), v.total - v.changes) "
            + "> $5::bigint), "
            + "x AS (SELECT coalesce((SELECT number FROM \(self.table) WHERE cumulative >= k.cut ORDER BY number "
            + "LIMIT 1), k.number) AS through FROM k), "
            + "d AS (DELETE FROM \(self.table) WHERE number <= (SELECT through FROM x)), "
            + "e AS (UPDATE \(metaTable) SET value = greatest(value::bigint, (SELECT through FROM x))::text "
            + "WHERE key = '\(Self.expiredKey)' AND EXISTS (SELECT 1 FROM x)), "
            + "h AS (\(insertInto)SELECT v.number, v.changes, v.total, $1::double precision, $2::text, "
            + "($3::text || '[' || v.lo::text || ',' || v.hi::text || ']' || $4::text)::json FROM v "
            + "WHERE NOT EXISTS (SELECT 1 FROM x WHERE x.through = v.number)) "
            + "SELECT g.lo, g.hi, g.deleted, txid_current() FROM g"
    }

    /// `text` as an SQL string literal.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// Deletes every row of `layout`'s table and records their deletions as in
    /// ``deleteEveryRow(of:emptying:author:limit:on:)``, in one statement that reads the keys as runs and
    /// deletes the rows with a plain `DELETE` (one snapshot; the caller holds the table's lock, as
    /// there, since in READ COMMITTED the `DELETE` would also follow a row that another transaction
    /// updates or deletes meanwhile). The server reads the runs as `min`, `max` and `count` of the
    /// key, and when they are not one run, the runs from the primary key's index. The statement
    /// takes the counter's lock as ``numberTaking(ifAnyRowIn:)`` does, after the namespace's
    /// deferred constraints are checked; when its snapshot was too old to record the transaction
    /// (see ``previousTotal``), the same body is recorded under the taken number by
    /// ``record(body:changes:author:limit:number:on:)``. The history is trimmed to `limit`
    /// afterwards.
    func deleteEveryRowReadingRuns(
        of layout: TableLayout, author: String?, limit: Int?, on session: Session
    ) async throws -> [ClosedRange<Int64>] {
        try await checkDeferredConstraints(session)
        let (start, end) = Self.runsBody(entityName: layout.entity.name)
        // The body around its runs, which the server writes between the two parts.
        var binds = PostgresBindings()
        Self.bindCommitted(author: author, to: &binds)
        binds.append(start)
        binds.append(end)
        let (key, table) = (TableLayout.key, layout.table)
        let rows = try await session.query(
            "WITH s AS (SELECT min(\(key)) AS lo, max(\(key)) AS hi, count(*) AS changes FROM \(table)), "
                // One run when the keys fill their span; else the runs, only then (a one-time filter).
                + "r AS (SELECT lo, hi FROM s WHERE changes > 0 AND hi - lo + 1 = changes UNION ALL "
                + "SELECT min(\(key)), max(\(key)) FROM (SELECT \(key), \(key) - row_number() OVER (ORDER BY \(key)) "
                + "AS run FROM \(table)) i WHERE (SELECT hi - lo + 1 <> changes FROM s) GROUP BY run), "
                + "d AS (DELETE FROM \(table)), n AS (\(numberTaking(ifAnyRowIn: "r"))), "
                + "c AS (SELECT (SELECT changes FROM s) AS changes, $3::text || string_agg('[' || lo::text || ',' "
                + "|| hi::text || ']', ',' ORDER BY lo) || $4::text AS body FROM r), "
                + "h AS (\(insertInto)SELECT n.number, c.changes, c.changes + \(previousTotal), $1::double precision, "
                + "$2::text, c.body::json FROM n CROSS JOIN c \(predecessorJoin) WHERE \(previousTotal) IS NOT NULL "
                + "\(returningTotals)) "
                + "SELECT (SELECT array_agg(lo ORDER BY lo) FROM r), (SELECT array_agg(hi ORDER BY lo) FROM r), "
                + "(SELECT changes FROM s), n.number, n.transaction, h.cumulative, h.previous_total "
                + "FROM n LEFT JOIN h ON true", binds)
        guard let row = rows.first else { return [] }
        let (starts, ends, changes, number, transaction, total, before) = try row.decode(
            ([Int64], [Int64], Int64, Int64, Int64, Int64?, Int64?).self)
        session.transactionID.set(transaction)
        let runs = zip(starts, ends).map { $0...$1 }
        if let total, let before {
            try await trim(total: total, before: before, limit: limit, on: session)
        } else {
            let body = start + runs.map { "[\($0.lowerBound),\($0.upperBound)]" }.joined(separator: ",") + end
            _ = try await record(
                body: body, changes: changes, author: author, limit: limit, number: number, on: session)
        }
        return runs
    }

    /// The statement that locks `layout`'s table until the transaction ends against every other
    /// writer (and every other lock of this mode), not against readers: `SHARE ROW EXCLUSIVE`, which
    /// waits for the transactions that are writing the table to end, and makes later writers wait
    /// for this one. Run first in the transaction that deletes every row (see
    /// ``deleteEveryRow(of:emptying:author:limit:on:)``), before any row lock, so that it waits for
    /// nothing while holding anything another writer of the table may need.
    func lockAgainstWriters(_ layout: TableLayout) -> String {
        "LOCK TABLE \(layout.table) IN SHARE ROW EXCLUSIVE MODE"
    }

    /// The body of a format 3 row of deletions of runs of keys of one entity, before and after the
    /// runs (`[first,last]`, separated by commas).
    static func runsBody(entityName: String) -> (start: String, end: String) {
        ("{\"v\":\(bodyFormat),\"c\":[{\"k\":\"d\",\"e\":\(jsonString(entityName)),\"rs\":[", "]}]}")
    }
}
