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
/// - text columns under the `binary` comparison: their NFC form under `COLLATE "C"`
///   (``TableLayout/textKey(_:)``), because Swift
///   orders strings by the scalars of their NFC forms and UTF-8 byte order is scalar order
///   (a database's default collation need not give that order; canonically equivalent spellings
///   tie, as they do in Swift); the stored escape of U+0000 and U+0001 keeps the order.
///
/// The store sorts the rest: doubles and dates (Swift ties a `NaN` with every number, which is
/// no total order PostgreSQL can reproduce), unsigned 64-bit integers (stored by bit pattern),
/// decimals, booleans, UUIDs and the `lexical`, `localizedStandard` and `caseInsensitive`
/// comparisons (Foundation's rules, not a PostgreSQL collation).
///
/// What a plan's SQL says depends only on the query's shape (`StoreQueryShape`): the store
/// keeps that part per shape (``PostgreSQLCompiledQuery``) and binds the operands of each later
/// query of the shape, so a query is translated once per shape, not on every fetch.
struct PostgreSQLQueryPlan: Sendable {
    /// The part that depends only on the query's shape.
    let compiled: PostgreSQLCompiledQuery
    let binds: PostgresBindings
    /// What the store evaluates on the rows SQL returns: the query's own conjuncts at
    /// ``PostgreSQLCompiledQuery/residualPositions``, or only its
    /// ``PostgreSQLCompiledQuery/unnarrowedPositions`` when the query allows inexact matches (the
    /// context then checks the conditions SQL narrows itself). A caller that sends a query itself may send any condition,
    /// and gets it applied exactly (rule 2 of `DataStoreQuerying`).
    let residual: StoreFilter?
    let query: StoreQuery

    var layout: TableLayout { compiled.layout }
    var whereClause: String { compiled.whereClause }
    /// Whether the store sorts the rows (SQL then sorts by primary key only).
    var sortsInSwift: Bool { compiled.sortsInSwift }

    /// Translates a query anew; `translator` is left with the parameters it bound, so the caller can
    /// check and keep the plan for the query's shape.
    init(
        _ query: StoreQuery, layouts: [String: TableLayout], storeIdentifier: String,
        translator: inout FilterTranslator
    ) throws {
        guard let layout = layouts[query.entityName] else {
            throw DataStoreError(
                .notFound, "the store has no entity '\(query.entityName)'",
                remedy: "Add the model type to this store's configuration", entityName: query.entityName)
        }
        let split = translator.split(query.filter, layout: layout)
        let sqlOrder = Self.order(query.sort, layout: layout)
        compiled = PostgreSQLCompiledQuery(
            layout: layout, whereClause: split.sql.isEmpty ? "" : "WHERE " + split.sql.joined(separator: " AND "),
            sqlOrder: sqlOrder, parameters: translator.parameters, residualPositions: split.residualPositions,
            narrowed: split.narrowed)
        binds = translator.binds
        residual = Self.residual(of: query, compiled: compiled)
        self.query = query
    }

    /// Translates a query anew.
    init(_ query: StoreQuery, layouts: [String: TableLayout], storeIdentifier: String) throws {
        var translator = FilterTranslator(layouts: layouts, storeIdentifier: storeIdentifier)
        try self.init(query, layouts: layouts, storeIdentifier: storeIdentifier, translator: &translator)
    }

    /// The plan of a query of a kept plan's shape, whose filter has these operands.
    init(_ compiled: PostgreSQLCompiledQuery, query: StoreQuery, binds: PostgresBindings) {
        self.compiled = compiled
        self.binds = binds
        self.query = query
        residual = Self.residual(of: query, compiled: compiled)
    }

    /// The conjuncts of a query the store evaluates on the rows SQL returns.
    private static func residual(of query: StoreQuery, compiled: PostgreSQLCompiledQuery) -> StoreFilter? {
        let positions = query.allowsInexactMatches ? compiled.unnarrowedPositions : compiled.residualPositions
        if positions.isEmpty { return nil }
        let conjuncts = query.filter?.conjuncts ?? []
        return StoreFilter.conjunction(positions.map { conjuncts[$0] })
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
    var isComplete: Bool { compiled.isComplete }

    /// The clause after `FROM table t`: condition, key order, and the window when SQL runs everything.
    var clause: String {
        var text = compiled.orderedClause
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

/// The part of a ``PostgreSQLQueryPlan`` that depends only on the query's shape: its SQL, where
/// its parameters' values come from, and which conjuncts the store evaluates.
final class PostgreSQLCompiledQuery: Sendable {
    let layout: TableLayout
    /// `WHERE …`, or empty.
    let whereClause: String
    /// ``whereClause`` with `ORDER BY` the sort keys SQL sorts by, then the primary key.
    let orderedClause: String
    /// Whether the store sorts the rows (SQL then sorts by primary key only).
    let sortsInSwift: Bool
    /// The `$n` parameters, in order.
    let parameters: [PostgreSQLParameter]
    /// The places in the filter's ``StoreFilter/conjuncts`` of those the store evaluates on the rows.
    let residualPositions: [Int]
    /// Those of ``residualPositions`` SQL does not narrow to a superset of their matches: the store
    /// evaluates them even when a query allows inexact matches (it leaves the narrowed ones to its caller).
    let unnarrowedPositions: [Int]

    /// Whether SQL runs all of a query of this shape.
    var isComplete: Bool { residualPositions.isEmpty && !sortsInSwift }

    init(
        layout: TableLayout, whereClause: String, sqlOrder: [String]?, parameters: [PostgreSQLParameter],
        residualPositions: [Int], narrowed: [Bool]
    ) {
        self.layout = layout
        self.whereClause = whereClause
        orderedClause =
            whereClause + " ORDER BY " + ((sqlOrder ?? []) + ["t.\(TableLayout.key)"]).joined(separator: ", ")
        sortsInSwift = sqlOrder == nil
        self.parameters = parameters
        self.residualPositions = residualPositions
        unnarrowedPositions = zip(residualPositions, narrowed).filter { !$0.1 }.map(\.0)
    }

    /// The parameters' values for a filter of this shape with these operands, or `nil` when an
    /// operand gives none.
    func binds(for operands: [StoreValue], storeIdentifier: String) -> PostgresBindings? {
        var binds = PostgresBindings(capacity: parameters.count)
        for parameter in parameters {
            guard parameter.append(to: &binds, from: operands, storeIdentifier: storeIdentifier) else { return nil }
        }
        return binds
    }
}
