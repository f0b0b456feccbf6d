import Foundation
import ModelStore
import PostgresNIO
import Synchronization

/// Updates of many rows of one table in one statement each, instead of one statement per row.
extension RowWriter {
    /// How many rows of one table make ``updateRows(_:versions:skipping:)`` write them in one
    /// statement: fewer cost the savepoint's two round trips and save little.
    static let batchUpdateThreshold = 3

    /// Rewrites the rows it can of `snapshots` in multi-row statements, each row only at the version
    /// the context read when it read one (as the one-row path), raising it; returns the new version
    /// of every row it wrote. The rows it did
    /// not write (it was not asked to, or the row is not at that version, or gone) are left to the
    /// caller's one-row path, which decides between a conflict, a comparison by value and not found.
    ///
    /// A row qualifies when it is not in `skipping` (rows whose previous
    /// values the caller's own `UPDATE` returns), its table has no join table (their rows are
    /// replaced per row), every value binds as its column's own type (as the one-row path's prepared
    /// statement needs too), and at least ``batchUpdateThreshold`` rows of its table qualify. The
    /// statement is
    ///
    ///     UPDATE t SET "_version" = t."_version" + 1, "a" = v.c0, …
    ///     FROM (VALUES ($1::bigint, $2::bigint, $3::text, …), …) AS v(k, r, c0, …)
    ///     WHERE t."_pk" = ANY($n) AND t."_pk" = v.k AND (v.r IS NULL OR t."_version" = v.r)
    ///     RETURNING t."_pk", t."_version"
    ///
    /// (every parameter cast to its column's type, so a column of `NULL`s has one), with as many
    /// rows as ``parameterLimit`` allows. The last parameter, `$n`, is the rows' keys again, as an
    /// array: the server's planner prices an index probe per row of the `VALUES` above a scan of
    /// the whole table, and joins them by hashing every row of the table (20 ms for 1,000 rows of
    /// 100,000, all in its cache), where `_pk = ANY($n)` reads the 1,000 rows through the key's
    /// index first (a few milliseconds). Each runs under a savepoint: when a unique index refuses
    /// it, it is rolled back and its rows go to the one-row path, whose error names the model.
    ///
    /// The rows of a statement are padded with rows of `NULL`s, which match no row, to the next
    /// power of two (``paddedRowCount(_:limit:)``), so a table has a few texts that are kept
    /// prepared (``Session/query(prepared:_:)``) instead of a text per row count that the server
    /// parses and plans on every save.
    func updateRows(
        _ snapshots: [DefaultSnapshot], versions: [PersistentIdentifier: Int64], skipping: Set<PersistentIdentifier>
    ) async throws -> [PersistentIdentifier: Int64] {
        var byEntity: [String: [(snapshot: DefaultSnapshot, key: Int64, read: Int64?)]] = [:]
        var counts: [PersistentIdentifier: Int] = [:]
        for snapshot in snapshots { counts[snapshot.persistentIdentifier, default: 0] += 1 }
        for snapshot in snapshots {
            let id = snapshot.persistentIdentifier
            // A model listed twice is written twice, in order, by the one-row path.
            guard counts[id] == 1, !skipping.contains(id), let key = localKey(id),
                let layout = layouts[id.entityName], layout.joinTables.isEmpty,
                layout.columns.allSatisfy({ $0.type?.bindsAsItself(snapshot.values[$0.slot]) ?? true })
            else { continue }
            byEntity[id.entityName, default: []].append((snapshot, key, versions[id]))
        }
        var written: [PersistentIdentifier: Int64] = [:]
        for (name, rows) in byEntity.sorted(by: { $0.key < $1.key }) where rows.count >= Self.batchUpdateThreshold {
            let layout = try layout(name)
            let perStatement = Self.rowsPerUpdate(layout)
            var start = rows.startIndex
            while start < rows.endIndex {
                let end = min(start + perStatement, rows.endIndex)
                for (key, version) in try await updateRows(rows[start..<end], layout: layout) {
                    written[reader.identifier(name, key)] = version
                }
                start = end
            }
        }
        return written
    }

    /// The most rows one multi-row `UPDATE` of `layout`'s table writes: two parameters a row (key and
    /// version read) and one a column, and one more for the statement, within ``parameterLimit``.
    static func rowsPerUpdate(_ layout: TableLayout) -> Int {
        max(1, (Self.parameterLimit - 1) / (2 + layout.columns.count))
    }

    /// The rows a statement of `count` rows is padded to: the least power of two that is not
    /// smaller, but no more than `limit` (the most rows a statement takes) unless `count` is.
    static func paddedRowCount(_ count: Int, limit: Int) -> Int {
        guard count > 1 else { return count }
        let power = 1 << (Int.bitWidth - (count - 1).leadingZeroBitCount)
        return max(count, min(power, limit))
    }

    /// One multi-row `UPDATE` (see ``updateRows(_:versions:skipping:)``): the keys and new versions
    /// of the rows it wrote; none when a unique index refused it (rolled back to its savepoint).
    private func updateRows(
        _ rows: ArraySlice<(snapshot: DefaultSnapshot, key: Int64, read: Int64?)>, layout: TableLayout
    ) async throws -> [(key: Int64, version: Int64)] {
        let padded = Self.paddedRowCount(rows.count, limit: Self.rowsPerUpdate(layout))
        var binds = PostgresBindings()
        for row in rows {
            binds.append(row.key)
            if let read = row.read { binds.append(read) } else { binds.appendNull() }
            for column in layout.columns { try bind(row.snapshot, column, layout: layout, to: &binds) }
        }
        // Rows of NULLs: `t._pk = v.k` is never true for them.
        for _ in rows.count..<padded {
            for _ in 0..<(2 + layout.columns.count) { binds.appendNull() }
        }
        binds.append(rows.map(\.key))
        let sql = Self.updateText(layout, rows: padded)
        try await session.execute("SAVEPOINT modelstore_update")
        let result: [PostgresRow]
        do {
            result = try await session.query(prepared: sql, binds)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            try await session.execute("ROLLBACK TO SAVEPOINT modelstore_update")
            return []
        }
        try await session.execute("RELEASE SAVEPOINT modelstore_update")
        return try result.map { row in
            let cells = row.makeRandomAccess()
            return (try cells[0].decode(Int64.self), try cells[1].decode(Int64.self))
        }
    }

    /// The text of a multi-row `UPDATE` of `rows` rows of `layout`'s table (see
    /// ``updateRows(_:versions:skipping:)``). Each row binds one parameter a cell, so the text depends
    /// only on the table, its columns and the row count: it is made once per process and kept
    /// (``updateTexts``), where making it again took milliseconds for a thousand rows of a few
    /// columns, on every save.
    static func updateText(_ layout: TableLayout, rows padded: Int) -> String {
        let types = ["bigint", "bigint"] + layout.columns.map { $0.type?.declaration ?? "bigint" }
        let key =
            layout.table + " " + String(padded) + " "
            + zip(layout.columns.map(\.quoted), types.dropFirst(2)).map { $0 + " " + $1 }.joined(separator: ",")
        if let known = updateTexts.withLock({ $0[key] }) { return known }
        let tuples = (0..<padded).map { row in
            "("
                + types.enumerated().map { "$\(row * types.count + $0.offset + 1)::\($0.element)" }
                .joined(separator: ", ") + ")"
        }
        let names = ["k", "r"] + layout.columns.indices.map { "c\($0)" }
        let assignments =
            ["\(TableLayout.version) = t.\(TableLayout.version) + 1"]
            + layout.columns.enumerated().map { "\($1.quoted) = v.c\($0)" }
        let sql =
            "UPDATE \(layout.table) t SET " + assignments.joined(separator: ", ") + " FROM (VALUES "
            + tuples.joined(separator: ", ") + ") AS v(" + names.joined(separator: ", ") + ") "
            + "WHERE t.\(TableLayout.key) = ANY($\(padded * types.count + 1)::bigint[]) "
            + "AND t.\(TableLayout.key) = v.k AND (v.r IS NULL OR t.\(TableLayout.version) = v.r) "
            + "RETURNING t.\(TableLayout.key), t.\(TableLayout.version)"
        updateTexts.withLock { texts in
            // A bound on what a process keeps: a few texts per table in use, by its row counts.
            if texts.count >= 256 { texts.removeAll() }
            texts[key] = sql
        }
        return sql
    }

    /// The texts ``updateText(_:rows:)`` made, by table, row count and columns.
    private static let updateTexts = Mutex<[String: String]>([:])
}
