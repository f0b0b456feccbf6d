import Foundation
@_spi(AdapterKit) import ModelStore
import PostgresNIO

extension HistoryLog {
    /// Deletes every row of `layout`'s table and records their deletions as one history
    /// transaction, in one statement: the server writes the history row from the deleted keys
    /// itself, and returns the keys as one `bigint[]`, so neither the rows nor their changes
    /// travel one by one. Returns the deleted keys, in the order the server deleted them (empty,
    /// and nothing recorded, when the table was empty).
    ///
    /// Only for an entity whose deletions need no tombstone (no `.preserveValueOnDeletion`
    /// attribute). The row's body is of format 2 (see ``bodyFormat``): one line for every deletion,
    /// `{"v":2,"c":[{"k":"d","e":"User","ps":[keys]}]}`, with the keys in the order the server deleted
    /// the rows, which readers take as the deletions format 1 listed one per line
    /// (`{"k":"d","e":"User","p":key}`), in the same order; the row counts one change per key.
    /// The statement takes the counter's lock as ``numberTaking(ifAnyRowIn:)`` does, after the
    /// namespace's deferred constraints are checked; when its snapshot was too old to record the
    /// transaction (see ``previousTotal``), the changes are recorded under the taken number by
    /// ``record(_:author:limit:number:on:)``. The history is trimmed to `limit` afterwards.
    func deleteEveryRow(
        of layout: TableLayout, storeIdentifier: String, author: String?, limit: Int?, on session: Session
    ) async throws -> [Int64] {
        try await checkDeferredConstraints(session)
        let encodedEntity = String(decoding: try JSONEncoder().encode(layout.entity.name), as: UTF8.self)
        // The body around its keys, which the server writes between the two parts.
        var binds = PostgresBindings()
        Self.bindCommitted(author: author, to: &binds)
        binds.append("{\"v\":\(Self.bodyFormat),\"c\":[{\"k\":\"d\",\"e\":\(encodedEntity),\"ps\":[")
        binds.append("]}]}")
        let key = TableLayout.key
        let rows = try await session.query(
            "WITH d AS (DELETE FROM \(layout.table) RETURNING \(key)), n AS (\(numberTaking(ifAnyRowIn: "d"))), "
                + "c AS (SELECT count(*) AS changes, $3::text || string_agg(\(key)::text, ',') || $4::text "
                + "AS body FROM d), "
                + "h AS (\(insertInto)SELECT n.number, c.changes, c.changes + \(previousTotal), $1::double precision, "
                + "$2::text, c.body::json FROM n CROSS JOIN c \(predecessorJoin) WHERE \(previousTotal) IS NOT NULL "
                + "\(returningTotals)) "
                + "SELECT (SELECT array_agg(\(key)) FROM d), n.number, n.transaction, h.cumulative, h.previous_total "
                + "FROM n LEFT JOIN h ON true", binds)
        guard let row = rows.first else { return [] }
        let (keys, number, transaction, total, before) = try row.decode(
            ([Int64], Int64, Int64, Int64?, Int64?).self)
        session.transactionID.set(transaction)
        if let total, let before {
            try await trim(total: total, before: before, limit: limit, on: session)
        } else {
            let changes = keys.map {
                StoreHistoryRecord.Change(
                    .delete, .identifier(for: storeIdentifier, entityName: layout.entity.name, primaryKey: $0))
            }
            _ = try await record(changes, author: author, limit: limit, number: number, on: session)
        }
        return keys
    }
}
