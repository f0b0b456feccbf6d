import Foundation
import ModelStore
import ModelStoreAdapterKit

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

/// The plans a connection keeps per query shape (a window is written into the statement, so it
/// is part of the shape), and the store's answers to ``SQLiteStore/pushDown(_:entityName:)`` per
/// condition shape: translating a filter into SQL happens once per shape, not on every fetch.
///
/// Only complete plans are kept (SQL runs every condition; a residual filter holds one query's
/// operands). A plan is kept only if binding its own query's operands gives back exactly the
/// values its translation produced, which checks that its parameters name their operands right.
struct SQLiteQueryCache {
    private var cache = QueryPlanCache<SQLiteCompiledQuery>(distinguishesWindows: true)

    /// The query's plan and parameter values, from the plan kept for its shape or a new one (kept
    /// when it qualifies).
    mutating func prepare(
        _ query: StoreQuery, layouts: [String: EntityLayout], storeIdentifier: String
    ) throws -> SQLitePreparedQuery {
        let lookup = cache.reuse(query) { compiled, operands in
            compiled.plan.values(for: operands).map {
                SQLitePreparedQuery(plan: compiled.plan, values: $0, compiled: compiled)
            }
        }
        let shape: StoreQueryShape
        switch lookup {
        case .reused(let prepared): return prepared
        case .translate(let found): shape = found
        case .translateOnce:
            let plan = try SQLiteQueryPlan(query, layouts: layouts, storeIdentifier: storeIdentifier)
            return SQLitePreparedQuery(plan: plan, values: plan.translatedValues, compiled: nil)
        }
        let plan = try SQLiteQueryPlan(query, layouts: layouts, storeIdentifier: storeIdentifier)
        let values = plan.translatedValues
        guard plan.residual == nil, cache.hasRoom, plan.values(for: shape.operands) == values else {
            return SQLitePreparedQuery(plan: plan, values: values, compiled: nil)
        }
        let compiled = SQLiteCompiledQuery(plan)
        cache.keep(compiled, for: shape)
        return SQLitePreparedQuery(plan: plan, values: values, compiled: compiled)
    }

    /// The answer kept for a condition's shape, or the one `answer` gives (kept).
    mutating func pushDown(
        _ filter: StoreFilter, entityName: String, answer: () -> StorePushDown
    ) -> StorePushDown {
        cache.pushDown(filter, entityName: entityName, answer: answer)
    }
}
