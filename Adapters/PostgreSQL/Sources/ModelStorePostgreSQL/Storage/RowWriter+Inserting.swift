import Foundation
import ModelStore
import PostgresNIO
import Synchronization

/// Inserts: batches of rows as one array per column, unnested by one prepared statement per table,
/// and the join rows of to-many relationships likewise.
extension RowWriter {
    /// The most parameters one statement may bind (PostgreSQL's protocol counts them in 16 bits).
    static let parameterLimit = 65_535

    /// The most rows one array insert writes (see ``insert(_:)``).
    static let rowsPerArrayInsert = 8_192

    /// The bytes of column values after which an array insert takes no more rows (see
    /// ``insert(_:)``): a batch's parameters stay near this size, whatever its rows hold (one row
    /// larger than it goes alone).
    static let bytesPerArrayInsert = 8 << 20

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
    /// One or two rows of an entity go in one `INSERT` each. More go in batches of at most
    /// ``rowsPerArrayInsert`` rows and about ``bytesPerArrayInsert`` bytes of values, each one
    /// statement that binds one array per column (``ColumnArray``) and unnests them:
    ///
    ///     INSERT INTO t ("_pk", "_version", "a", …) SELECT v.k, 1, v.c0, …
    ///     FROM unnest($1::bigint[], $2::text[], …) AS v(k, c0, …)
    ///
    /// Its text depends only on the table (``TableLayout/arrayInsertSQL``), so it is kept prepared on
    /// each connection: the server parses and plans it once, where a multi-row `VALUES` of a new
    /// length each time was parsed and planned again with thousands of parameters. A batch with a
    /// value not of its column's own type (``ColumnType/bindsAsItself(_:)``), which an array of
    /// that type cannot hold, goes in one multi-row `INSERT … VALUES` of its own instead, as
    /// many rows per statement as ``parameterLimit`` allows.
    ///
    /// Each batch runs under a savepoint: when a unique index refuses it, the batch is rolled back
    /// to the savepoint and its rows inserted one by one, so that the error names the model whose
    /// values were refused. The join rows of each batch's to-many relationships follow it, one
    /// `INSERT … SELECT unnest(…)` per join table. An entity with ``analyzeThreshold`` new rows or
    /// more is analyzed after the commit.
    func insert(_ snapshots: [DefaultSnapshot]) async throws -> [PersistentIdentifier: Int64] {
        var versions: [PersistentIdentifier: Int64] = [:]
        versions.reserveCapacity(snapshots.count)
        var order: [String] = []
        var byEntity: [String: [DefaultSnapshot]] = [:]
        for snapshot in snapshots { versions[snapshot.persistentIdentifier] = 1 }
        for (name, run) in Self.entityRuns(of: snapshots) {
            if byEntity[name] == nil { order.append(name) }
            byEntity[name, default: []].append(contentsOf: run)
        }
        for name in order {
            let layout = try layout(name)
            let rows = byEntity[name] ?? []
            // Two rows in one statement would cost the savepoint's two round trips and save one.
            if rows.count <= 2 {
                for row in rows { try await insertRow(row, layout: layout) }
                for join in layout.joinTables { try await insertTargets(of: rows[...], in: join) }
            } else {
                // When the insert may be due to refresh the table's statistics, they are read with the
                // first array insert, in its wait.
                let due = rows.count >= Self.analyzeThreshold
                var asked = false
                var tuples: Double?
                var start = rows.startIndex
                while start < rows.endIndex {
                    let batch = try ArrayBatch(rows, from: start, writer: self, layout: layout)
                    let end = start + batch.count
                    if let arrays = batch.arrays {
                        let ask = due && !asked
                        let read = try await insertRows(
                            rows[start..<end], arrays: arrays, layout: layout, askingStatistics: ask)
                        if ask { (tuples, asked) = (read, true) }
                    } else {
                        try await insertRowsListed(rows[start..<end], layout: layout)
                    }
                    for join in layout.joinTables { try await insertTargets(of: rows[start..<end], in: join) }
                    start = end
                }
                if due {
                    if !asked { tuples = try await statistics(of: layout) }
                    // No statistics, or a table they count as at most this insert's rows: refreshed.
                    if tuples.map({ $0 < 0 || Double(rows.count) >= $0 }) ?? true {
                        session.afterCommit.add("ANALYZE \(layout.table)")
                    }
                }
            }
        }
        return versions
    }

    /// The next batch of an array insert: the rows from `start` that fit in ``rowsPerArrayInsert``
    /// and ``bytesPerArrayInsert``, and their arrays (keys, then one per column); `nil` arrays when a
    /// value of the batch is not of its column's own type: then the batch is the rows up to that one
    /// (or that row and those after it, as many as one multi-row `INSERT … VALUES` binds), to be
    /// inserted as such.
    struct ArrayBatch {
        /// How many rows from `start` the batch takes.
        let count: Int
        /// The arrays to bind, in ``TableLayout/arrayInsertSQL``'s order.
        let arrays: [ColumnArray]?

        init(_ rows: [DefaultSnapshot], from start: Int, writer: RowWriter, layout: TableLayout) throws {
            var keys = ColumnArray(for: .int)
            var columns = layout.columns.map { ColumnArray(for: $0.type) }
            var bytes = 0
            var index = start
            while index < rows.endIndex && index - start < RowWriter.rowsPerArrayInsert
                && bytes < RowWriter.bytesPerArrayInsert
            {
                let snapshot = rows[index]
                let id = snapshot.persistentIdentifier
                guard
                    layout.columns.allSatisfy({ column in
                        column.type?.bindsAsItself(snapshot.values[column.slot]) ?? true
                    })
                else {
                    // Not arrayable: the rows before this one alone, or this one and those after it
                    // listed in one statement.
                    if index > start { break }
                    count = min(max(1, RowWriter.parameterLimit / (2 + layout.columns.count)), rows.count - start)
                    arrays = nil
                    return
                }
                guard let key = writer.localKey(id) else { throw writer.missing(id) }
                try keys.append(key)
                for (number, column) in layout.columns.enumerated() {
                    let value = snapshot.values[column.slot]
                    if let type = column.type {
                        try type.append(value, to: &columns[number], of: column, in: layout)
                    } else if case .reference(let target) = value {
                        try columns[number].append(try writer.targetKey(target, owner: id, property: column.name))
                    } else if case .null = value {
                        columns[number].appendNull()
                    } else {
                        throw writer.notAReference(value, column, layout: layout)
                    }
                }
                bytes = columns.reduce(keys.byteCount) { $0 + $1.byteCount }
                index += 1
            }
            count = index - start
            arrays = [keys] + columns
        }
    }

    /// The statement that reads a table's row count by its statistics (`pg_class.reltuples`,
    /// negative for a table never analyzed): ``insert(_:)`` refreshes them when its rows at least
    /// double that count (see ``analyzeThreshold``).
    static let statisticsSQL = "SELECT reltuples::float8 FROM pg_class WHERE oid = $1::regclass"

    /// The table's row count by its statistics (see ``statisticsSQL``), `nil` when the server has none.
    private func statistics(of layout: TableLayout) async throws -> Double? {
        var binds = PostgresBindings()
        binds.append(layout.table)
        return try await session.query(Self.statisticsSQL, binds).first?.decode(Double.self)
    }

    /// Inserts one row (not its join rows).
    private func insertRow(_ snapshot: DefaultSnapshot, layout: TableLayout) async throws {
        var binds = PostgresBindings()
        _ = try bindRow(snapshot, layout: layout, to: &binds)
        try await run(layout.insertSQL, binds, writing: snapshot, layout: layout)
    }

    /// Inserts a batch of rows from its arrays (see ``insert(_:)``), kept prepared.
    ///
    /// With `askingStatistics`, the table's row count by its statistics (``statisticsSQL``) is
    /// read in the same wait, written before the insert, and returned (`nil` when the server has
    /// none; always `nil` without).
    private func insertRows(
        _ rows: ArraySlice<DefaultSnapshot>, arrays: [ColumnArray], layout: TableLayout, askingStatistics: Bool
    ) async throws -> Double? {
        var binds = PostgresBindings(capacity: arrays.count)
        for array in arrays { binds.append(array) }
        guard askingStatistics else {
            try await underSavepoint(rows, layout: layout) {
                try await session.query(prepared: layout.arrayInsertSQL, binds)
            }
            return nil
        }
        var table = PostgresBindings()
        table.append(layout.table)
        let statements = [
            Session.Queued(sql: Self.statisticsSQL, binds: table),
            Session.Queued(sql: layout.arrayInsertSQL, binds: binds, prepared: true),
        ]
        var tuples: Double?
        try await underSavepoint(rows, layout: layout) {
            tuples = try await session.run(together: statements).first?.rows.first?.decode(Double.self)
        }
        return tuples
    }

    /// Inserts rows in one multi-row `INSERT … VALUES` (see ``insert(_:)``).
    private func insertRowsListed(_ rows: ArraySlice<DefaultSnapshot>, layout: TableLayout) async throws {
        var binds = PostgresBindings()
        var tuples: [String] = []
        tuples.reserveCapacity(rows.count)
        for snapshot in rows {
            tuples.append("(" + (try bindRow(snapshot, layout: layout, to: &binds)).joined(separator: ", ") + ")")
        }
        let sql = layout.insertPrefix + " VALUES " + tuples.joined(separator: ", ")
        try await underSavepoint(rows, layout: layout) { try await session.execute(sql, binds) }
    }

    /// Runs `insert`, a statement inserting `rows`, under a savepoint; when a unique index refuses
    /// it, rolls back to the savepoint and inserts the rows one by one, whose error names the model
    /// whose values were refused.
    ///
    /// A writer with ``insertRefusals`` that has not met a refusal yet runs `insert` without the
    /// savepoint, whose two statements cost two waits per batch: a refusal then aborts the
    /// transaction, and ``Database`` runs it again from its start, with every batch under a
    /// savepoint, to name the model.
    private func underSavepoint<Answer>(
        _ rows: ArraySlice<DefaultSnapshot>, layout: TableLayout, _ insert: () async throws -> Answer
    ) async throws {
        if let insertRefusals, !insertRefusals.met {
            do {
                _ = try await insert()
            } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                insertRefusals.meet()
                throw RunAgain(underlying: error)
            }
            return
        }
        try await session.execute("SAVEPOINT modelstore_insert")
        do {
            _ = try await insert()
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

    /// The join rows of new rows' to-many relationship, in one statement (three arrays, unnested),
    /// kept prepared.
    private func insertTargets(of snapshots: ArraySlice<DefaultSnapshot>, in join: TableLayout.JoinTable) async throws {
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
        try await session.query(
            prepared: "INSERT INTO \(join.table) (owner, position, target) "
                + "SELECT * FROM unnest($1::bigint[], $2::integer[], $3::bigint[])", binds)
    }
}

/// Whether a batch insert of a transaction's attempt met a unique index's refusal, shared by the
/// attempts of one transaction (see ``RowWriter/insertRefusals``): until one does, batches go in
/// without a savepoint; after, the attempts insert under savepoints, so the refusal names its model.
final class InsertRefusals: Sendable {
    private let refused = Mutex(false)

    /// Whether an attempt met a refusal.
    var met: Bool { refused.withLock { $0 } }

    /// Records a refusal.
    func meet() { refused.withLock { $0 = true } }
}
