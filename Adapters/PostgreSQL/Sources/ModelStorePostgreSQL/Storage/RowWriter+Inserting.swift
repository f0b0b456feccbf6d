import Foundation
import ModelStore
import PostgresNIO

/// Inserts: many rows per statement, and the join rows of to-many relationships in one statement per table.
extension RowWriter {
    /// The most parameters one statement may bind (PostgreSQL's protocol counts them in 16 bits).
    static let parameterLimit = 65_535

    /// How many new rows of a table make an insert refresh the table's statistics (`ANALYZE`, after
    /// the commit, on the same connection: see ``Session/AfterCommit``; inside the transaction it
    /// would hold its lock on the table until the commit, where two bulk inserts into two tables in
    /// opposite orders could deadlock). An index on an expression, as text columns' indexes are, has no
    /// statistics until the table is analyzed; without them PostgreSQL guesses that an equality
    /// matches many rows and may answer `email == x` with `fetchLimit` by walking the primary key
    /// instead of the index, reading every row. Autovacuum analyzes a table only about a minute
    /// after it grew by a tenth.
    ///
    /// Only an insert that at least doubles the table (by its statistics' row count, or into a table
    /// never analyzed) analyzes it: `ANALYZE` samples up to 30,000 rows whatever the insert's size
    /// (1.5 s for a 100k-row table with a text index, on a loaded machine), so analyzing after every
    /// batch of 1,000 into a growing table made filling it in batches cost the square of its size.
    /// Doubling keeps the statistics within a factor of two of the table, which is all the planner
    /// needs to prefer the index for an equality on a unique value.
    static let analyzeThreshold = 1_000

    /// Inserts rows; returns each row's version (1).
    ///
    /// The rows of an entity go in multi-row `INSERT`s, as many rows per statement as
    /// ``parameterLimit`` allows, and its to-many relationships in one `INSERT … SELECT unnest(…)`
    /// per join table. A batch runs under a savepoint: when a unique index refuses it, the batch is
    /// rolled back to the savepoint and its rows inserted one by one, so that the error names the
    /// model whose values were refused. An entity with ``analyzeThreshold`` new rows or more is
    /// analyzed after the commit.
    func insert(_ snapshots: [DefaultSnapshot]) async throws -> [PersistentIdentifier: Int64] {
        var versions: [PersistentIdentifier: Int64] = [:]
        var order: [String] = []
        var byEntity: [String: [DefaultSnapshot]] = [:]
        for snapshot in snapshots {
            let name = snapshot.persistentIdentifier.entityName
            if byEntity[name] == nil { order.append(name) }
            byEntity[name, default: []].append(snapshot)
            versions[snapshot.persistentIdentifier] = 1
        }
        for name in order {
            let layout = try layout(name)
            let rows = byEntity[name] ?? []
            // Two rows in one statement would cost the savepoint's two round trips and save one.
            let perStatement = rows.count > 2 ? max(1, Self.parameterLimit / (2 + layout.columns.count)) : 1
            var start = rows.startIndex
            while start < rows.endIndex {
                let end = min(start + perStatement, rows.endIndex)
                if end - start == 1 {
                    try await insertRow(rows[start], layout: layout)
                } else {
                    try await insertRows(rows[start..<end], layout: layout)
                }
                start = end
            }
            for join in layout.joinTables { try await insertTargets(of: rows, in: join) }
            if rows.count >= Self.analyzeThreshold, try await doubles(layout, by: rows.count) {
                session.afterCommit.add("ANALYZE \(layout.table)")
            }
        }
        return versions
    }

    /// Whether `count` new rows at least double the table by its statistics (`pg_class.reltuples`,
    /// negative for a table never analyzed), so its statistics are due (see ``analyzeThreshold``).
    private func doubles(_ layout: TableLayout, by count: Int) async throws -> Bool {
        var binds = PostgresBindings()
        binds.append(layout.table)
        let row = try await session.query("SELECT reltuples::float8 FROM pg_class WHERE oid = $1::regclass", binds)
        guard let tuples = try row.first?.decode(Double.self) else { return true }
        return tuples < 0 || Double(count) >= tuples
    }

    /// Inserts one row (not its join rows).
    private func insertRow(_ snapshot: DefaultSnapshot, layout: TableLayout) async throws {
        var binds = PostgresBindings()
        _ = try bindRow(snapshot, layout: layout, to: &binds)
        try await run(layout.insertSQL, binds, writing: snapshot, layout: layout)
    }

    /// Inserts rows in one statement, under a savepoint (see ``insert(_:)``).
    private func insertRows(_ rows: ArraySlice<DefaultSnapshot>, layout: TableLayout) async throws {
        var binds = PostgresBindings()
        var tuples: [String] = []
        tuples.reserveCapacity(rows.count)
        for snapshot in rows {
            tuples.append("(" + (try bindRow(snapshot, layout: layout, to: &binds)).joined(separator: ", ") + ")")
        }
        let sql = layout.insertPrefix + " VALUES " + tuples.joined(separator: ", ")
        try await session.execute("SAVEPOINT modelstore_insert")
        do {
            try await session.execute(sql, binds)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            try await session.execute("ROLLBACK TO SAVEPOINT modelstore_insert")
            for snapshot in rows { try await insertRow(snapshot, layout: layout) }
            throw error
        }
        try await session.execute("RELEASE SAVEPOINT modelstore_insert")
    }

    /// Appends a row's parameters (key, version 1, then the columns) and returns their placeholders.
    private func bindRow(
        _ snapshot: DefaultSnapshot, layout: TableLayout, to binds: inout PostgresBindings
    ) throws -> [String] {
        let id = snapshot.persistentIdentifier
        guard let key = localKey(id) else { throw missing(id) }
        binds.append(key)
        binds.append(Int64(1))
        var placeholders = ["$\(binds.count - 1)", "$\(binds.count)"]
        for column in layout.columns {
            try bind(snapshot, column, layout: layout, to: &binds)
            placeholders.append(column.type?.placeholder(binds.count) ?? "$\(binds.count)")
        }
        return placeholders
    }

    /// The join rows of new rows' to-many relationship, in one statement (three arrays, unnested).
    private func insertTargets(of snapshots: [DefaultSnapshot], in join: TableLayout.JoinTable) async throws {
        var owners: [Int64] = []
        var positions: [Int32] = []
        var targets: [Int64] = []
        for snapshot in snapshots {
            let owner = snapshot.persistentIdentifier
            guard let key = localKey(owner) else { throw missing(owner) }
            for (position, target) in snapshot.values[join.slot].referencedIdentifiers.enumerated() {
                owners.append(key)
                positions.append(Int32(position))
                targets.append(try targetKey(target, owner: owner, property: join.name))
            }
        }
        guard !targets.isEmpty else { return }
        var binds = PostgresBindings()
        binds.append(owners)
        binds.append(positions)
        binds.append(targets)
        try await session.execute(
            "INSERT INTO \(join.table) (owner, position, target) "
                + "SELECT * FROM unnest($1::bigint[], $2::integer[], $3::bigint[])", binds)
    }
}
