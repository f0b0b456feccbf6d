import Foundation
import ModelStore

/// Evaluates store-neutral filters and sorts directly on snapshots, without materialising models.
///
/// An adapter that holds `DefaultSnapshot`s gets native filtering by compiling a query's filter
/// once and calling ``matches(_:)`` per row:
///
/// ```swift
/// let evaluator = try SnapshotEvaluator(filter: filter, entity: entity, schema: schema) { id in
///     table.snapshot(for: id)
/// }
/// let matching = rows.filter(evaluator.matches)
/// try SnapshotEvaluator.sort(&matching, by: query.sort, entity: entity)
/// ```
///
/// The filter is compiled into closures with every property slot resolved, so evaluation does no
/// name lookups; its results are those of the Swift predicate it was translated from (see
/// `StoreFilter`).
public struct SnapshotEvaluator: Sendable {
    private let predicate: CompiledFilter.Predicate

    /// Compiles a filter over an entity.
    ///
    /// - Parameters:
    ///   - filter: the condition.
    ///   - entity: the entity of the snapshots it will see.
    ///   - schema: the schema, to resolve paths through relationships at compile time.
    ///   - resolve: the snapshot of a related model, for paths through relationships and for
    ///     `StoreFilter.any(_:_:)` and `StoreFilter.all(_:_:)`; `nil` when the filter has none.
    /// - Throws: `DataStoreError.invalidPredicate` naming a property the entity does not store, or a
    ///   relationship used where an attribute is expected; `DataStoreError.unsupportedFeature` for
    ///   a filter through relationships without `resolve`.
    public init(
        filter: StoreFilter, entity: Schema.Entity, schema: Schema? = nil,
        resolve: (@Sendable (PersistentIdentifier) -> DefaultSnapshot?)? = nil
    ) throws {
        let compiler = CompiledFilter(schema: schema, resolve: resolve)
        predicate = try compiler.compile(filter, entity: entity)
    }

    /// Whether the snapshot matches the filter.
    public func matches(_ snapshot: DefaultSnapshot) -> Bool { predicate(snapshot) }

    /// Sorts snapshots by the keys, breaking ties by identifier; with no keys, by identifier.
    ///
    /// Throws `DataStoreError.invalidPredicate` for a key that is not a stored attribute of the entity.
    public static func sort(
        _ snapshots: inout [DefaultSnapshot], by keys: [StoreSortKey], entity: Schema.Entity
    ) throws {
        try SnapshotOrdering.sort(&snapshots, by: keys, entity: entity)
    }

    /// Compares two stored values as `SortDescriptor` compares the Swift values they came from:
    /// `nil` first, a `NaN` tied with everything, strings under the comparison.
    public static func compare(
        _ lhs: StoreValue, _ rhs: StoreValue, _ comparison: StoreSortKey.Comparison
    ) -> ComparisonResult {
        ValueSemantics.sortOrder(lhs, rhs, comparison)
    }

    /// Applies an offset and a limit.
    public static func window<Element>(_ items: [Element], offset: Int, limit: Int?) -> [Element] {
        SnapshotOrdering.window(items, offset: offset, limit: limit)
    }
}
