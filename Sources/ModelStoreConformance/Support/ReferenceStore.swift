import Foundation
import ModelStore

/// The settings of the suite's reference store.
struct ReferenceStoreConfiguration: DataStoreConfiguration {
    typealias Store = ReferenceStore
    var name = "reference"
    var schema: Schema?

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// The oracle's reference: the core's ``SnapshotTable`` behind a lock, with nothing of its own.
///
/// The suite cannot depend on `ModelStoreInMemory`, so it keeps this minimal store: whatever
/// the core's query engine answers is, by definition, ModelStore's meaning of a query.
final class ReferenceStore: DataStoreQuerying, DataStoreBatching {
    typealias Snapshot = DefaultSnapshot

    let identifier = "reference-" + UUID().uuidString.prefix(8).lowercased()
    let schema: Schema
    let configuration: ReferenceStoreConfiguration
    private let table: LockedValue<SnapshotTable>

    init(_ configuration: ReferenceStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the reference store has no schema",
                remedy: "Create it through a ModelContainer")
        }
        self.schema = schema
        self.configuration = configuration
        self.table = LockedValue(SnapshotTable(schema: schema))
    }

    var queryCapabilities: QueryCapabilities { .all }

    func fetch<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        let query = request.query ?? StoreQuery(entityName: Schema.entityName(for: T.self))
        return DataStoreFetchResult(
            descriptor: request.descriptor, fetchedSnapshots: try table.withLock { try $0.fetch(query) })
    }

    func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try table.withLock { try $0.save(request, storeIdentifier: identifier) }
    }

    func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        table.withLock { table in
            var found: [PersistentIdentifier: DefaultSnapshot] = [:]
            for id in identifiers { found[id] = table.snapshot(for: id) }
            return found
        }
    }

    func erase() throws { table.withLock { $0.removeAll() } }

    func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        table.withLock { $0.delete(request.identifiers) }
    }

    func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        try table.withLock { table in
            table.applyUpdate(try table.prepareUpdate(request.identifiers, values: request.values))
        }
    }

    func insert(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> [PersistentIdentifier] {
        try table.withLock { table in
            let saved = try table.save(
                DataStoreSaveChangesRequest(
                    editingState: request.editingState, inserted: request.snapshots, updated: [], deleted: []),
                storeIdentifier: identifier)
            return request.snapshots.map {
                saved.remappedIdentifiers[$0.persistentIdentifier] ?? $0.persistentIdentifier
            }
        }
    }
}
