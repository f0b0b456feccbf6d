import Foundation
import ModelStore

/// Wraps any store's configuration so that the store refuses every predicate and sort, the way a
/// SwiftData custom store without query support does: every fetch then goes through the context's
/// in-memory fallback, while reads without a predicate or sort and every write reach the wrapped store.
///
/// A test double for adapter authors: open the same data with and without it and compare, to show
/// that what the adapter pushes down selects what the context's own evaluation selects.
///
/// ```swift
/// let configuration = FallbackConfiguration(inner: MyStoreConfiguration(url: url))
/// let container = try ModelContainer(for: schema, configurations: [configuration])
/// ```
public struct FallbackConfiguration<Inner: DataStoreConfiguration>: DataStoreConfiguration {
    /// The store this configuration opens.
    public typealias Store = FallbackStore<Inner>
    /// The wrapped store's configuration.
    public var inner: Inner

    /// Wraps a configuration.
    public init(inner: Inner) { self.inner = inner }

    /// The wrapped configuration's name.
    public var name: String { inner.name }
    /// The wrapped configuration's schema.
    public var schema: Schema? {
        get { inner.schema }
        set { inner.schema = newValue }
    }

    /// Validates the wrapped configuration.
    public func validate() throws { try inner.validate() }
}

/// The store of a ``FallbackConfiguration``: not `DataStoreQuerying`, so the context sends it
/// descriptors, and it throws `preferInMemoryFilter` / `preferInMemorySort` for any predicate or sort.
///
/// It is `DataStoreBatching` exactly when the wrapped store is. Fetches without a predicate or sort reach
/// the wrapped store with the window (offset and limit) only.
public final class FallbackStore<Inner: DataStoreConfiguration>: ForwardingStore {
    /// The configuration type.
    public typealias Configuration = FallbackConfiguration<Inner>
    /// The wrapped store's snapshot type.
    public typealias Snapshot = Inner.Store.Snapshot

    /// The wrapped store.
    public let inner: Inner.Store
    /// The configuration the store was opened with.
    public let configuration: FallbackConfiguration<Inner>

    /// Opens the wrapped store.
    public init(_ configuration: FallbackConfiguration<Inner>, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
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

    /// Refuses a predicate or a sort; forwards anything else.
    public func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<
        T, Snapshot
    > {
        try inner.fetch(forwarded(request))
    }

    /// Refuses a predicate or a sort; forwards anything else.
    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try inner.fetchCount(forwarded(request))
    }

    /// Refuses a predicate or a sort; forwards anything else.
    public func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws
        -> [PersistentIdentifier]
    {
        try inner.fetchIdentifiers(forwarded(request))
    }
}

extension FallbackStore: DataStoreBatching where Inner.Store: DataStoreBatching {}
