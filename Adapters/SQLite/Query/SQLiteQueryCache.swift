import Foundation
import ModelStore

/// What a query's SQL depends on: the entity, the filter's shape, the sort and whether it has a
/// window. Queries that differ only in their operands' values (and the window's numbers) share one.
struct SQLiteQueryShape: Hashable {
    let entityName: String
    let filter: StoreFilterShape?
    let sort: [StoreSortKey]
    let hasWindow: Bool

    /// The query's shape, or `nil` when its filter has none (``StoreFilterShape/init(_:)``).
    init?(_ query: StoreQuery) {
        if let filter = query.filter {
            guard let shape = StoreFilterShape(filter) else { return nil }
            self.filter = shape
        } else {
            self.filter = nil
        }
        entityName = query.entityName
        sort = query.sort
        hasWindow = query.limit != nil || query.offset > 0
    }

    /// The filter's operands, in the order the plan's parameters name them.
    var operands: [StoreValue] { filter?.operands ?? [] }
}

/// A plan kept for every query of one shape, with its statements found by identity
/// (``CachedSQL``) rather than by hashing their text.
final class SQLiteCompiledQuery {
    let plan: SQLiteQueryPlan
    /// Every column of the rows, in order, with the window when SQL applies it.
    let rows: CachedSQL
    /// The rows' keys, in order, with the window when SQL applies it.
    let keys: CachedSQL
    /// `SELECT count(*)` of the filter.
    let count: CachedSQL

    init(_ plan: SQLiteQueryPlan) {
        self.plan = plan
        rows = CachedSQL(plan.selectSQL(columns: plan.rowColumns))
        keys = CachedSQL(plan.selectSQL(columns: "\(SQLiteQueryPlan.alias).\(EntityLayout.primaryKey)"))
        count = CachedSQL("SELECT count(*) \(plan.from)")
    }
}

/// A query ready to run: its plan, the values of the filter's parameters, and the plan kept for
/// its shape when there is one.
struct SQLitePreparedQuery {
    let plan: SQLiteQueryPlan
    let values: [SQLValue]
    let compiled: SQLiteCompiledQuery?
}

/// The plans a connection keeps per query shape, and the store's answers to
/// ``SQLiteStore/pushDown(_:entityName:)`` per condition shape: translating a filter into SQL
/// happens once per shape, not on every fetch.
///
/// Only complete plans are kept (SQL runs every condition; a residual filter holds one query's
/// operands). A plan is kept only if binding its own query's operands gives back exactly the
/// values its translation produced, which checks that its parameters name their operands right.
struct SQLiteQueryCache {
    /// The most shapes of each kind kept; past it, new shapes are translated on every use.
    static let limit = 256

    private var plans: [SQLiteQueryShape: SQLiteCompiledQuery] = [:]
    private var answers: [PushDownKey: StorePushDown] = [:]

    struct PushDownKey: Hashable {
        let entityName: String
        let filter: StoreFilterShape
    }

    /// The query's plan and parameter values, from the plan kept for its shape or a new one (kept
    /// when it qualifies).
    mutating func prepare(
        _ query: StoreQuery, layouts: [String: EntityLayout], storeIdentifier: String
    ) throws -> SQLitePreparedQuery {
        guard let shape = SQLiteQueryShape(query) else {
            let plan = try SQLiteQueryPlan(query, layouts: layouts, storeIdentifier: storeIdentifier)
            return SQLitePreparedQuery(plan: plan, values: plan.translatedValues, compiled: nil)
        }
        let operands = shape.operands
        if let compiled = plans[shape], let values = compiled.plan.values(for: operands) {
            return SQLitePreparedQuery(plan: compiled.plan, values: values, compiled: compiled)
        }
        let plan = try SQLiteQueryPlan(query, layouts: layouts, storeIdentifier: storeIdentifier)
        let values = plan.translatedValues
        guard plan.residual == nil, plans.count < Self.limit, plan.values(for: operands) == values else {
            return SQLitePreparedQuery(plan: plan, values: values, compiled: nil)
        }
        let compiled = SQLiteCompiledQuery(plan)
        plans[shape] = compiled
        return SQLitePreparedQuery(plan: plan, values: values, compiled: compiled)
    }

    /// The answer kept for a condition's shape, or the one `answer` gives (kept).
    mutating func pushDown(
        _ filter: StoreFilter, entityName: String, answer: () -> StorePushDown
    ) -> StorePushDown {
        guard let shape = StoreFilterShape(filter) else { return answer() }
        let key = PushDownKey(entityName: entityName, filter: shape)
        if let known = answers[key] { return known }
        let result = answer()
        if answers.count < Self.limit { answers[key] = result }
        return result
    }
}
