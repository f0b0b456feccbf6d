import Foundation
import ModelStore
import PostgresNIO

/// What a query's plan depends on: the entity, the filter's shape and the sort. Queries that
/// differ only in their operands' values, offset and limit share one.
struct PostgreSQLQueryShape: Hashable, Sendable {
    let entityName: String
    let filter: StoreFilterShape?
    let sort: [StoreSortKey]

    /// The query's shape, or `nil` when its filter has none (``StoreFilterShape/init(_:)``).
    init?(_ query: StoreQuery) {
        if let filter = query.filter {
            guard let shape = StoreFilterShape(filter) else { return nil }
            self.filter = shape
        } else {
            filter = nil
        }
        entityName = query.entityName
        sort = query.sort
    }

    /// The filter's operands, in the order the plan's parameters name them.
    var operands: [StoreValue] { filter?.operands ?? [] }

    /// Whether `PostgreSQLQueryShape(query)` would equal this shape, decided without making it; when
    /// it would, the query's filter operands are appended to `operands`, in the order of ``operands``.
    func matches(_ query: StoreQuery, operands: inout [StoreValue]) -> Bool {
        guard entityName == query.entityName, sort == query.sort else { return false }
        switch (filter, query.filter) {
        case (nil, nil): return true
        case (let shape?, let filter?): return shape.matches(filter, operands: &operands)
        default: return false
        }
    }
}

/// The plans a store keeps per query shape, and its answers to
/// ``PostgreSQLStore/pushDown(_:entityName:)`` per condition shape: a filter is translated into
/// SQL once per shape, not on every fetch.
///
/// A plan is kept only when its translation read each operand at the place
/// ``StoreFilterShape/operands`` gives it (``FilterTranslator/readsOperands(_:)``), so its
/// parameters bind the operands of later queries of the shape.
struct PostgreSQLQueryCache: Sendable {
    /// The most shapes of each kind kept; past it, new shapes are translated on every use.
    static let limit = 256
    /// How many plans ``recent`` holds.
    static let recentLimit = 4

    private var plans: [PostgreSQLQueryShape: Kept] = [:]
    /// The plans used last, most recent first: a query is compared with their shapes before its
    /// own shape is made and hashed.
    private var recent: [Kept] = []
    private var answers: [PushDownKey: StorePushDown] = [:]

    /// A kept plan with its shape.
    private struct Kept: Sendable {
        let shape: PostgreSQLQueryShape
        let compiled: PostgreSQLCompiledQuery
    }

    private struct PushDownKey: Hashable, Sendable {
        let entityName: String
        let filter: StoreFilterShape
    }

    /// The query's plan: from the one kept for its shape, or translated (and kept when it qualifies).
    mutating func plan(
        for query: StoreQuery, layouts: [String: TableLayout], storeIdentifier: String
    ) throws -> PostgreSQLQueryPlan {
        for (position, kept) in recent.enumerated() {
            var operands: [StoreValue] = []
            guard kept.shape.matches(query, operands: &operands) else { continue }
            guard let binds = kept.compiled.binds(for: operands, storeIdentifier: storeIdentifier) else { break }
            if position > 0 {
                recent.remove(at: position)
                recent.insert(kept, at: 0)
            }
            return PostgreSQLQueryPlan(kept.compiled, query: query, binds: binds)
        }
        guard let shape = PostgreSQLQueryShape(query) else {
            return try PostgreSQLQueryPlan(query, layouts: layouts, storeIdentifier: storeIdentifier)
        }
        let operands = shape.operands
        if let kept = plans[shape], let binds = kept.compiled.binds(for: operands, storeIdentifier: storeIdentifier) {
            remember(kept)
            return PostgreSQLQueryPlan(kept.compiled, query: query, binds: binds)
        }
        var translator = FilterTranslator(layouts: layouts, storeIdentifier: storeIdentifier)
        let plan = try PostgreSQLQueryPlan(
            query, layouts: layouts, storeIdentifier: storeIdentifier, translator: &translator)
        guard plans.count < Self.limit, translator.readsOperands(operands) else { return plan }
        let kept = Kept(shape: shape, compiled: plan.compiled)
        plans[shape] = kept
        remember(kept)
        return plan
    }

    /// Puts a kept plan first among the recent ones.
    private mutating func remember(_ kept: Kept) {
        recent.removeAll { $0.compiled === kept.compiled }
        recent.insert(kept, at: 0)
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
