import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

/// The plans a store keeps per query shape (offset and limit are bound, so windows share a
/// plan), and its answers to ``PostgreSQLStore/pushDown(_:entityName:)`` per condition shape: a
/// filter is translated into SQL once per shape, not on every fetch.
///
/// A plan is kept only when its translation read each operand at the place
/// ``StoreFilterShape/operands`` gives it (``FilterTranslator/readsOperands(_:)``), so its
/// parameters bind the operands of later queries of the shape.
struct PostgreSQLQueryCache: Sendable {
    private var cache = QueryPlanCache<PostgreSQLCompiledQuery>(distinguishesWindows: false)

    /// The query's plan: from the one kept for its shape, or translated (and kept when it qualifies).
    mutating func plan(
        for query: StoreQuery, layouts: [String: TableLayout], storeIdentifier: String
    ) throws -> PostgreSQLQueryPlan {
        let lookup = cache.reuse(query) { compiled, operands in
            compiled.binds(for: operands, storeIdentifier: storeIdentifier).map {
                PostgreSQLQueryPlan(compiled, query: query, binds: $0)
            }
        }
        let shape: StoreQueryShape
        switch lookup {
        case .reused(let plan): return plan
        case .translate(let found): shape = found
        case .translateOnce: return try PostgreSQLQueryPlan(query, layouts: layouts, storeIdentifier: storeIdentifier)
        }
        var translator = FilterTranslator(layouts: layouts, storeIdentifier: storeIdentifier)
        let plan = try PostgreSQLQueryPlan(
            query, layouts: layouts, storeIdentifier: storeIdentifier, translator: &translator)
        if cache.hasRoom, translator.readsOperands(shape.operands) { cache.keep(plan.compiled, for: shape) }
        return plan
    }

    /// The answer kept for a condition's shape, or the one `answer` gives (kept).
    mutating func pushDown(
        _ filter: StoreFilter, entityName: String, answer: () -> StorePushDown
    ) -> StorePushDown {
        cache.pushDown(filter, entityName: entityName, answer: answer)
    }
}
