import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreInMemory

/// An asynchronous test store: an in-memory store behind `async` calls that suspend before they
/// answer, counting which form (sync or async) the context used.
final class SuspendingStore: DataStoreQuerying, DataStoreAsynchronous {
    struct Configuration: DataStoreConfiguration {
        typealias Store = SuspendingStore
        var name = "suspending"
        var schema: Schema?

        static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
        func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }

    typealias Snapshot = DefaultSnapshot
    let inner: InMemoryStore
    let configuration: Configuration
    /// How many requirements were called in each form.
    let calls = LockedValue<(sync: Int, async: Int)>((0, 0))

    init(_ configuration: Configuration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.configuration = configuration
        inner = try InMemoryStore(InMemoryStoreConfiguration(schema: configuration.schema), migrationPlan: nil)
    }

    var identifier: String { inner.identifier }
    var schema: Schema { inner.schema }
    var queryCapabilities: QueryCapabilities { inner.queryCapabilities }

    private func count(async: Bool) {
        calls.withLock {
            if async { $0.async += 1 } else { $0.sync += 1 }
        }
    }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<
        T, DefaultSnapshot
    > {
        count(async: false)
        return try inner.fetch(request)
    }

    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        count(async: false)
        return try inner.fetchCount(request)
    }

    func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier] {
        count(async: false)
        return try inner.fetchIdentifiers(request)
    }

    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<
        DefaultSnapshot
    > {
        count(async: false)
        return try inner.save(request)
    }

    func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        try inner.cachedSnapshots(for: identifiers, editingState: editingState)
    }

    func fetch<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) async throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        count(async: true)
        await Task.yield()
        return try inner.fetch(request)
    }

    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) async throws -> Int {
        count(async: true)
        await Task.yield()
        return try inner.fetchCount(request)
    }

    func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) async throws
        -> [PersistentIdentifier]
    {
        count(async: true)
        await Task.yield()
        return try inner.fetchIdentifiers(request)
    }

    func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) async throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        count(async: true)
        await Task.yield()
        return try inner.save(request)
    }
}
