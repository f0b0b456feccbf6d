import Foundation
import ModelStore

/// Wraps an adapter's configuration so that its store refuses every predicate and sort, the way a
/// SwiftData custom store without query support does: every fetch then goes through the context's
/// in-memory fallback, while reads without a predicate or sort and every write reach the adapter.
struct FallbackConfiguration<Inner: DataStoreConfiguration>: DataStoreConfiguration {
    typealias Store = FallbackStore<Inner>
    var inner: Inner

    var name: String { inner.name }
    var schema: Schema? {
        get { inner.schema }
        set { inner.schema = newValue }
    }

    func validate() throws { try inner.validate() }
}

/// The store of a ``FallbackConfiguration``: not `DataStoreQuerying`, so the context sends it
/// descriptors, and it throws `preferInMemoryFilter` / `preferInMemorySort` for any predicate or sort.
final class FallbackStore<Inner: DataStoreConfiguration>: ForwardingStore {
    typealias Configuration = FallbackConfiguration<Inner>
    typealias Snapshot = Inner.Store.Snapshot

    let inner: Inner.Store
    let configuration: FallbackConfiguration<Inner>

    init(_ configuration: FallbackConfiguration<Inner>, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.inner = try Inner.Store(configuration.inner, migrationPlan: migrationPlan)
        self.configuration = configuration
    }

    /// The request as the inner store receives it, or the refusal.
    private func forwarded<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchRequest<T> {
        if request.descriptor.predicate != nil { throw DataStoreError.preferInMemoryFilter }
        if !request.descriptor.sortBy.isEmpty { throw DataStoreError.preferInMemorySort }
        var forwarded = request
        if inner is any DataStoreQuerying {
            forwarded.query = StoreQuery(
                entityName: Schema.entityName(for: T.self), offset: request.descriptor.fetchOffset ?? 0,
                limit: request.descriptor.fetchLimit)
        }
        return forwarded
    }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, Snapshot> {
        try inner.fetch(forwarded(request))
    }

    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try inner.fetchCount(forwarded(request))
    }

    func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier] {
        try inner.fetchIdentifiers(forwarded(request))
    }
}

extension FallbackStore: DataStoreBatching where Inner.Store: DataStoreBatching {}
