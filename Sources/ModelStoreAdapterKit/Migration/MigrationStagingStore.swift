import Foundation
import ModelStore

/// The models a custom stage works on, shared between the migration runner and the store its
/// context saves to, and which models the stage's saves touched.
final class MigrationStaging: Sendable {
    /// The migrating store's identifier, so identifiers minted during the stage stay the store's.
    let storeIdentifier: String
    let table: LockedValue<SnapshotTable>
    /// The identifiers each save inserted, updated or deleted.
    let touched = LockedValue<Set<PersistentIdentifier>>([])

    /// Loads `data` at its schema; a stored duplicate of a unique value fails here.
    init(_ data: MigrationData, storeIdentifier: String) throws {
        var table = SnapshotTable(schema: data.schema)
        do {
            try table.load(data.snapshots)
        } catch let error as DataStoreError {
            throw DataStoreError(
                .migrationFailed,
                "the stored models do not fit schema version '\(data.schema.version)': \(error.message)",
                remedy: "If this version adds a unique constraint, remove the duplicates in the stage's willMigrate",
                entityName: error.entityName, underlyingError: error)
        }
        table.reserveKeys(below: data.nextPrimaryKey)
        self.storeIdentifier = storeIdentifier
        self.table = LockedValue(table)
    }

    /// The models as the stage left them.
    var data: MigrationData {
        table.withLock {
            MigrationData(schema: $0.schema, snapshots: $0.allSnapshots, nextPrimaryKey: $0.nextPrimaryKey)
        }
    }
}

/// Opens a ``MigrationStagingStore`` on a ``MigrationStaging``.
struct MigrationStagingConfiguration: DataStoreConfiguration {
    typealias Store = MigrationStagingStore
    var name = "migration"
    var schema: Schema?
    let staging: MigrationStaging

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.staging === rhs.staging }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(staging)) }
}

/// The store a custom stage's context reads and saves: the stored models in memory, on one
/// schema version, with every query, uniqueness and batch run by ``SnapshotTable``.
///
/// Nothing it does reaches the real store until the whole migration commits.
final class MigrationStagingStore: DataStoreQuerying, DataStoreBatching {
    typealias Snapshot = DefaultSnapshot

    let configuration: MigrationStagingConfiguration
    let schema: Schema
    var identifier: String { staging.storeIdentifier }
    private var staging: MigrationStaging { configuration.staging }

    init(_ configuration: MigrationStagingConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.configuration = configuration
        self.schema = configuration.staging.table.withLock { $0.schema }
    }

    var queryCapabilities: QueryCapabilities { .all }

    func fetch<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        let query = request.query ?? StoreQuery(entityName: Schema.entityName(for: T.self))
        return DataStoreFetchResult(
            descriptor: request.descriptor, fetchedSnapshots: try staging.table.withLock { try $0.fetch(query) })
    }

    func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        let result = try staging.table.withLock { try $0.save(request, storeIdentifier: identifier) }
        staging.touched.withLock { touched in
            touched.formUnion(result.remappedIdentifiers.values)
            touched.formUnion((request.updated + request.deleted).map(\.persistentIdentifier))
        }
        return result
    }

    func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        staging.table.withLock { table in
            var found: [PersistentIdentifier: DefaultSnapshot] = [:]
            for id in identifiers { found[id] = table.snapshot(for: id) }
            return found
        }
    }

    func erase() throws {
        let all = staging.table.withLock { table in
            defer { table.removeAll() }
            return table.allSnapshots.map(\.persistentIdentifier)
        }
        staging.touched.withLock { $0.formUnion(all) }
    }

    func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        staging.table.withLock { $0.delete(request.identifiers) }
        staging.touched.withLock { $0.formUnion(request.identifiers) }
    }

    func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        try staging.table.withLock { table in
            table.applyUpdate(try table.prepareUpdate(request.identifiers, values: request.values))
        }
        staging.touched.withLock { $0.formUnion(request.identifiers) }
    }

    func insert(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> PersistentIdentifiers {
        let snapshots = try request.allSnapshots()
        let saved = try save(
            DataStoreSaveChangesRequest(
                editingState: request.editingState, inserted: snapshots, updated: [], deleted: []))
        return PersistentIdentifiers(
            snapshots.lazy.map { saved.remappedIdentifiers[$0.persistentIdentifier] ?? $0.persistentIdentifier })
    }
}
