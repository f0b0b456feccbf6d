import Foundation

/// A store that runs store-neutral queries, so the context can push predicates and sorts into it.
///
/// Implementation requirements:
///
/// 1. ``queryCapabilities`` MUST name only what the store runs: every ``StoreFilter`` whose
///    ``StoreFilter/kinds`` are in ``QueryCapabilities/filters`` MUST be applied exactly, with the
///    semantics documented on ``StoreFilter``. **Why:** the context does not re-check what it
///    pushes exactly, so a store that approximates silently changes results. **Practical advice:**
///    declare a kind the store can only approximate in ``QueryCapabilities/inexactFilters``; the
///    context then re-checks it on what the store returns. A store whose answer depends on more
///    than the kinds (the properties' types, the operands' kinds) says so per condition in
///    ``pushDown(_:entityName:)`` and per sort in ``sortsExactly(by:entityName:)``: what it calls
///    exact MUST be applied exactly, and both answers MUST depend only on the entity and the
///    condition's ``StoreFilterShape`` (its structure and each operand's kind, not the operands'
///    values), without changing the store. **Why:** the answer is the split the fetch runs and
///    ``QueryExplanation`` prints, and the store may keep it (and its translation) per shape.
/// 2. When ``DataStoreFetchRequest/query`` is set, `fetch`, `fetchCount` and `fetchIdentifiers`
///    MUST apply it (filter, then sort with ties broken by identifier, then offset and limit) and
///    MUST NOT apply the descriptor's predicate, sort, offset or limit. Only when
///    ``StoreQuery/allowsInexactMatches`` is `true` MAY they return a superset of the matches of a
///    condition the store answers ``StorePushDown/inexact`` for. **Why:** other callers than the
///    context (the duplicate look-ups of a save, sync scopes, tools) send queries themselves and
///    rely on the answer; the context says when it checks the inexact conditions again.
/// 3. A store MUST NOT receive a sort unless ``QueryCapabilities/sorting`` is `true`, nor an offset
///    or limit unless ``QueryCapabilities/offsetAndLimit`` is `true`; without a sort it returns
///    snapshots in identifier order.
///
/// Stores built on `SnapshotTable` declare ``QueryCapabilities/all`` and implement
/// ``accessPath(for:)`` by asking the table.
public protocol DataStoreQuerying: DataStore {
    /// What the store runs natively.
    var queryCapabilities: QueryCapabilities { get }

    /// How the store runs one top-level condition of a fetch of an entity: exactly, inexactly (it
    /// returns a superset of the matches when the query allows it, and the context re-checks them;
    /// see ``StoreQuery/allowsInexactMatches``), or not at all (the context
    /// evaluates it). The context pushes the condition only when the answer is not
    /// ``StorePushDown/unsupported``; see rule 1.
    func pushDown(_ filter: StoreFilter, entityName: String) -> StorePushDown

    /// Whether the store sorts an entity's models by these keys exactly as `SortDescriptor` would;
    /// when it does not, the context sorts the snapshots the store returns. Asked only when
    /// ``QueryCapabilities/sorting`` is `true`; see rule 1.
    func sortsExactly(by keys: [StoreSortKey], entityName: String) -> Bool

    /// How the store would run a query (which index it would use), for ``QueryExplanation``;
    /// `nil` when the store does not say. It MUST NOT change the store.
    func accessPath(for query: StoreQuery) -> StoreAccessPath?
}

extension DataStoreQuerying {
    /// The store does not say how it runs queries.
    public func accessPath(for query: StoreQuery) -> StoreAccessPath? { nil }

    /// By the filter's kinds: exactly when ``QueryCapabilities/filters`` holds them all, inexactly
    /// when ``QueryCapabilities/inexactFilters`` holds the rest.
    public func pushDown(_ filter: StoreFilter, entityName: String) -> StorePushDown {
        StorePushDown(filter.kinds, capabilities: queryCapabilities)
    }

    /// ``QueryCapabilities/sorting``: every key sorts exactly when the store sorts.
    public func sortsExactly(by keys: [StoreSortKey], entityName: String) -> Bool { queryCapabilities.sorting }
}

/// How a ``DataStoreQuerying`` store runs one condition: the store's answer to
/// ``DataStoreQuerying/pushDown(_:entityName:)``, which decides where the condition runs.
public enum StorePushDown: Sendable, Hashable {
    /// The store applies the condition exactly: the context does not check it again.
    case exact
    /// The store's native query selects a superset of the condition's matches: it returns that
    /// superset when ``StoreQuery/allowsInexactMatches`` is set, and the context re-checks it.
    case inexact
    /// The store does not run the condition: the context evaluates it, on snapshots or models.
    case unsupported

    /// The answer a store gives by kinds alone: what its capabilities declare.
    public init(_ kinds: StoreFilter.Kinds, capabilities: QueryCapabilities) {
        if capabilities.filters.isSuperset(of: kinds) {
            self = .exact
        } else if capabilities.filters.union(capabilities.inexactFilters).isSuperset(of: kinds) {
            self = .inexact
        } else {
            self = .unsupported
        }
    }
}

/// What a ``DataStoreQuerying`` store runs natively: the context pushes exactly that, and
/// evaluates the rest on snapshots or models.
public struct QueryCapabilities: Sendable, Hashable, CustomStringConvertible {
    /// The kinds of filter the store applies exactly.
    public var filters: StoreFilter.Kinds
    /// The kinds of filter the store's native query can only narrow to a superset of the matches;
    /// the context pushes them, allows the superset (``StoreQuery/allowsInexactMatches``) and
    /// re-checks the results on snapshots.
    public var inexactFilters: StoreFilter.Kinds
    /// Whether the store sorts by ``StoreQuery/sort`` (every key and string comparison).
    public var sorting: Bool
    /// Whether the store applies ``StoreQuery/offset`` and ``StoreQuery/limit``.
    public var offsetAndLimit: Bool
    /// Whether the store itself rejects saves that violate unique constraints, atomically.
    /// When `false`, the context checks uniqueness before every save.
    public var enforcesUniqueness: Bool

    /// Capabilities; by default everything but uniqueness.
    public init(
        filters: StoreFilter.Kinds = .all, inexactFilters: StoreFilter.Kinds = [], sorting: Bool = true,
        offsetAndLimit: Bool = true, enforcesUniqueness: Bool = false
    ) {
        self.filters = filters
        self.inexactFilters = inexactFilters
        self.sorting = sorting
        self.offsetAndLimit = offsetAndLimit
        self.enforcesUniqueness = enforcesUniqueness
    }

    /// Everything, uniqueness included: what stores built on `SnapshotTable` declare.
    public static let all = QueryCapabilities(enforcesUniqueness: true)

    /// Nothing: the store returns every snapshot of an entity, and the context does the rest.
    public static let none = QueryCapabilities(filters: [], sorting: false, offsetAndLimit: false)

    /// `filters [...], inexact [...], sorting, offset/limit, uniqueness`.
    public var description: String {
        var parts = ["filters \(filters)"]
        if !inexactFilters.isEmpty { parts.append("inexact \(inexactFilters)") }
        if sorting { parts.append("sorting") }
        if offsetAndLimit { parts.append("offset/limit") }
        if enforcesUniqueness { parts.append("uniqueness") }
        return parts.joined(separator: ", ")
    }
}

/// How a store reaches the rows of a query: a scan or an index. Reported by
/// ``DataStoreQuerying/accessPath(for:)`` and shown in ``QueryExplanation``.
public struct StoreAccessPath: Sendable, Hashable, CustomStringConvertible {
    /// The way rows are found.
    public enum Kind: String, Sendable, Hashable {
        /// Every row of the entity is read.
        case scan
        /// Rows are looked up by identifier.
        case identifiers
        /// One row is looked up in a unique index.
        case uniqueIndex
        /// Rows are looked up in a hash index (equality or membership).
        case hashIndex
        /// A range of an ordered index is read.
        case orderedIndexRange
        /// An ordered index is read in sort order until the limit is reached.
        case orderedIndexSort
    }
    /// The way rows are found.
    public var kind: Kind
    /// The properties of the index used, if any.
    public var properties: [String]
    /// How many rows the store expects to read, if it knows.
    public var estimatedRows: Int?

    /// An access path.
    public init(kind: Kind, properties: [String] = [], estimatedRows: Int? = nil) {
        self.kind = kind
        self.properties = properties
        self.estimatedRows = estimatedRows
    }

    /// `hashIndex(last) ~3 rows`.
    public var description: String {
        var text = kind.rawValue
        if !properties.isEmpty { text += "(" + properties.joined(separator: ", ") + ")" }
        if let estimatedRows { text += " ~\(estimatedRows) rows" }
        return text
    }
}
