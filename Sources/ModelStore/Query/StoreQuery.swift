import Foundation

/// A store-neutral query over stored property names: what a ``DataStoreQuerying`` store runs.
public struct StoreQuery: Sendable, Hashable {
    /// The entity to fetch.
    public var entityName: String
    /// The condition pushed to the store; `nil` matches every model.
    public var filter: StoreFilter?
    /// The order of the results; ties are broken by identifier.
    public var sort: [StoreSortKey]
    /// How many results to skip.
    public var offset: Int
    /// The most results to return.
    public var limit: Int?

    /// A query.
    public init(entityName: String, filter: StoreFilter? = nil, sort: [StoreSortKey] = [], offset: Int = 0, limit: Int? = nil) {
        self.entityName = entityName
        self.filter = filter
        self.sort = sort
        self.offset = offset
        self.limit = limit
    }
}

/// One key of a store-neutral sort.
public struct StoreSortKey: Sendable, Hashable {
    /// How strings compare.
    public enum Comparison: Sendable, Hashable {
        /// Unicode scalar order, as Swift's `<` on `String`.
        case binary
        /// Foundation's localized standard order (the default of `SortDescriptor` on `String`).
        case localizedStandard
        /// Case-insensitive order.
        case caseInsensitive
    }
    /// The stored property to sort by.
    public var property: String
    /// Ascending (`true`) or descending.
    public var ascending: Bool
    /// How strings compare.
    public var comparison: Comparison

    /// A sort key.
    public init(property: String, ascending: Bool = true, comparison: Comparison = .binary) {
        self.property = property
        self.ascending = ascending
        self.comparison = comparison
    }
}

/// A store-neutral filter expression over stored property names.
public indirect enum StoreFilter: Sendable, Hashable {
    /// Matches everything (`true`) or nothing (`false`).
    case constant(Bool)
    /// Matches the models with these identifiers.
    case identifiers(Set<PersistentIdentifier>)
    /// Matches models whose property equals the value.
    case equal(String, StoreValue)
    /// Matches models that every operand matches.
    case and([StoreFilter])
    /// Matches models that any operand matches.
    case or([StoreFilter])
    /// Matches models the operand does not match.
    case not(StoreFilter)
}

/// A store that runs store-neutral queries, so the context can push predicates and sorts into it.
public protocol DataStoreQuerying: DataStore {
    /// What the store can run natively.
    var queryCapabilities: QueryCapabilities { get }
}

/// What a ``DataStoreQuerying`` store runs natively.
public struct QueryCapabilities: Sendable, Hashable {
    /// Whether the store runs every ``StoreFilter``.
    public var filters: Bool
    /// Whether the store sorts.
    public var sorting: Bool
    /// Whether the store itself rejects saves that violate unique constraints, atomically.
    /// When `false`, the context checks uniqueness before every save.
    public var enforcesUniqueness: Bool

    /// Capabilities.
    public init(filters: Bool = true, sorting: Bool = true, enforcesUniqueness: Bool = false) {
        self.filters = filters
        self.sorting = sorting
        self.enforcesUniqueness = enforcesUniqueness
    }

    /// Everything: what stores built on ``SnapshotTable`` declare.
    public static let all = QueryCapabilities(enforcesUniqueness: true)
}
