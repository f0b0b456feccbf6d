import Foundation
import ModelStore

/// What a spied store was asked and what it refused.
final class SpyLog: Sendable {
    struct Fetch: Sendable {
        /// The entity fetched.
        var entityName: String
        /// Whether the request carried a pushed filter (querying stores) or a predicate (other stores).
        var hadFilter: Bool
        /// Whether the request carried a pushed sort or sort descriptors.
        var hadSort: Bool
        /// The refusal the store threw, if any (`preferInMemoryFilter` or `preferInMemorySort`).
        var refusal: DataStoreError.Code?
    }

    private let fetches = LockedValue<[Fetch]>([])

    func record(_ fetch: Fetch) { fetches.withLock { $0.append(fetch) } }
    func reset() { fetches.withLock { $0.removeAll() } }
    var all: [Fetch] { fetches.withLock { $0 } }
}

/// Wraps an adapter's configuration so that its store records the fetches it receives and refuses.
struct SpyConfiguration<Inner: DataStoreConfiguration>: DataStoreConfiguration {
    typealias Store = SpyStore<Inner>
    var inner: Inner
    let log: SpyLog

    var name: String { inner.name }
    var schema: Schema? {
        get { inner.schema }
        set { inner.schema = newValue }
    }

    func validate() throws { try inner.validate() }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.inner == rhs.inner }
    func hash(into hasher: inout Hasher) { hasher.combine(inner) }
}

/// The store of a ``SpyConfiguration``: forwards everything, and is `DataStoreQuerying` and
/// `DataStoreBatching` exactly when the adapter's store is.
final class SpyStore<Inner: DataStoreConfiguration>: ForwardingStore {
    typealias Configuration = SpyConfiguration<Inner>
    typealias Snapshot = Inner.Store.Snapshot

    let inner: Inner.Store
    let configuration: SpyConfiguration<Inner>

    init(_ configuration: SpyConfiguration<Inner>, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.inner = try Inner.Store(configuration.inner, migrationPlan: migrationPlan)
        self.configuration = configuration
    }

    private func recording<T: PersistentModel, Result>(
        _ request: DataStoreFetchRequest<T>, _ body: () throws -> Result
    ) throws -> Result {
        var fetch = SpyLog.Fetch(
            entityName: Schema.entityName(for: T.self),
            hadFilter: request.query.map { $0.filter != nil } ?? (request.descriptor.predicate != nil),
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

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, Snapshot> {
        try recording(request) { try inner.fetch(request) }
    }

    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try recording(request) { try inner.fetchCount(request) }
    }

    func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier] {
        try recording(request) { try inner.fetchIdentifiers(request) }
    }
}

extension SpyStore: DataStoreQuerying where Inner.Store: DataStoreQuerying {
    var queryCapabilities: QueryCapabilities { inner.queryCapabilities }
}

extension SpyStore: DataStoreBatching where Inner.Store: DataStoreBatching {}
