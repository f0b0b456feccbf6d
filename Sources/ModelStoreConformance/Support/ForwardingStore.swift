import Foundation
import ModelStore

/// A store that wraps an adapter's store and passes everything it does not change straight to it.
protocol ForwardingStore: DataStore where Snapshot == Inner.Store.Snapshot {
    associatedtype Inner: DataStoreConfiguration
    /// The adapter's store.
    var inner: Inner.Store { get }
}

extension ForwardingStore {
    var identifier: String { inner.identifier }
    var schema: Schema { inner.schema }

    func save(_ request: DataStoreSaveChangesRequest<Snapshot>) throws -> DataStoreSaveChangesResult<Snapshot> {
        try inner.save(request)
    }

    func erase() throws { try inner.erase() }

    func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: Snapshot] {
        try inner.cachedSnapshots(for: identifiers, editingState: editingState)
    }

    func initializeState(for editingState: EditingState) { inner.initializeState(for: editingState) }
    func invalidateState(for editingState: EditingState) { inner.invalidateState(for: editingState) }
}

extension ForwardingStore where Inner.Store: DataStoreBatching {
    func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws { try inner.delete(request) }
    func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws { try inner.update(request) }
    func insert(_ request: DataStoreBatchInsertRequest<Snapshot>) throws -> [PersistentIdentifier] {
        try inner.insert(request)
    }
}
