import Foundation

/// A store-neutral query over stored property names: what a ``DataStoreQuerying`` store runs.
///
/// The context builds it from a ``FetchDescriptor``: ``filter`` holds the conditions the store said
/// it can run (see ``QueryCapabilities``), ``sort`` the translated sort when the store sorts, and
/// ``offset`` and ``limit`` only when nothing is left for the context to filter afterwards.
///
/// A store applies a query exactly (rule 2 of ``DataStoreQuerying``), whoever sends it; only a query
/// with ``allowsInexactMatches`` lets it return a superset, for the conditions it answers
/// ``StorePushDown/inexact`` for.
public struct StoreQuery: Sendable, Hashable, CustomStringConvertible {
    /// The entity to fetch.
    public var entityName: String
    /// The condition pushed to the store; `nil` matches every model.
    public var filter: StoreFilter?
    /// The order of the results; ties are broken by identifier. Empty: identifier order.
    public var sort: [StoreSortKey]
    /// How many results to skip.
    public var offset: Int
    /// The most results to return; `nil` returns all.
    public var limit: Int?
    /// The attributes the caller needs, when it needs fewer than all (``FetchDescriptor/propertiesToFetch``);
    /// `nil` for every property.
    ///
    /// The context sets it only when the store runs the whole query, so nothing evaluates the other
    /// attributes after the store. A store may then read only these attributes (relationships are
    /// always read), give the others their default values, and say so with
    /// ``DataStoreFetchResult/omitsUnrequestedProperties``; the context loads the rest of a model
    /// when one of its other attributes is first read. A store may also ignore it.
    public var propertiesToFetch: [String]?
    /// Whether the store may return a superset of the matches of each condition it answers
    /// ``StorePushDown/inexact`` for (what its native query selects), instead of checking the
    /// condition on each model: the caller checks those conditions again. `false` by default.
    ///
    /// The context sets it when it pushes an inexact condition, and then sends no ``offset`` or
    /// ``limit`` and counts on snapshots itself. Every other condition is still applied exactly; a
    /// store may ignore the flag and apply every condition exactly.
    public var allowsInexactMatches = false

    /// A query.
    public init(
        entityName: String, filter: StoreFilter? = nil, sort: [StoreSortKey] = [], offset: Int = 0, limit: Int? = nil
    ) {
        self.entityName = entityName
        self.filter = filter
        self.sort = sort
        self.offset = offset
        self.limit = limit
    }

    /// `Trip where budget > 100 sorted by name offset 0 limit 10`.
    public var description: String {
        var text = entityName
        if let filter { text += " where \(filter)" }
        if !sort.isEmpty { text += " sorted by " + sort.map(\.description).joined(separator: ", ") }
        if offset > 0 { text += " offset \(offset)" }
        if let limit { text += " limit \(limit)" }
        if let propertiesToFetch { text += " reading " + propertiesToFetch.joined(separator: ", ") }
        if allowsInexactMatches { text += " (inexact matches allowed)" }
        return text
    }
}

/// One key of a store-neutral sort.
///
/// Values compare as the Swift type they came from under `SortDescriptor`: `nil` first, numbers
/// numerically (a `NaN` is neither before nor after anything), strings by ``comparison``. Keys
/// that tie fall through to the next key, and finally to the identifier.
public struct StoreSortKey: Sendable, Hashable, CustomStringConvertible {
    /// How strings compare.
    public enum Comparison: Sendable, Hashable {
        /// Swift's `<` on `String`: what `SortDescriptor(\.name)` uses on Linux.
        case binary
        /// Foundation's `String.StandardComparator.lexical`.
        case lexical
        /// Foundation's `localizedStandardCompare(_:)`: what `SortDescriptor(\.name)` uses on Apple platforms.
        case localizedStandard
        /// Foundation's `caseInsensitiveCompare(_:)`.
        case caseInsensitive
    }
    /// The stored property to sort by.
    public var property: String
    /// Ascending (`true`) or descending. `nil` sorts first ascending and last descending.
    public var ascending: Bool
    /// How strings compare.
    public var comparison: Comparison

    /// A sort key.
    public init(property: String, ascending: Bool = true, comparison: Comparison = .binary) {
        self.property = property
        self.ascending = ascending
        self.comparison = comparison
    }

    /// `name ascending`, `name descending (lexical)`.
    public var description: String {
        property + (ascending ? " ascending" : " descending") + (comparison == .binary ? "" : " (\(comparison))")
    }
}
