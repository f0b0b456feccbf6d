import Foundation
import ModelStore

/// How the store runs one ``StoreQuery``: the SQL part, and what is left for the store to do on
/// the rows SQL returns. Fetch, count, identifiers and `EXPLAIN QUERY PLAN` all read one plan.
///
/// A plan depends only on the query's shape (`StoreQueryShape`): its parameters say which of
/// the filter's operands each binds, so the store keeps one plan per shape
/// (``SQLiteCompiledQuery``) and binds the operands of every later query of that shape. It is a
/// class so that a fetch that finds its plan kept shares it instead of copying its texts and lists.
final class SQLiteQueryPlan {
    let layout: EntityLayout
    /// `FROM "Entity" t0 WHERE …`, without `SELECT`, `ORDER BY` or `LIMIT`.
    let from: String
    let parameters: [SQLParameter]
    /// `ORDER BY …` with the key tie-break, or only the key when the sort is done in Swift.
    let orderBy: String
    /// The conjuncts SQL cannot run exactly; the store evaluates them on each row.
    let residual: StoreFilter?
    /// Whether the sort is done in Swift (a key SQL cannot order exactly).
    let sortsInSwift: Bool
    /// Whether the query has an offset or a limit.
    let hasWindow: Bool

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
        hasWindow = query.limit != nil || query.offset > 0
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
            guard let column = Self.exactSortColumn(sortKey, layout: layout) else {
                inSwift = true
                break
            }
            terms.append("\(Self.alias).\(quote(column.name)) " + (sortKey.ascending ? "ASC" : "DESC"))
        }
        sortsInSwift = inSwift
        orderBy = "ORDER BY " + ((inSwift ? [] : terms) + [key]).joined(separator: ", ")
    }

    /// The column `ORDER BY` sorts a key by in `SortDescriptor`'s order, or `nil` when it cannot.
    static func exactSortColumn(_ key: StoreSortKey, layout: EntityLayout) -> EntityLayout.Column? {
        guard let column = layout.column(named: key.property), let kind = column.kind,
            kind.sortsExactly(key.comparison, optional: column.isOptional)
        else { return nil }
        return column
    }

    /// The parameters' values as translated: those of the query the plan was made from.
    var translatedValues: [SQLValue] { parameters.map(\.value) }

    /// The parameters' values for another query of the plan's shape, with these filter operands
    /// (``StoreFilterShape/operands``); `nil` when one operand gives no value.
    func values(for operands: [StoreValue]) -> [SQLValue]? {
        var values: [SQLValue] = []
        values.reserveCapacity(parameters.count)
        for parameter in parameters {
            guard let value = parameter.value(for: operands) else { return nil }
            values.append(value)
        }
        return values
    }

    /// `SELECT <columns> … ORDER BY … [LIMIT ? OFFSET ?]`: the window is in SQL when SQL does everything.
    func selectSQL(columns: String) -> String {
        var sql = "SELECT \(columns) \(from) \(orderBy)"
        if isComplete && hasWindow { sql += " LIMIT ? OFFSET ?" }
        return sql
    }

    /// Binds the values of ``selectSQL(columns:)``: the filter's, then the query's window when SQL
    /// applies it (bound one by one, without a list of them all).
    func bindSelectValues(_ filterValues: [SQLValue], query: StoreQuery, to statement: SQLiteStatement) {
        statement.bind(filterValues)
        guard isComplete && hasWindow else { return }
        let next = Int32(filterValues.count + 1)
        statement.bind(next, Int64(query.limit ?? -1))
        statement.bind(next + 1, Int64(max(query.offset, 0)))
    }

    /// Every column of the entity, qualified by the query's alias (built once per entity).
    var rowColumns: String { layout.aliasedSelectList }
}
