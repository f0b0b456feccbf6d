import Foundation
import ModelStore

/// How the store runs one ``StoreQuery``: the SQL part, and what is left for the store to do on
/// the rows SQL returns. Fetch, count, identifiers and `EXPLAIN QUERY PLAN` all read one plan.
struct SQLiteQueryPlan {
    let layout: EntityLayout
    /// `FROM "Entity" t0 WHERE …`, without `SELECT`, `ORDER BY` or `LIMIT`.
    let from: String
    let parameters: [SQLValue]
    /// `ORDER BY …` with the key tie-break, or only the key when the sort is done in Swift.
    let orderBy: String
    /// The conjuncts SQL cannot run exactly; the store evaluates them on each row.
    let residual: StoreFilter?
    /// Whether the sort is done in Swift (a key SQL cannot order exactly).
    let sortsInSwift: Bool
    let query: StoreQuery

    static let alias = "t0"

    /// Whether SQL does all of it: filter, sort, offset and limit.
    var isComplete: Bool { residual == nil && !sortsInSwift }

    init(_ query: StoreQuery, layouts: [String: EntityLayout], storeIdentifier: String) throws {
        guard let layout = layouts[query.entityName] else {
            throw DataStoreError(
                .notFound, "the store has no entity '\(query.entityName)'",
                remedy: "Add the model type to the container's schema")
        }
        self.layout = layout
        self.query = query
        var translator = FilterTranslator(layouts: layouts, storeIdentifier: storeIdentifier)
        var conditions: [SQLFragment] = []
        var residual: [StoreFilter] = []
        for conjunct in query.filter?.conjuncts ?? [] {
            if let fragment = translator.translate(conjunct, layout: layout, alias: Self.alias) {
                conditions.append(fragment)
            } else {
                residual.append(conjunct)
            }
        }
        var from = "FROM \(layout.table) \(Self.alias)"
        if !conditions.isEmpty { from += " WHERE " + conditions.map(\.sql).joined(separator: " AND ") }
        self.from = from
        parameters = conditions.flatMap(\.parameters)
        self.residual = StoreFilter.conjunction(residual)
        let key = "\(Self.alias).\(EntityLayout.primaryKey)"
        var terms: [String] = []
        var inSwift = false
        for sortKey in query.sort {
            guard let column = layout.column(named: sortKey.property), let kind = column.kind,
                kind.sortsExactly(sortKey.comparison, optional: column.isOptional)
            else {
                inSwift = true
                break
            }
            terms.append("\(Self.alias).\(quote(column.name)) " + (sortKey.ascending ? "ASC" : "DESC"))
        }
        sortsInSwift = inSwift
        orderBy = "ORDER BY " + ((inSwift ? [] : terms) + [key]).joined(separator: ", ")
    }

    /// `SELECT <columns> … ORDER BY … [LIMIT … OFFSET …]`: the window is in SQL when SQL does everything.
    func selectSQL(columns: String) -> (sql: String, parameters: [SQLValue]) {
        var sql = "SELECT \(columns) \(from) \(orderBy)"
        var parameters = self.parameters
        if isComplete && (query.limit != nil || query.offset > 0) {
            sql += " LIMIT ? OFFSET ?"
            parameters += [.integer(Int64(query.limit ?? -1)), .integer(Int64(max(query.offset, 0)))]
        }
        return (sql, parameters)
    }

    /// Every column of the entity, qualified by the query's alias (built once per entity).
    var rowColumns: String { layout.aliasedSelectList }
}
