import Foundation
import ModelStore

/// A store that wraps another store and passes every requirement it does not implement itself straight
/// to it: the base of the suite's test doubles (``SpyStore``, ``FallbackStore``), and of an adapter
/// author's own (a store that fails on the third save, one that counts fetches).
///
/// Conform a final class, give it the wrapped store as ``inner``, and implement only what the double
/// changes; everything else (saving, erasing, the cache, batch requests when the inner store is
/// `DataStoreBatching`) is forwarded by the defaults of this protocol's extensions.
///
/// Declare `DataStoreQuerying` exactly when the wrapped store does
/// (`extension MyDouble: DataStoreQuerying where Inner.Store: DataStoreQuerying`, forwarding
/// `queryCapabilities`), as ``SpyStore`` does. Otherwise the context sends the double descriptors
/// instead of pushed queries, and a querying store that reads only the query answers without the predicate.
///
/// ```swift
/// final class FailingStore<Inner: DataStoreConfiguration>: ForwardingStore {
///     let inner: Inner.Store
///     let configuration: FailingConfiguration<Inner>
///     // init, and the fetch requirements, forwarded or changed…
/// }
/// ```
public protocol ForwardingStore: DataStore where Snapshot == Inner.Store.Snapshot {
    /// The configuration type of the wrapped store.
    associatedtype Inner: DataStoreConfiguration
    /// The wrapped store: every requirement the double does not implement goes to it.
    var inner: Inner.Store { get }
}

extension ForwardingStore {
    /// The wrapped store's identifier, so identifiers minted through the double and through the store agree.
    public var identifier: String { inner.identifier }
    /// The wrapped store's schema.
    public var schema: Schema { inner.schema }

    /// Forwards the save to the wrapped store.
    public func save(_ request: DataStoreSaveChangesRequest<Snapshot>) throws -> DataStoreSaveChangesResult<Snapshot> {
        try inner.save(request)
    }

    /// Forwards `erase()` to the wrapped store.
    public func erase() throws { try inner.erase() }

    /// Forwards the cache lookup to the wrapped store.
    public func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: Snapshot] {
        try inner.cachedSnapshots(for: identifiers, editingState: editingState)
    }

    /// Forwards to the wrapped store.
    public func initializeState(for editingState: EditingState) { inner.initializeState(for: editingState) }
    /// Forwards to the wrapped store.
    public func invalidateState(for editingState: EditingState) { inner.invalidateState(for: editingState) }
}

extension ForwardingStore where Inner.Store: DataStoreBatching {
    /// Forwards the batch delete to the wrapped store.
    public func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        try inner.delete(request)
    }
    /// Forwards the batch update to the wrapped store.
    public func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        try inner.update(request)
    }
    /// Forwards the batch insert to the wrapped store.
    public func insert(_ request: DataStoreBatchInsertRequest<Snapshot>) throws -> PersistentIdentifiers {
        try inner.insert(request)
    }
}
