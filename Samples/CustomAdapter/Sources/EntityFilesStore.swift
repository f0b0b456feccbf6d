import Foundation
import ModelStore
import ModelStoreAdapterKit

/// A store that keeps one JSON file per entity in a directory: a third-party adapter written
/// only against public API (`ModelStore` and `ModelStoreAdapterKit`, no SPI), in SwiftData's style.
///
/// It shows what the `DataStore` contract asks of an adapter, without shortcuts:
///
/// - `save` mints permanent identifiers for inserted snapshots, rewrites references to
///   temporary identifiers, and commits atomically (see ``EntityFilesDirectory``);
/// - `fetch` handles what it can natively and asks the context for the rest: it throws
///   `DataStoreError.preferInMemoryFilter` for any predicate and
///   `DataStoreError.preferInMemorySort` for sorts it cannot run, and the context falls back;
/// - uniqueness and delete rules are left to the context, which enforces them for every adapter.
///
/// State lives behind a `LockedValue` (ModelStore's lock type, which the thread sanitizer sees), so
/// the store is safe to share between contexts on different actors. The directory is meant for one
/// process at a time: there is no file lock.
public final class EntityFilesStore: DataStore {
    /// The store's snapshot type.
    public typealias Snapshot = DefaultSnapshot

    /// The identifier stored in the manifest (a new random one for a new store).
    public let identifier: String
    /// The schema.
    public let schema: Schema
    /// The configuration.
    public let configuration: EntityFilesConfiguration

    private let directory: EntityFilesDirectory
    private let state: LockedValue<State>

    /// The stored models, by entity, and the manifest they were read from.
    private struct State {
        var snapshots: [String: [PersistentIdentifier: DefaultSnapshot]]
        var manifest: EntityFilesDirectory.Manifest?
        var nextPrimaryKey: Int64
    }

    /// Opens the store in the configuration's directory, reading every entity's file; never writes.
    ///
    /// Throws `DataStoreError` with the code `corrupted` when a file cannot be read or holds an
    /// entity the schema lacks. Migration plans are not supported: stored models whose properties
    /// the schema lacks fail to open, and properties the schema added take their initial values.
    public init(_ configuration: EntityFilesConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the entity-files store '\(configuration.name)' has no schema",
                remedy: "Create it through a ModelContainer, or set the configuration's schema")
        }
        let directory = EntityFilesDirectory(url: configuration.directory, schema: schema)
        let manifest = try directory.readManifest()
        var snapshots: [String: [PersistentIdentifier: DefaultSnapshot]] = [:]
        for (entityName, file) in manifest?.files ?? [:] {
            let stored = try directory.readSnapshots(of: entityName, file: file)
            snapshots[entityName] = Dictionary(stored.map { ($0.persistentIdentifier, $0) }) { first, _ in first }
        }
        self.configuration = configuration
        self.schema = schema
        self.directory = directory
        self.identifier = manifest?.storeIdentifier ?? "files-" + UUID().uuidString.prefix(8).lowercased()
        self.state = LockedValue(
            State(snapshots: snapshots, manifest: manifest, nextPrimaryKey: manifest?.nextPrimaryKey ?? 1))
    }

    // MARK: Fetching

    /// The snapshots of the requested entity, sorted and windowed here when the store can; throws
    /// `preferInMemoryFilter` for a predicate and `preferInMemorySort` for a sort it cannot run.
    public func fetch<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        let descriptor = request.descriptor
        if descriptor.predicate != nil { throw DataStoreError.preferInMemoryFilter }
        let entityName = Schema.entityName(for: T.self)
        guard let entity = schema.entity(named: entityName) else {
            throw DataStoreError(
                .notFound, "the entity-files store has no entity '\(entityName)'",
                remedy: "Add the model type to the container", entityName: entityName)
        }
        let keys = try nativeSortKeys(descriptor.sortBy, entity: entity)
        var snapshots = state.withLock { state in Array((state.snapshots[entityName] ?? [:]).values) }
        try SnapshotEvaluator.sort(&snapshots, by: keys, entity: entity)
        snapshots = SnapshotEvaluator.window(
            snapshots, offset: descriptor.fetchOffset ?? 0, limit: descriptor.fetchLimit)
        return DataStoreFetchResult(descriptor: descriptor, fetchedSnapshots: snapshots)
    }

    /// The current snapshots of these models.
    public func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        state.withLock { state in
            var found: [PersistentIdentifier: DefaultSnapshot] = [:]
            for id in identifiers {
                if let snapshot = state.snapshots[id.entityName]?[id] { found[id] = snapshot }
            }
            return found
        }
    }

    // MARK: Saving

    /// Stores inserts, updates and deletes atomically: nothing changes in memory or on disk
    /// unless the new files and manifest are written.
    public func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try state.withLock { state in
            // 1. Mint every permanent identifier first…
            var nextKey = state.nextPrimaryKey
            let remapped = request.mintIdentifiers(storeIdentifier: identifier, nextPrimaryKey: &nextKey)
            for snapshot in request.inserted where remapped[snapshot.persistentIdentifier] == nil {
                let id = snapshot.persistentIdentifier
                if state.snapshots[id.entityName]?[id] != nil {
                    throw DataStoreError(
                        .conflict, "cannot insert \(id): the store already has it", entityName: id.entityName)
                }
            }
            // 2. …then rewrite references in every inserted and updated snapshot.
            var snapshots = state.snapshots
            var changed: Set<String> = []
            for snapshot in request.updated + request.deleted {
                guard snapshots[snapshot.entity.name]?[snapshot.persistentIdentifier] != nil else {
                    throw DataStoreError(
                        .notFound, "cannot save \(snapshot.persistentIdentifier): the store does not have it",
                        remedy: "Fetch the model again; another context may have deleted it",
                        entityName: snapshot.entity.name)
                }
            }
            for snapshot in request.deleted {
                snapshots[snapshot.entity.name]?[snapshot.persistentIdentifier] = nil
                changed.insert(snapshot.entity.name)
            }
            for snapshot in request.updated + request.inserted {
                let id = remapped[snapshot.persistentIdentifier] ?? snapshot.persistentIdentifier
                snapshots[snapshot.entity.name, default: [:]][id] = snapshot.copy(
                    persistentIdentifier: id, remappedIdentifiers: remapped)
                changed.insert(snapshot.entity.name)
            }
            guard !changed.isEmpty else { return DataStoreSaveChangesResult(for: identifier) }
            // 3. Write, and only then change the state.
            let manifest = try write(snapshots, changed: changed, nextPrimaryKey: nextKey, after: state.manifest)
            state = State(snapshots: snapshots, manifest: manifest, nextPrimaryKey: nextKey)
            return DataStoreSaveChangesResult(for: identifier, remappedIdentifiers: remapped)
        }
    }

    /// Deletes every model, and the store's files.
    public func erase() throws {
        try state.withLock { state in
            try directory.removeAll(state.manifest)
            state = State(snapshots: [:], manifest: nil, nextPrimaryKey: state.nextPrimaryKey)
        }
    }

    // MARK: Helpers

    private func write(
        _ snapshots: [String: [PersistentIdentifier: DefaultSnapshot]], changed: Set<String>, nextPrimaryKey: Int64,
        after previous: EntityFilesDirectory.Manifest?
    ) throws -> EntityFilesDirectory.Manifest {
        var manifest =
            previous
            ?? EntityFilesDirectory.Manifest(
                format: EntityFilesDirectory.format, storeIdentifier: identifier, generation: 0, nextPrimaryKey: 1,
                files: [:])
        manifest.generation += 1
        manifest.nextPrimaryKey = nextPrimaryKey
        var contents: [String: [DefaultSnapshot]] = [:]
        for entityName in changed {
            manifest.files[entityName] = "\(entityName).\(manifest.generation).json"
            contents[entityName] = (snapshots[entityName] ?? [:]).values.sorted {
                $0.persistentIdentifier < $1.persistentIdentifier
            }
        }
        try directory.commit(manifest, changed: contents, previous: previous)
        return manifest
    }

    /// The sort as store-neutral keys, when every key is a non-optional number or date the store
    /// can compare; otherwise the context is asked to sort.
    private func nativeSortKeys<T>(_ descriptors: [SortDescriptor<T>], entity: Schema.Entity) throws -> [StoreSortKey] {
        try descriptors.map { descriptor in
            guard let keyPath = descriptor.keyPath, let name = entity.propertyName(for: keyPath),
                let attribute = entity.attribute(named: name)
            else { throw DataStoreError.preferInMemorySort }
            switch attribute.valueType {
            case .integer, .double, .float, .date:
                return StoreSortKey(property: name, ascending: descriptor.order == .forward)
            default:
                throw DataStoreError.preferInMemorySort
            }
        }
    }
}
