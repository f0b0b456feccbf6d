import Foundation
@_spi(AdapterKit) import ModelStore
import PostgresNIO

extension HistoryLog {
    /// Deletes every row of `layout`'s table with a plain `DELETE` and records their deletions as
    /// one history transaction; returns the deleted keys as runs of consecutive keys, ascending
    /// (none, and nothing recorded, when the table was empty).
    ///
    /// The caller MUST have locked the table against other writers in this transaction, before
    /// this call (``lockAgainstWriters(_:on:)``): under the lock no other transaction writes the
    /// table until this one ends, so the keys read are exactly the rows deleted. A row another
    /// session inserted and committed before the lock was granted is deleted and reported, one it
    /// inserts later waits for the lock and stays.
    ///
    /// Only for an entity whose deletions need no tombstone (no `.preserveValueOnDeletion`
    /// attribute). The keys never travel one by one. When they are one run (no model of the entity
    /// was ever deleted alone, the common case), the smallest and largest key come from the primary
    /// key's index, and the `DELETE`'s own count of rows says whether every key between them was
    /// there; nothing scans the table but the `DELETE`. Otherwise that `DELETE` is rolled back (to
    /// a savepoint), and one statement reads the runs and deletes the rows
    /// (``deleteEveryRowReadingRuns(of:author:limit:on:)``). The row's body is of format 3 (see
    /// ``bodyFormat``), one line for every deletion, `{"v":3,"c":[{"k":"d","e":"User","rs":[[1,100000]]}]}`,
    /// which readers take as the deletions format 1 listed one per line
    /// (`{"k":"d","e":"User","p":key}`), in ascending order; the row counts one change per key.
    func deleteEveryRow(
        of layout: TableLayout, author: String?, limit: Int?, on session: Session
    ) async throws -> [ClosedRange<Int64>] {
        let (key, table) = (TableLayout.key, layout.table)
        guard let ends = try await session.query("SELECT min(\(key)), max(\(key)) FROM \(table)").first else {
            return []
        }
        let (first, last) = try ends.decode((Int64?, Int64?).self)
        guard let first, let last else { return [] }
        // Keys are distinct, so `last - first + 1` rows between them are every key between them.
        let (span, overflow) = last.subtractingReportingOverflow(first)
        try await session.execute("SAVEPOINT modelstore_every_row")
        let deleted = try await session.changedRows("DELETE FROM \(table)")
        guard !overflow, deleted > 0, Int64(deleted) - 1 == span else {
            try await session.execute("ROLLBACK TO SAVEPOINT modelstore_every_row")
            return try await deleteEveryRowReadingRuns(of: layout, author: author, limit: limit, on: session)
        }
        let (start, end) = Self.runsBody(entityName: layout.entity.name)
        _ = try await record(
            body: start + "[\(first),\(last)]" + end, changes: Int64(deleted), author: author, limit: limit,
            number: nil, on: session)
        return [first...last]
    }

    /// Deletes every row of `layout`'s table and records their deletions as in
    /// ``deleteEveryRow(of:author:limit:on:)``, in one statement that reads the keys as runs and
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

    /// Locks `layout`'s table until the transaction ends against every other writer (and every
    /// other lock of this mode), not against readers: `SHARE ROW EXCLUSIVE`, which waits for the
    /// transactions that are writing the table to end, and makes later writers wait for this one.
    /// Taken first in the transaction that deletes every row (see
    /// ``deleteEveryRow(of:author:limit:on:)``), before any row lock, so that it waits for nothing
    /// while holding anything another writer of the table may need.
    func lockAgainstWriters(_ layout: TableLayout, on session: Session) async throws {
        try await session.execute("LOCK TABLE \(layout.table) IN SHARE ROW EXCLUSIVE MODE")
    }

    /// The body of a format 3 row of deletions of runs of keys of one entity, before and after the
    /// runs (`[first,last]`, separated by commas).
    static func runsBody(entityName: String) -> (start: String, end: String) {
        ("{\"v\":\(bodyFormat),\"c\":[{\"k\":\"d\",\"e\":\(jsonString(entityName)),\"rs\":[", "]}]}")
    }
}
