import Foundation

/// What a fetch would run where: which conditions a store runs, which the context evaluates on
/// snapshots or on models, where the sort and the window are applied, and which index the store uses.
///
/// Ask for one with ``ModelContext/explain(_:)``; it runs nothing and changes nothing. Printed, it
/// reads like this:
///
/// ```text
/// Fetch of 'Trip' from store 'memory' (InMemoryStore; runs filters [...], sorting, offset/limit, uniqueness)
///   store query: Trip where (budget > 100.0 && destination.city == "Rome") sorted by name ascending limit 10
///   access path: orderedIndexRange(budget) ~120 rows
///   condition 1 [store]: $0.budget > 100.0
///   condition 2 [store]: $0.destination.flatMap { $1 in $1.city } == "Rome"
///   condition 3 [models]: $0.name.count > 3 (not translatable to a store filter)
///   predicate on models: yes, the whole predicate, after the store's and the snapshot filters
///   sort: store [name ascending]
///   offset/limit: store
/// ```
///
/// How to read it:
/// - **store query** is exactly the ``StoreQuery`` the store receives. Conditions marked
///   `[store]` are in its filter; `[store, inexact]` ones are also re-checked by the context on
///   the snapshots returned, and the query then lets the store return a superset for them
///   (``StoreQuery/allowsInexactMatches``).
/// - `[snapshots]` conditions run in the context on the returned snapshots, without creating
///   models (the store does not run their kind of filter; see ``QueryCapabilities``).
/// - `[models]` conditions could not be translated (or must wait for one that may fail); when
///   any exists, the context evaluates the whole `Predicate` on the models that remain.
/// - **access path** is the store's own account of the scan or index it uses, when it gives one.
/// - **sort** and **offset/limit** say whether the store, the context on snapshots, or the context
///   on models applies them. Offset and limit reach the store only when nothing is left to filter
///   or sort afterwards and the context has no unsaved changes of the entity.
public struct QueryExplanation: Sendable, CustomStringConvertible {
    /// Where a part of a fetch runs.
    public enum Location: String, Sendable, Hashable {
        /// In the store.
        case store
        /// In the context, on the snapshots the store returned, before models exist.
        case snapshots
        /// In the context, on materialised models.
        case models
        /// Nowhere: there is nothing to do.
        case none
    }

    /// One operand of the predicate's top-level `&&`.
    public struct Condition: Sendable, Hashable, CustomStringConvertible {
        /// The condition in Swift-like notation, `$0` being the fetched model.
        public var expression: String
        /// Its store-neutral form, if it translates.
        public var filter: StoreFilter?
        /// Where it runs.
        public var location: Location
        /// Whether the store runs it inexactly, so the context re-checks it on snapshots.
        public var isInexact: Bool
        /// Why it runs there, when it does not run in the store.
        public var reason: String?

        /// `[store] $0.budget > 100.0`.
        public var description: String {
            var text = "[\(location.rawValue)\(isInexact ? ", inexact" : "")] \(expression)"
            if let filter, location != .models, "\(filter)" != expression { text += "  =>  \(filter)" }
            if let reason { text += " (\(reason))" }
            return text
        }
    }

    /// The fetched entity.
    public var entityName: String
    /// The configuration name of the store that holds the entity.
    public var storeName: String
    /// The store's type.
    public var storeType: String
    /// What the store declares it runs, or `nil` for a SwiftData-style store (not ``DataStoreQuerying``).
    public var capabilities: QueryCapabilities?
    /// The query the store receives (for a ``DataStoreQuerying`` store).
    public var storeQuery: StoreQuery?
    /// How the store finds the rows, if it says.
    public var accessPath: StoreAccessPath?
    /// The predicate's top-level conditions, in order.
    public var conditions: [Condition]
    /// The conditions the context evaluates on snapshots (unsupported and inexact ones).
    public var snapshotFilter: StoreFilter?
    /// Whether the context evaluates the whole `Predicate` on materialised models.
    public var evaluatesPredicateOnModels: Bool
    /// Where the sort runs (``Location/none`` without a sort).
    public var sortLocation: Location
    /// The translated sort, when the sort translates.
    public var sortKeys: [StoreSortKey]?
    /// Where offset and limit are applied (``Location/none`` without them).
    public var windowLocation: Location
    /// Further remarks (pending changes, SwiftData-style fallbacks).
    public var notes: [String]
    /// The stages the fetch runs, in order: the same list ``ModelContext/fetch(_:)`` executes.
    public var stages: [QueryStage] = []

    /// The explanation as indented lines; see the type's documentation.
    public var description: String {
        var lines: [String] = []
        let runs = capabilities.map { "runs \($0)" } ?? "SwiftData-style: gets the descriptor"
        lines.append("Fetch of '\(entityName)' from store '\(storeName)' (\(storeType); \(runs))")
        if let storeQuery { lines.append("  store query: \(storeQuery)") }
        if let accessPath { lines.append("  access path: \(accessPath)") }
        for (index, condition) in conditions.enumerated() { lines.append("  condition \(index + 1) \(condition)") }
        if let snapshotFilter { lines.append("  on snapshots: \(snapshotFilter)") }
        lines.append(
            "  predicate on models: "
                + (evaluatesPredicateOnModels
                    ? "yes, the whole predicate, after the store's and the snapshot filters" : "no"))
        switch sortLocation {
        case .none: lines.append("  sort: none (identifier order)")
        case .models: lines.append("  sort: models (SortDescriptor.compare)")
        default:
            let keys = (sortKeys ?? []).map(\.description).joined(separator: ", ")
            lines.append("  sort: \(sortLocation.rawValue) [\(keys)]")
        }
        lines.append("  offset/limit: \(windowLocation == .none ? "none" : windowLocation.rawValue)")
        if !stages.isEmpty { lines.append("  stages: " + stages.map(\.description).joined(separator: " -> ")) }
        for note in notes { lines.append("  note: \(note)") }
        return lines.joined(separator: "\n")
    }
}
