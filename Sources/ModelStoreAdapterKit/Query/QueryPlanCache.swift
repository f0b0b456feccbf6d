import Foundation
import ModelStore

/// What a translated query depends on: the entity, the filter's shape, the sort and, for a store
/// whose statement writes the window in, whether it has one. Queries that differ only in their
/// operands' values (and the window's numbers) share one shape, and so one plan.
public struct StoreQueryShape: Hashable, Sendable {
    /// The entity queried.
    public let entityName: String
    /// The filter's shape, `nil` for a query without a filter.
    public let filter: StoreFilterShape?
    /// The sort.
    public let sort: [StoreSortKey]
    /// Whether the query has an offset or a limit; always `false` for a cache that does not tell
    /// windows apart (``QueryPlanCache/init(distinguishesWindows:limit:recentLimit:)``).
    public let hasWindow: Bool

    /// The query's shape, or `nil` when its filter has none (`StoreFilterShape(_:)`).
    ///
    /// - Parameters:
    ///   - query: The query.
    ///   - distinguishesWindows: Whether queries with and without an offset or a limit get
    ///     different shapes.
    @inlinable
    public init?(_ query: StoreQuery, distinguishesWindows: Bool) {
        if let filter = query.filter {
            guard let shape = StoreFilterShape(filter) else { return nil }
            self.filter = shape
        } else {
            self.filter = nil
        }
        entityName = query.entityName
        sort = query.sort
        hasWindow = distinguishesWindows && (query.limit != nil || query.offset > 0)
    }

    /// The filter's operands, in the order a plan's parameters name them.
    @inlinable
    public var operands: [StoreValue] { filter?.operands ?? [] }

    /// Whether the shape `query` would get equals this one, decided without making it; when it
    /// does, the query's filter operands are appended to `operands`, in the order of ``operands``.
    @inlinable
    public func matches(_ query: StoreQuery, distinguishesWindows: Bool, operands: inout [StoreValue]) -> Bool {
        guard hasWindow == (distinguishesWindows && (query.limit != nil || query.offset > 0)),
            entityName == query.entityName, sort == query.sort
        else { return false }
        switch (filter, query.filter) {
        case (nil, nil): return true
        case (let shape?, let filter?): return shape.matches(filter, operands: &operands)
        default: return false
        }
    }
}

/// The plans a SQL store keeps per query shape, and its answers to
/// `DataStoreQuerying.pushDown(_:entityName:)` per condition shape, so that a filter is translated
/// once per shape rather than on every fetch.
///
/// A fetch asks ``reuse(_:bind:)`` first: the plans used last are compared with the query before
/// its shape is made and hashed, which costs more than the rest of preparing it. On a miss, the
/// store translates the query and, when the plan serves every query of the shape (its parameters
/// name their operands, and nothing is left to evaluate per query), keeps it with ``keep(_:for:)``.
public struct QueryPlanCache<Plan: AnyObject> {
    /// The most shapes of each kind kept; past it, new shapes are translated on every use.
    public let limit: Int
    /// How many plans are compared before a query's shape is made.
    public let recentLimit: Int
    /// Whether queries with and without a window get different plans.
    public let distinguishesWindows: Bool

    @usableFromInline var plans: [StoreQueryShape: Plan] = [:]
    @usableFromInline var recent: [(shape: StoreQueryShape, plan: Plan)] = []
    @usableFromInline var answers: [PushDownKey: StorePushDown] = [:]

    @usableFromInline
    struct PushDownKey: Hashable, Sendable {
        @usableFromInline let entityName: String
        @usableFromInline let filter: StoreFilterShape

        @usableFromInline
        init(entityName: String, filter: StoreFilterShape) {
            self.entityName = entityName
            self.filter = filter
        }
    }

    /// An empty cache.
    ///
    /// - Parameters:
    ///   - distinguishesWindows: Whether a plan's statement depends on the query having an offset or
    ///     a limit (it writes the window in), so windowed queries need their own plan.
    ///   - limit: The most plans, and the most push-down answers, kept.
    ///   - recentLimit: How many recently used plans a query is compared with first.
    public init(distinguishesWindows: Bool, limit: Int = 256, recentLimit: Int = 4) {
        self.distinguishesWindows = distinguishesWindows
        self.limit = limit
        self.recentLimit = recentLimit
    }

    /// What ``reuse(_:bind:)`` found for a query.
    public enum Lookup<Bound> {
        /// A kept plan serves the query: what `bind` made of it and the query's operands.
        case reused(Bound)
        /// No kept plan serves it: translate the query, and keep the plan for this shape if it
        /// qualifies.
        case translate(StoreQueryShape)
        /// The query's filter has no shape: translate it, and keep nothing.
        case translateOnce
    }

    /// Looks for a kept plan that serves `query`: `bind` gets the plan and the query's operands and
    /// returns what the store runs, or `nil` when the operands cannot be bound to it.
    @inlinable
    public mutating func reuse<Bound>(
        _ query: StoreQuery, bind: (Plan, [StoreValue]) -> Bound?
    ) -> Lookup<Bound> {
        // By index, so that each entry is read in place rather than copied with its shape.
        for position in recent.indices {
            var operands: [StoreValue] = []
            guard recent[position].shape.matches(query, distinguishesWindows: distinguishesWindows, operands: &operands)
            else { continue }
            guard let bound = bind(recent[position].plan, operands) else { break }
            if position > 0 { recent.insert(recent.remove(at: position), at: 0) }
            return .reused(bound)
        }
        guard let shape = StoreQueryShape(query, distinguishesWindows: distinguishesWindows) else {
            return .translateOnce
        }
        if let plan = plans[shape], let bound = bind(plan, shape.operands) {
            remember(plan, shape)
            return .reused(bound)
        }
        return .translate(shape)
    }

    /// Whether another plan may be kept.
    @inlinable
    public var hasRoom: Bool { plans.count < limit }

    /// Keeps `plan` for every query of `shape`, unless the cache is full.
    @inlinable
    public mutating func keep(_ plan: Plan, for shape: StoreQueryShape) {
        guard hasRoom else { return }
        plans[shape] = plan
        remember(plan, shape)
    }

    /// Puts a kept plan first among the recent ones.
    @inlinable
    mutating func remember(_ plan: Plan, _ shape: StoreQueryShape) {
        recent.removeAll { $0.plan === plan }
        recent.insert((shape, plan), at: 0)
        if recent.count > recentLimit { recent.removeLast() }
    }

    /// The answer kept for a condition's shape, or the one `answer` gives (kept while there is room).
    @inlinable
    public mutating func pushDown(
        _ filter: StoreFilter, entityName: String, answer: () -> StorePushDown
    ) -> StorePushDown {
        guard let shape = StoreFilterShape(filter) else { return answer() }
        let key = PushDownKey(entityName: entityName, filter: shape)
        if let known = answers[key] { return known }
        let result = answer()
        if answers.count < limit { answers[key] = result }
        return result
    }
}

extension QueryPlanCache: Sendable where Plan: Sendable {}
