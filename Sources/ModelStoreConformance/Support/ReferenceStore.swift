import Foundation
import ModelStore
import ModelStoreAdapterKit

/// The settings of the ``ReferenceStore``.
public struct ReferenceStoreConfiguration: DataStoreConfiguration {
    /// The store this configuration opens.
    public typealias Store = ReferenceStore
    /// The configuration's name.
    public var name: String
    /// The schema; a container sets it, or set it to open the store directly.
    public var schema: Schema?

    /// A configuration; leave `schema` `nil` when a container opens the store.
    public init(name: String = "reference", schema: Schema? = nil) {
        self.name = name
        self.schema = schema
    }

    /// Equal when the names are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// The oracle's reference: the core's `SnapshotTable` behind a lock, with nothing of its own, in memory.
///
/// Whatever the core's query engine answers is, by definition, ModelStore's meaning of a query, so
/// an adapter author can compare an adapter's answers with this store's on the same data (the suite's
/// push-down cases do). It runs every filter exactly, sorts, windows, enforces uniqueness and batches.
public final class ReferenceStore: DataStoreQuerying, DataStoreBatching {
    /// Snapshots are ``DefaultSnapshot``s.
    public typealias Snapshot = DefaultSnapshot

    /// A new identifier for every store.
    public let identifier = "reference-" + UUID().uuidString.prefix(8).lowercased()
    /// The schema the store holds.
    public let schema: Schema
    /// The configuration the store was opened with.
    public let configuration: ReferenceStoreConfiguration
    private let table: LockedValue<SnapshotTable>

    /// Opens an empty store; throws `invalidConfiguration` without a schema.
    public init(_ configuration: ReferenceStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the reference store has no schema",
                remedy: "Create it through a ModelContainer")
        }
        self.schema = schema
        self.configuration = configuration
        self.table = LockedValue(SnapshotTable(schema: schema))
    }

    /// Everything, exactly, uniqueness included.
    public var queryCapabilities: QueryCapabilities { .all }

    /// Runs the request's query (or every model of the entity) on the table.
    public func fetch<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        let query = request.query ?? StoreQuery(entityName: Schema.entityName(for: T.self))
        return DataStoreFetchResult(
            descriptor: request.descriptor, fetchedSnapshots: try table.withLock { try $0.fetch(query) })
    }

    /// Validates and applies the save atomically, minting and remapping identifiers.
    public func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try table.withLock { try $0.save(request, storeIdentifier: identifier) }
    }

    /// The current snapshots of the models the table has.
    public func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        table.withLock { table in
            var found: [PersistentIdentifier: DefaultSnapshot] = [:]
            for id in identifiers { found[id] = table.snapshot(for: id) }
            return found
        }
    }

    /// Removes every model.
    public func erase() throws { table.withLock { $0.removeAll() } }

    /// Deletes exactly the identified models.
    public func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        table.withLock { $0.delete(request.identifiers) }
    }

    /// Sets the values on exactly the identified models, atomically.
    public func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        try table.withLock { table in
            table.applyUpdate(try table.prepareUpdate(request.identifiers, values: request.values))
        }
    }

    /// Inserts the snapshots atomically; returns their permanent identifiers in order.
    public func insert(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> PersistentIdentifiers {
        let snapshots = try request.allSnapshots()
        return try table.withLock { table in
            let saved = try table.save(
                DataStoreSaveChangesRequest(
                    editingState: request.editingState, inserted: snapshots, updated: [], deleted: []),
                storeIdentifier: identifier)
            return PersistentIdentifiers(
                snapshots.lazy.map {
                    saved.remappedIdentifiers[$0.persistentIdentifier] ?? $0.persistentIdentifier
                })
        }
    }
}
