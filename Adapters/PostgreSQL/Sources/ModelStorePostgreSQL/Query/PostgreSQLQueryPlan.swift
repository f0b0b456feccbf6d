import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

/// How the store runs one query: the SQL it sends, and what it does on the rows afterwards.
///
/// Computed once and read by both the fetch and the explanation, so they cannot drift. When the
/// filter translates whole and SQL can sort, SQL also applies `OFFSET`/`LIMIT` and counts;
/// otherwise the store filters the residual, sorts and windows the rows itself.
///
/// SQL sorts when every key gives exactly `SortDescriptor`'s order, with the primary key (the
/// identifier order within one entity of one store) as the last term:
/// - integer columns (`bigint`), `nil` first ascending and last descending, as the store sorts;
/// - text columns under the `binary` comparison: `normalize(…, NFC) COLLATE "C"`, because Swift
///   orders strings by the scalars of their NFC forms and UTF-8 byte order is scalar order
///   (a database's default collation need not give that order; canonically equivalent spellings
///   tie, as they do in Swift); the stored escape of U+0000 and U+0001 keeps the order.
///
/// The store sorts the rest: doubles and dates (Swift ties a `NaN` with every number, which is
/// no total order PostgreSQL can reproduce), unsigned 64-bit integers (stored by bit pattern),
/// decimals, booleans, UUIDs and the `lexical`, `localizedStandard` and `caseInsensitive`
/// comparisons (Foundation's rules, not a PostgreSQL collation).
struct PostgreSQLQueryPlan: Sendable {
    let layout: TableLayout
    let whereClause: String
    let binds: PostgresBindings
    /// What the store evaluates on the rows SQL returns.
    let residual: StoreFilter?
    /// Whether the store sorts the rows (SQL then sorts by primary key only).
    let sortsInSwift: Bool
    /// The sort keys as `ORDER BY` terms, before the primary key; `nil` when the store sorts.
    let sqlOrder: [String]?
    let query: StoreQuery

    init(_ query: StoreQuery, layouts: [String: TableLayout], storeIdentifier: String) throws {
        guard let layout = layouts[query.entityName] else {
            throw DataStoreError(
                .notFound, "the store has no entity '\(query.entityName)'",
                remedy: "Add the model type to this store's configuration", entityName: query.entityName)
        }
        self.layout = layout
        self.query = query
        var translator = FilterTranslator(layouts: layouts, storeIdentifier: storeIdentifier)
        let split = translator.split(query.filter, layout: layout)
        whereClause = split.sql.isEmpty ? "" : "WHERE " + split.sql.joined(separator: " AND ")
        binds = translator.binds
        residual = split.residual.isEmpty ? nil : (split.residual.count == 1 ? split.residual[0] : .and(split.residual))
        sqlOrder = Self.order(query.sort, layout: layout)
        sortsInSwift = sqlOrder == nil
    }

    /// The `ORDER BY` terms for the sort keys, or `nil` when one of them must be sorted in Swift.
    static func order(_ keys: [StoreSortKey], layout: TableLayout) -> [String]? {
        var terms: [String] = []
        for key in keys {
            guard let column = layout.column(named: key.property), let type = column.type else { return nil }
            let expression: String
            switch type {
            case .int: expression = "t.\(column.quoted)"
            case .string where key.comparison == .binary:
                expression = TableLayout.textKey("t." + column.quoted)
            default: return nil
            }
            terms.append(expression + (key.ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST"))
        }
        return terms
    }

    /// The names of the relationships the residual filter reads through, empty when it reads none:
    /// the store loads the related models these lead to before it evaluates the residual.
    var relationshipNames: Set<String> {
        guard let residual, residual.traversesRelationships else { return [] }
        return Self.relationshipNames(in: residual)
    }

    private static func relationshipNames(in filter: StoreFilter) -> Set<String> {
        switch filter {
        case .constant, .identifiers: []
        case .compare(let path, _, _), .isIn(let path, _), .range(let path, _), .text(let path, _),
            .arrayContains(let path, _):
            Set(path.components.dropLast())
        case .any(let path, let inner), .all(let path, let inner):
            Set(path.components).union(relationshipNames(in: inner))
        case .and(let items), .or(let items): items.reduce(into: []) { $0.formUnion(relationshipNames(in: $1)) }
        case .not(let item): relationshipNames(in: item)
        }
    }

    /// Whether SQL runs all of the query.
    var isComplete: Bool { residual == nil && !sortsInSwift }

    /// The clause after `FROM table t`: condition, key order, and the window when SQL runs everything.
    var clause: String {
        var text = whereClause + " ORDER BY " + ((sqlOrder ?? []) + ["t.\(TableLayout.key)"]).joined(separator: ", ")
        if isComplete {
            if let limit = query.limit { text += " LIMIT \(max(limit, 0))" }
            if query.offset > 0 { text += " OFFSET \(query.offset)" }
        }
        return text
    }

    /// The snapshots of the query from rows SQL returned: residual filter, sort, window.
    ///
    /// `related` holds the models a residual filter reads through relationships (see
    /// ``relationshipNames``); a related model missing from it reads as `nil`.
    func finish(
        _ rows: [RowReader.Versioned], schema: Schema, related: [PersistentIdentifier: DefaultSnapshot] = [:]
    ) throws -> [RowReader.Versioned] {
        guard !isComplete else { return rows }
        var rows = rows
        if let residual {
            var resolve: (@Sendable (PersistentIdentifier) -> DefaultSnapshot?)?
            if residual.traversesRelationships {
                resolve = { (id: PersistentIdentifier) -> DefaultSnapshot? in related[id] }
            }
            let evaluator = try SnapshotEvaluator(
                filter: residual, entity: layout.entity, schema: schema, resolve: resolve)
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
