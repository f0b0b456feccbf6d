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
    /// attribute): each change is then the line ``body(of:)`` writes for it, `{"k":"d","e":…,"p":…}`.
    /// The statement takes the counter's lock as ``numberTaking(ifAnyRowIn:)`` does, after the
    /// namespace's deferred constraints are checked; when its snapshot was too old to record the
    /// transaction (see ``predecessor``), the changes are recorded under the taken number by
    /// ``record(_:author:limit:number:on:)``. The history is trimmed to `limit` afterwards.
    func deleteEveryRow(
        of layout: TableLayout, storeIdentifier: String, author: String?, limit: Int?, on session: Session
    ) async throws -> [Int64] {
        try await checkDeferredConstraints(session)
        let encodedEntity = String(decoding: try JSONEncoder().encode(layout.entity.name), as: UTF8.self)
        // The line of key 0, cut around its key: the server writes each key between the two parts.
        let template = Self.line("d", encodedEntity: encodedEntity, key: "0")
        let cut = template.index(before: template.index(before: template.endIndex))
        var binds = PostgresBindings()
        Self.bindCommitted(author: author, to: &binds)
        binds.append(String(template[..<cut]))
        binds.append(String(template[template.index(after: cut)...]))
        let key = TableLayout.key
        let rows = try await session.query(
            "WITH d AS (DELETE FROM \(layout.table) RETURNING \(key)), n AS (\(numberTaking(ifAnyRowIn: "d"))), "
                + "c AS (SELECT count(*) AS changes, '[' || string_agg($3::text || \(key)::text || $4::text, ',') "
                + "|| ']' AS body FROM d), "
                + "h AS (\(insertInto)SELECT n.number, c.changes, c.changes + p.cumulative, $1::double precision, "
                + "$2::text, c.body::json FROM n, c, \(predecessor) \(returningTotals)) "
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
