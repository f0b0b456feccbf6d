import Foundation
@_spi(AdapterKit) import ModelStore
import PostgresNIO

/// How the store runs one query: the SQL it sends, and what it does on the rows afterwards.
///
/// Computed once and read by both the fetch and the explanation, so they cannot drift. When the
/// filter translates whole and the sort is by identifier only, SQL also applies `OFFSET`/`LIMIT`
/// and counts; otherwise the store filters the residual, sorts and windows the rows itself.
struct QueryPlan: Sendable {
    let layout: TableLayout
    let whereClause: String
    let binds: PostgresBindings
    /// What the store evaluates on the rows SQL returns.
    let residual: StoreFilter?
    /// Whether the store sorts the rows (SQL sorts by primary key only).
    let sortsInSwift: Bool
    let query: StoreQuery

    init(_ query: StoreQuery, layouts: [String: TableLayout], storeIdentifier: String) throws {
        guard let layout = layouts[query.entityName] else {
            throw DataStoreError(
                .notFound, "the store has no entity '\(query.entityName)'",
                remedy: "Add the model type to this store's configuration", entityName: query.entityName)
        }
        self.layout = layout
        self.query = query
        var translator = FilterTranslator(layout: layout, storeIdentifier: storeIdentifier)
        let split = translator.split(query.filter)
        whereClause = split.sql.isEmpty ? "" : "WHERE " + split.sql.joined(separator: " AND ")
        binds = translator.binds
        residual = split.residual.isEmpty ? nil : (split.residual.count == 1 ? split.residual[0] : .and(split.residual))
        sortsInSwift = !query.sort.isEmpty
    }

    /// Whether SQL runs all of the query.
    var isComplete: Bool { residual == nil && !sortsInSwift }

    /// The clause after `FROM table t`: condition, key order, and the window when SQL runs everything.
    var clause: String {
        var text = whereClause + " ORDER BY t.\(TableLayout.key)"
        if isComplete {
            if let limit = query.limit { text += " LIMIT \(max(limit, 0))" }
            if query.offset > 0 { text += " OFFSET \(query.offset)" }
        }
        return text
    }

    /// The snapshots of the query from rows SQL returned: residual filter, sort, window.
    func finish(_ rows: [RowReader.Versioned], schema: Schema) throws -> [RowReader.Versioned] {
        guard !isComplete else { return rows }
        var rows = rows
        if let residual {
            let evaluator = try SnapshotEvaluator(filter: residual, entity: layout.entity, schema: schema)
            rows = rows.filter { evaluator.matches($0.snapshot) }
        }
        if sortsInSwift {
            var snapshots = rows.map(\.snapshot)
            try SnapshotEvaluator.sort(&snapshots, by: query.sort, entity: layout.entity)
            let versions = Dictionary(
                rows.map { ($0.snapshot.persistentIdentifier, $0.version) }, uniquingKeysWith: { a, _ in a })
            rows = snapshots.map { RowReader.Versioned(snapshot: $0, version: versions[$0.persistentIdentifier] ?? 0) }
        }
        return SnapshotEvaluator.window(rows, offset: query.offset, limit: query.limit)
    }
}
