import Foundation
import ModelStore

/// What a spied store was asked and what it refused, shared between a test and its ``SpyStore``.
///
/// ```swift
/// let log = SpyLog()
/// let container = try ModelContainer(
///     for: schema, configurations: [SpyConfiguration(inner: MyStoreConfiguration(url: url), log: log)])
/// _ = try ModelContext(container).fetch(descriptor)
/// #expect(!log.all.contains { $0.refusal == .preferInMemoryFilter })
/// ```
public final class SpyLog: Sendable {
    /// One fetch, count or identifier request the store received.
    public struct Fetch: Sendable {
        /// The entity fetched.
        public var entityName: String
        /// Whether the request carried a pushed filter (querying stores) or a predicate (other stores).
        public var hadFilter: Bool
        /// The kinds of the pushed filter (empty for a store that receives descriptors, or no filter).
        public var filterKinds: StoreFilter.Kinds
        /// Whether the request carried a pushed sort or sort descriptors.
        public var hadSort: Bool
        /// The refusal the store threw, if any (`preferInMemoryFilter` or `preferInMemorySort`).
        public var refusal: DataStoreError.Code?
    }

    private let fetches = LockedValue<[Fetch]>([])

    /// An empty log.
    public init() {}

    /// Records a request.
    public func record(_ fetch: Fetch) { fetches.withLock { $0.append(fetch) } }
    /// Forgets every request recorded so far.
    public func reset() { fetches.withLock { $0.removeAll() } }
    /// Every request recorded, in order.
    public var all: [Fetch] { fetches.withLock { $0 } }
}

/// Wraps any store's configuration so that the store records, in a ``SpyLog``, the fetches it
/// receives and the ones it refuses: a test double for checking what a context pushes to an adapter
/// and what the adapter declines.
public struct SpyConfiguration<Inner: DataStoreConfiguration>: DataStoreConfiguration {
    /// The store this configuration opens.
    public typealias Store = SpyStore<Inner>
    /// The wrapped store's configuration.
    public var inner: Inner
    /// Where the store records requests.
    public let log: SpyLog

    /// Wraps a configuration, recording into `log`.
    public init(inner: Inner, log: SpyLog) {
        self.inner = inner
        self.log = log
    }

    /// The wrapped configuration's name.
    public var name: String { inner.name }
    /// The wrapped configuration's schema.
    public var schema: Schema? {
        get { inner.schema }
        set { inner.schema = newValue }
    }

    /// Validates the wrapped configuration.
    public func validate() throws { try inner.validate() }

    /// Equal when the wrapped configurations are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.inner == rhs.inner }
    /// Hashes the wrapped configuration.
    public func hash(into hasher: inout Hasher) { hasher.combine(inner) }
}

/// The store of a ``SpyConfiguration``: forwards everything, records fetches in its log, and is
/// `DataStoreQuerying` and `DataStoreBatching` exactly when the wrapped store is.
public final class SpyStore<Inner: DataStoreConfiguration>: ForwardingStore {
    /// The configuration type.
    public typealias Configuration = SpyConfiguration<Inner>
    /// The wrapped store's snapshot type.
    public typealias Snapshot = Inner.Store.Snapshot

    /// The wrapped store.
    public let inner: Inner.Store
    /// The configuration the store was opened with.
    public let configuration: SpyConfiguration<Inner>

    /// Opens the wrapped store.
    public init(_ configuration: SpyConfiguration<Inner>, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.inner = try Inner.Store(configuration.inner, migrationPlan: migrationPlan)
        self.configuration = configuration
    }

    private func recording<T: PersistentModel, Result>(
        _ request: DataStoreFetchRequest<T>, _ body: () throws -> Result
    ) throws -> Result {
        var fetch = SpyLog.Fetch(
            entityName: Schema.entityName(for: T.self),
            hadFilter: request.query.map { $0.filter != nil } ?? (request.descriptor.predicate != nil),
            filterKinds: request.query?.filter?.kinds ?? [],
            hadSort: request.query.map { !$0.sort.isEmpty } ?? !request.descriptor.sortBy.isEmpty,
            refusal: nil)
        do {
            let result = try body()
            configuration.log.record(fetch)
            return result
        } catch let error as DataStoreError
            where error.code == .preferInMemoryFilter || error.code == .preferInMemorySort
        {
            fetch.refusal = error.code
            configuration.log.record(fetch)
            throw error
        }
    }

    /// Records the request and forwards it.
    public func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<
        T, Snapshot
    > {
        try recording(request) { try inner.fetch(request) }
    }

    /// Records the request and forwards it.
    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try recording(request) { try inner.fetchCount(request) }
    }

    /// Records the request and forwards it.
    public func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws
        -> [PersistentIdentifier]
    {
        try recording(request) { try inner.fetchIdentifiers(request) }
    }
}

extension SpyStore: DataStoreQuerying where Inner.Store: DataStoreQuerying {
    /// The wrapped store's capabilities.
    public var queryCapabilities: QueryCapabilities { inner.queryCapabilities }
}

extension SpyStore: DataStoreBatching where Inner.Store: DataStoreBatching {}
