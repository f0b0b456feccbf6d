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

    /// Whether `SQLiteQueryShape(query)` would equal this shape, decided without making it; when it
    /// would, the query's filter operands are appended to `operands`, in the order of ``operands``.
    func matches(_ query: StoreQuery, operands: inout [StoreValue]) -> Bool {
        guard hasWindow == (query.limit != nil || query.offset > 0), entityName == query.entityName,
            sort == query.sort
        else { return false }
        switch (filter, query.filter) {
        case (nil, nil): return true
        case (let shape?, let filter?): return shape.matches(filter, operands: &operands)
        default: return false
        }
    }
}

/// A plan kept for every query of one shape, with its statements found by identity
/// (``CachedSQL``) rather than by hashing their text.
final class SQLiteCompiledQuery {
    /// The shape of the queries the plan serves.
    let shape: SQLiteQueryShape
    let plan: SQLiteQueryPlan
    /// Every column of the rows, in order, with the window when SQL applies it.
    let rows: CachedSQL
    /// The rows' keys, in order, with the window when SQL applies it.
    let keys: CachedSQL
    /// `SELECT count(*)` of the filter.
    let count: CachedSQL

    init(_ plan: SQLiteQueryPlan, shape: SQLiteQueryShape) {
        self.shape = shape
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
    /// The plans used last, most recent first: a query is compared with their shapes before its
    /// own shape is made and hashed, which costs more than the rest of preparing it.
    private var recent: [SQLiteCompiledQuery] = []
    /// How many plans ``recent`` holds.
    static let recentLimit = 4

    struct PushDownKey: Hashable {
        let entityName: String
        let filter: StoreFilterShape
    }

    /// The query's plan and parameter values, from the plan kept for its shape or a new one (kept
    /// when it qualifies).
    mutating func prepare(
        _ query: StoreQuery, layouts: [String: EntityLayout], storeIdentifier: String
    ) throws -> SQLitePreparedQuery {
        for (position, compiled) in recent.enumerated() {
            var operands: [StoreValue] = []
            guard compiled.shape.matches(query, operands: &operands) else { continue }
            guard let values = compiled.plan.values(for: operands) else { break }
            if position > 0 {
                recent.remove(at: position)
                recent.insert(compiled, at: 0)
            }
            return SQLitePreparedQuery(plan: compiled.plan, values: values, compiled: compiled)
        }
        guard let shape = SQLiteQueryShape(query) else {
            let plan = try SQLiteQueryPlan(query, layouts: layouts, storeIdentifier: storeIdentifier)
            return SQLitePreparedQuery(plan: plan, values: plan.translatedValues, compiled: nil)
        }
        let operands = shape.operands
        if let compiled = plans[shape], let values = compiled.plan.values(for: operands) {
            remember(compiled)
            return SQLitePreparedQuery(plan: compiled.plan, values: values, compiled: compiled)
        }
        let plan = try SQLiteQueryPlan(query, layouts: layouts, storeIdentifier: storeIdentifier)
        let values = plan.translatedValues
        guard plan.residual == nil, plans.count < Self.limit, plan.values(for: operands) == values else {
            return SQLitePreparedQuery(plan: plan, values: values, compiled: nil)
        }
        let compiled = SQLiteCompiledQuery(plan, shape: shape)
        plans[shape] = compiled
        remember(compiled)
        return SQLitePreparedQuery(plan: plan, values: values, compiled: compiled)
    }

    /// Puts a kept plan first among the recent ones.
    private mutating func remember(_ compiled: SQLiteCompiledQuery) {
        recent.removeAll { $0 === compiled }
        recent.insert(compiled, at: 0)
        if recent.count > Self.recentLimit { recent.removeLast() }
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
