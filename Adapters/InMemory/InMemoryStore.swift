import Foundation
@_spi(AdapterKit) import ModelStore

/// The settings of an ``InMemoryStore``.
public struct InMemoryStoreConfiguration: DataStoreConfiguration {
    /// The store type.
    public typealias Store = InMemoryStore
    /// The configuration's name, unique within a container.
    public var name: String
    /// The schema; the container injects it.
    public var schema: Schema?

    /// A configuration named `name`, optionally owning only the entities of `schema`.
    public init(name: String = "memory", schema: Schema? = nil) {
        self.name = name
        self.schema = schema
    }

    /// Configurations are equal when their names are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
    /// Hashes the name.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

extension DataStoreConfiguration where Self == InMemoryStoreConfiguration {
    /// A store that keeps everything in memory and forgets it when the container goes away.
    public static func inMemory(name: String = "memory") -> InMemoryStoreConfiguration {
        InMemoryStoreConfiguration(name: name)
    }
}

/// A complete store that keeps its snapshots in memory: for tests, previews and caches.
///
/// It runs every query natively on snapshots (``SnapshotTable``) and enforces unique
/// constraints atomically. Nothing survives the store.
public final class InMemoryStore: DataStoreQuerying, DataStoreBatching, DataStoreTwoPhaseSaving {
    /// The store's snapshot type.
    public typealias Snapshot = DefaultSnapshot

    /// A random identifier per store.
    public let identifier: String
    /// The schema.
    public let schema: Schema
    /// The configuration.
    public let configuration: InMemoryStoreConfiguration
    private let table: GuardedTable

    /// Creates an empty store. Throws ``DataStoreError/invalidConfiguration`` without a schema.
    public init(_ configuration: InMemoryStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the in-memory store '\(configuration.name)' has no schema",
                remedy: "Create it through a ModelContainer, or set the configuration's schema")
        }
        self.configuration = configuration
        self.schema = schema
        self.identifier = "memory-" + UUID().uuidString.prefix(8).lowercased()
        self.table = GuardedTable(SnapshotTable(schema: schema))
    }

    /// Runs every filter and sort natively and enforces uniqueness.
    public var queryCapabilities: QueryCapabilities { .all }

    /// The scan or index the table uses for a query.
    public func accessPath(for query: StoreQuery) -> StoreAccessPath? {
        table.withLock { $0.accessPath(for: query) }
    }

    /// Fetches by the request's query (or, without one, every snapshot of the entity).
    public func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<
        T, DefaultSnapshot
    > {
        let query = request.query ?? StoreQuery(entityName: Schema.entityName(for: T.self))
        let snapshots = try table.withLock { try $0.fetch(query) }
        return DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: snapshots)
    }

    /// Saves atomically.
    public func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<
        DefaultSnapshot
    > {
        try table.withSaveLock { try $0.save(request, storeIdentifier: identifier) }
    }

    /// The current snapshots of these models.
    public func cachedSnapshots(for identifiers: [PersistentIdentifier], editingState: EditingState) throws
        -> [PersistentIdentifier: DefaultSnapshot]
    {
        table.withLock { table in
            var result: [PersistentIdentifier: DefaultSnapshot] = [:]
            for id in identifiers { if let snapshot = table.snapshot(for: id) { result[id] = snapshot } }
            return result
        }
    }

    /// Removes every model.
    public func erase() throws { table.withSaveLock { $0.removeAll() } }

    /// Deletes models by identifier.
    public func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        table.withSaveLock { $0.delete(request.identifiers) }
    }

    /// Updates models by identifier, atomically, enforcing uniqueness.
    public func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        try table.withSaveLock { table in
            let updated = try table.prepareUpdate(request.identifiers, values: request.values)
            table.applyUpdate(updated)
        }
    }

    /// Inserts snapshots atomically, enforcing uniqueness.
    public func insert(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> [PersistentIdentifier] {
        try table.withSaveLock { table in
            let result = try table.save(
                DataStoreSaveChangesRequest(
                    editingState: request.editingState, inserted: request.snapshots, updated: [], deleted: []),
                storeIdentifier: identifier)
            return request.snapshots.map {
                result.remappedIdentifiers[$0.persistentIdentifier] ?? $0.persistentIdentifier
            }
        }
    }
}

extension InMemoryStore {
    /// Prepares a save that spans several stores: validates it and mints identifiers, holding the
    /// store's lock until the part is finished or aborted.
    public func prepareSave(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> any PreparedStoreSave<DefaultSnapshot> {
        try PreparedInMemorySave(table: table, request: request, storeIdentifier: identifier)
    }
}

/// The store's table, the lock that guards it, and the lock that keeps saves one at a time.
///
/// Fetches take only the table lock. Saves take the save lock first, so a two-phase save can hold
/// the save lock from its prepare to its finish while fetches go on reading the table as it was.
private final class GuardedTable: @unchecked Sendable {
    // Safety: `table` is read and written only while `lock` is held; writes also hold `saveLock`.
    private let lock = NSLock()
    private let saveLock = NSLock()
    private var table: SnapshotTable

    init(_ table: SnapshotTable) { self.table = table }

    /// Reads the table.
    func withLock<Result>(_ body: (inout SnapshotTable) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&table)
    }

    /// Changes the table, one save at a time.
    func withSaveLock<Result>(_ body: (inout SnapshotTable) throws -> Result) rethrows -> Result {
        saveLock.lock()
        defer { saveLock.unlock() }
        return try withLock(body)
    }

    /// Starts a two-phase save: keeps other saves out until ``endPreparedSave()``.
    func beginPreparedSave() { saveLock.lock() }
    /// Ends a two-phase save.
    func endPreparedSave() { saveLock.unlock() }
}

/// The in-memory store's part of a save across stores. It keeps the table as it was before the
/// commit, so that an abort after a commit restores it exactly (a copy made only by that commit).
private final class PreparedInMemorySave: PreparedStoreSave {
    typealias Snapshot = DefaultSnapshot
    let result: DataStoreSaveChangesResult<DefaultSnapshot>
    private let table: GuardedTable
    private let prepared: SnapshotTable.PreparedSave
    private var before: SnapshotTable?
    private var isOpen = true

    init(table: GuardedTable, request: DataStoreSaveChangesRequest<DefaultSnapshot>, storeIdentifier: String) throws {
        table.beginPreparedSave()
        do {
            prepared = try table.withLock { try $0.prepare(request, storeIdentifier: storeIdentifier) }
        } catch {
            table.endPreparedSave()
            throw error
        }
        self.table = table
        result = DataStoreSaveChangesResult(for: storeIdentifier, remappedIdentifiers: prepared.remappedIdentifiers)
    }

    func commit() throws {
        precondition(isOpen && before == nil, "commit() is called once, between prepareSave and finish")
        table.withLock { table in
            self.before = table
            table.apply(prepared)
        }
    }

    func abort() {
        guard isOpen else { return }
        if let before { table.withLock { $0 = before } }
        close()
    }

    func finish() {
        guard isOpen else { return }
        close()
    }

    private func close() {
        isOpen = false
        before = nil
        table.endPreparedSave()
    }

    deinit {
        // A part dropped without finish or abort must not keep the store locked.
        if isOpen { abort() }
    }
}
