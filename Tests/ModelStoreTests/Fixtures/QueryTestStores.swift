import Foundation
import ModelStore
import ModelStoreAdapterKit

/// A snapshot table behind a lock: the storage both test stores share.
final class LockedTable: Sendable {
    let table: LockedValue<SnapshotTable>

    init(schema: Schema) { table = LockedValue(SnapshotTable(schema: schema)) }

    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>, storeIdentifier: String) throws
        -> DataStoreSaveChangesResult<DefaultSnapshot>
    {
        try table.withLock { try $0.save(request, storeIdentifier: storeIdentifier) }
    }

    func snapshots(for identifiers: [PersistentIdentifier]) -> [PersistentIdentifier: DefaultSnapshot] {
        table.withLock { table in
            Dictionary(uniqueKeysWithValues: identifiers.compactMap { id in table.snapshot(for: id).map { (id, $0) } })
        }
    }

    func erase() { table.withLock { $0.removeAll() } }
}

/// A ``DataStoreQuerying`` store that runs only the filter kinds its configuration declares, so
/// queries are partially pushed: exact kinds are applied, inexact ones are ignored when the query
/// allows inexact matches (a superset is returned, as an approximating store would), and anything
/// undeclared is refused loudly.
final class LimitedStore: DataStoreQuerying, DataStoreBatching {
    struct Configuration: DataStoreConfiguration {
        typealias Store = LimitedStore
        var name: String
        var schema: Schema?
        var capabilities: QueryCapabilities

        static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
        func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }

    typealias Snapshot = DefaultSnapshot
    let identifier = "limited-" + UUID().uuidString.prefix(6).lowercased()
    let schema: Schema
    let configuration: Configuration
    private let storage: LockedTable
    /// Every query the store received.
    let received = LockedValue<[StoreQuery]>([])

    init(_ configuration: Configuration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.configuration = configuration
        self.schema = configuration.schema!
        self.storage = LockedTable(schema: configuration.schema!)
    }

    var queryCapabilities: QueryCapabilities { configuration.capabilities }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<
        T, DefaultSnapshot
    > {
        var query = request.query ?? StoreQuery(entityName: Schema.entityName(for: T.self))
        received.withLock { $0.append(query) }
        let capabilities = configuration.capabilities
        if let filter = query.filter,
            !capabilities.filters.union(capabilities.inexactFilters).isSuperset(of: filter.kinds)
        {
            throw DataStoreError(
                .unsupportedFeature, "the limited store received '\(filter)', which it did not declare")
        }
        if !query.sort.isEmpty && !capabilities.sorting {
            throw DataStoreError(.unsupportedFeature, "the limited store received a sort, which it did not declare")
        }
        if (query.offset > 0 || query.limit != nil) && !capabilities.offsetAndLimit {
            throw DataStoreError(.unsupportedFeature, "the limited store received a window, which it did not declare")
        }
        // Inexact kinds are approximated by ignoring them, when the query allows: the store returns a
        // superset. Otherwise it applies them exactly (rule 2 of `DataStoreQuerying`).
        if query.allowsInexactMatches {
            let exact = (query.filter?.conjuncts ?? []).filter { capabilities.filters.isSuperset(of: $0.kinds) }
            query.filter = StoreFilter.conjunction(exact)
        }
        let snapshots = try storage.table.withLock { try $0.fetch(query) }
        return DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: snapshots)
    }

    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<
        DefaultSnapshot
    > {
        try storage.save(request, storeIdentifier: identifier)
    }

    func cachedSnapshots(for identifiers: [PersistentIdentifier], editingState: EditingState) throws
        -> [PersistentIdentifier: DefaultSnapshot]
    {
        storage.snapshots(for: identifiers)
    }

    func erase() throws { storage.erase() }

    func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        storage.table.withLock { $0.delete(request.identifiers) }
    }

    func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        try storage.table.withLock { table in
            table.applyUpdate(try table.prepareUpdate(request.identifiers, values: request.values))
        }
    }

    func insert(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> PersistentIdentifiers {
        let snapshots = try request.allSnapshots()
        let save = DataStoreSaveChangesRequest(
            editingState: request.editingState, inserted: snapshots, updated: [], deleted: [])
        let result = try storage.save(save, storeIdentifier: identifier)
        return PersistentIdentifiers(
            snapshots.lazy.map { result.remappedIdentifiers[$0.persistentIdentifier] ?? $0.persistentIdentifier })
    }
}

/// A store in the manner of a SwiftData custom store without query support: not
/// ``DataStoreQuerying``, it throws `preferInMemoryFilter` for any predicate and
/// `preferInMemorySort` for any sort, so the context evaluates `Predicate`s and `SortDescriptor`s on models.
final class SwiftDataStyleStore: DataStore {
    struct Configuration: DataStoreConfiguration {
        typealias Store = SwiftDataStyleStore
        var name: String
        var schema: Schema?

        static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
        func hash(into hasher: inout Hasher) { hasher.combine(name) }
    }

    typealias Snapshot = DefaultSnapshot
    let identifier = "swiftdata-" + UUID().uuidString.prefix(6).lowercased()
    let schema: Schema
    let configuration: Configuration
    private let storage: LockedTable

    init(_ configuration: Configuration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.configuration = configuration
        self.schema = configuration.schema!
        self.storage = LockedTable(schema: configuration.schema!)
    }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<
        T, DefaultSnapshot
    > {
        let descriptor = request.descriptor
        if descriptor.predicate != nil { throw DataStoreError.preferInMemoryFilter }
        if !descriptor.sortBy.isEmpty { throw DataStoreError.preferInMemorySort }
        let all = storage.table.withLock { $0.snapshots(of: Schema.entityName(for: T.self)) }
        let window = SnapshotEvaluator.window(all, offset: descriptor.fetchOffset ?? 0, limit: descriptor.fetchLimit)
        return DataStoreFetchResult(descriptor: descriptor, fetchedSnapshots: window)
    }

    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<
        DefaultSnapshot
    > {
        try storage.save(request, storeIdentifier: identifier)
    }

    func cachedSnapshots(for identifiers: [PersistentIdentifier], editingState: EditingState) throws
        -> [PersistentIdentifier: DefaultSnapshot]
    {
        storage.snapshots(for: identifiers)
    }

    func erase() throws { storage.erase() }
}
