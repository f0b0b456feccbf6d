import Foundation
import ModelStore
import ModelStoreAdapterKit

/// The settings of an ``InMemoryStore``.
public struct InMemoryStoreConfiguration: DataStoreConfiguration {
    /// The store type.
    public typealias Store = InMemoryStore
    /// The configuration's name, unique within a container.
    public var name: String
    /// The schema; the container injects it.
    public var schema: Schema?
    /// How many changes of history the store keeps at most (10,000 by default): the oldest
    /// transactions go first, and tokens into them expire. `nil` keeps every transaction.
    public var historyLimit: Int?
    /// Whether stores opened with this name share their models within the process (`false` by
    /// default). While one shared store of a name is open, opening another with the same name
    /// and a shared configuration gives a view of the same models, history and identifiers, as
    /// two containers on one file would; the models are gone when the last of them closes. The
    /// schemas must describe the same entities.
    ///
    /// A `memory:NAME` URL and a named `ModelConfiguration(_:isStoredInMemoryOnly: true)` open
    /// shared stores; `memory:` and an unnamed configuration open private ones.
    public var isShared: Bool
    /// Whether contexts may save into the store (on by default). Off, every save, batch operation,
    /// erase or history deletion through a container throws ``DataStoreError/Code/readOnly``; a
    /// shared store (``isShared``) can then be read here while another container writes it.
    public var allowsSave = true

    /// A configuration named `name`, optionally owning only the entities of `schema`.
    ///
    /// - Parameters:
    ///   - name: The configuration's name, unique within a container.
    ///   - schema: The entities this store owns; the container's whole schema when `nil`.
    ///   - historyLimit: How many changes of history to keep at most; `nil` keeps all.
    ///   - isShared: Whether stores of this name share their models within the process.
    public init(name: String = "memory", schema: Schema? = nil, historyLimit: Int? = 10_000, isShared: Bool = false) {
        self.name = name
        self.schema = schema
        self.historyLimit = historyLimit
        self.isShared = isShared
    }

    /// Configurations are equal when their names and their sharing are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name && lhs.isShared == rhs.isShared }
    /// Hashes what ``==`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(isShared)
    }
}

extension DataStoreConfiguration where Self == InMemoryStoreConfiguration {
    /// A store that keeps everything in memory and forgets it when the container goes away.
    ///
    /// - Parameters:
    ///   - name: The configuration's name, unique within a container.
    ///   - isShared: Whether stores of this name share their models within the process
    ///     (``InMemoryStoreConfiguration/isShared``).
    public static func inMemory(name: String = "memory", isShared: Bool = false) -> InMemoryStoreConfiguration {
        InMemoryStoreConfiguration(name: name, isShared: isShared)
    }
}

/// A complete store that keeps its snapshots in memory: for tests, previews and caches.
///
/// It runs every query natively on snapshots (``SnapshotTable``) and enforces unique
/// constraints atomically. It keeps the history of every transaction (``HistoryProviding``) until
/// it is deleted. Nothing survives the store, or, for a shared one
/// (``InMemoryStoreConfiguration/isShared``), the last open store of its name.
public final class InMemoryStore: DataStoreQuerying, DataStoreBatching, DataStoreTwoPhaseSaving, HistoryProviding {
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
        let make = {
            GuardedTable(
                SnapshotTable(schema: schema), history: StoreHistory(limit: configuration.historyLimit),
                identifier: "memory-" + UUID().uuidString.prefix(8).lowercased(), schema: schema.storedDescription)
        }
        let table = configuration.isShared ? SharedTables.table(named: configuration.name, make: make) : make()
        guard table.schema == schema.storedDescription else {
            throw DataStoreError(
                .invalidConfiguration,
                "the shared in-memory store '\(configuration.name)' is open with another schema "
                    + "(\(table.schema.entities.map(\.name).sorted().joined(separator: ", ")))",
                remedy: "Open it with the same model types, or give this store another name")
        }
        self.identifier = table.identifier
        self.table = table
    }

    /// Runs every filter and sort natively and enforces uniqueness.
    public var queryCapabilities: QueryCapabilities { .all }

    /// `true`: a save compares the request's expected values with the stored models under its
    /// write's lock, and throws ``DataStoreError/Code/conflict`` when one differs.
    public var checksExpectedValues: Bool { true }

    /// The scan or index the table uses for a query.
    public func accessPath(for query: StoreQuery) -> StoreAccessPath? {
        table.withLock { $0.accessPath(for: query) }
    }

    /// Fetches by the request's query (or, without one, every snapshot of the entity).
    public func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<
        T, DefaultSnapshot
    > {
        let snapshots = try table.withLock { try $0.fetch(request.resolvedQuery) }
        return DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: snapshots)
    }

    /// Counts what `fetch` returns, without building snapshots.
    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try table.withLock { try $0.fetchCount(request.resolvedQuery) }
    }

    /// The identifiers of what `fetch` returns, without building snapshots.
    public func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws
        -> [PersistentIdentifier]
    {
        try table.withLock { try $0.fetchIdentifiers(request.resolvedQuery) }
    }

    /// Saves atomically.
    public func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<
        DefaultSnapshot
    > {
        if request.updated.isEmpty, request.deleted.isEmpty {
            // Only new models: the table's batch insert, which appends without copying each snapshot.
            let (ids, number) = try insertRecording(
                DataStoreBatchInsertRequest(snapshots: request.inserted, editingState: request.editingState))
            // `nil` for a snapshot that kept the identifier it brought, as the result expects.
            let minted = zip(request.inserted, ids).map { $0.persistentIdentifier == $1 ? nil : $1 }
            return DataStoreSaveChangesResult(
                for: identifier, inserted: request.inserted, mintedInOrder: minted,
                historyToken: number.map { DefaultHistoryToken(storeIdentifier: identifier, transactionNumber: $0) })
        }
        return try save(request) { prepared, number in
            prepared.result(
                for: identifier,
                historyToken: number.map { DefaultHistoryToken(storeIdentifier: identifier, transactionNumber: $0) })
        }
    }

    /// Saves, and returns what `result` makes of the prepared save and the number of the history
    /// transaction it recorded (a batch insert takes the inserted snapshots, in the request's
    /// order, without the mapping by temporary identifier a save returns).
    private func save<Result>(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>,
        result: (SnapshotTable.PreparedSave, Int64?) -> Result
    ) throws -> Result {
        try table.withSaveLock { table, history in
            let prepared = try table.prepare(request, storeIdentifier: identifier)
            // Every insert and delete is a change (prepare found each deleted model), so a save with
            // more of them than the history keeps is trimmed at once: its changes are not built.
            var number: Int64?
            if history.dropsAtOnce(prepared.inserted.count + prepared.deleted.count) {
                table.apply(prepared)
                number = history.recordDropped()
            } else {
                let record = history.nextRecord(
                    table.historyChanges(of: prepared), author: request.editingState.author)
                table.apply(prepared)
                if let record {
                    history.append(record)
                    number = record.number
                }
            }
            return result(prepared, number)
        }
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

    /// Removes every model and the history: tokens from before the erase expire.
    public func erase() throws {
        table.withSaveLock { table, history in
            table.removeAll()
            history.delete(throughNumber: history.lastNumber)
        }
    }

    /// Deletes models by identifier.
    public func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        table.withSaveLock { table, history in
            history.record(count: table.count(existing: request.identifiers), author: request.editingState.author) {
                table.historyChanges(deleting: request.identifiers)
            }
            table.delete(request.identifiers)
        }
    }

    /// Deletes every model of `T`'s entity at once and returns their identifiers.
    public func deleteEveryModel<T: PersistentModel>(_ request: DataStoreDeleteEveryModelRequest<T>) throws
        -> PersistentIdentifiers
    {
        let name = Schema.entityName(for: T.self)
        return table.withSaveLock { table, history in
            let identifiers = table.identifiers(of: name)
            guard !identifiers.isEmpty else { return [] }
            history.record(count: identifiers.count, author: request.editingState.author) {
                table.historyChanges(deletingEveryModelOf: name)
            }
            table.deleteEveryModel(of: name)
            return identifiers
        }
    }

    /// Updates models by identifier, atomically, enforcing uniqueness.
    public func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        try table.withSaveLock { table, history in
            let updated = try table.prepareUpdate(request.identifiers, values: request.values)
            history.record(table.historyChanges(updating: updated), author: request.editingState.author)
            table.applyUpdate(updated)
        }
    }

    /// Inserts snapshots atomically, enforcing uniqueness.
    ///
    /// The snapshots go into the table's columns a chunk at a time as the request yields them; a
    /// failure takes back what was appended.
    public func insert(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> PersistentIdentifiers {
        try insertRecording(request).ids
    }

    /// Inserts new models with the table's batch insert and records the transaction: every inserted
    /// model is a change, built only if the history keeps it. Returns the permanent identifiers in
    /// order and the transaction's number.
    private func insertRecording(
        _ request: DataStoreBatchInsertRequest<DefaultSnapshot>
    ) throws -> (ids: PersistentIdentifiers, number: Int64?) {
        try table.withSaveLock { table, history in
            let ids = try table.insert(request, storeIdentifier: identifier)
            let number = history.record(count: ids.count, author: request.editingState.author) {
                ids.map { StoreHistoryRecord.Change(.insert, $0) }
            }
            return (ids, number)
        }
    }

    /// The transactions `descriptor` selects, oldest first unless it sorts otherwise.
    public func fetchHistory(
        _ descriptor: HistoryDescriptor<DefaultHistoryTransaction>
    ) throws -> [DefaultHistoryTransaction] {
        let history = table.withHistory { $0 }
        return try history.transactions(descriptor, schema: schema, storeIdentifier: identifier)
    }

    /// Deletes the transactions `descriptor` selects.
    public func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws {
        try table.withSaveLock { _, history in
            _ = try history.delete(descriptor, schema: schema, storeIdentifier: identifier)
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

/// The open shared stores' tables by name, held weakly: a name's models live as long as one of its stores.
private enum SharedTables {
    private final class Entry: @unchecked Sendable {
        // Safety: `table` is read and written only inside `tables.withLock`.
        weak var table: GuardedTable?
        init(_ table: GuardedTable) { self.table = table }
    }

    private static let tables = LockedValue<[String: Entry]>([:])

    /// The open table named `name`, or a new one from `make`.
    static func table(named name: String, make: () -> GuardedTable) -> GuardedTable {
        tables.withLock { tables in
            if let open = tables[name]?.table { return open }
            let table = make()
            tables = tables.filter { $0.value.table != nil }
            tables[name] = Entry(table)
            return table
        }
    }
}

/// The store's table, the lock that guards it, and the lock that keeps saves one at a time.
///
/// Fetches take only the table lock. Saves take the save lock first, so a two-phase save can hold
/// the save lock from its prepare to its finish while fetches go on reading the table as it was.
private final class GuardedTable: @unchecked Sendable {
    // Safety: `table` and `history` are read and written only while `lock` is held; writes also hold `saveLock`.
    private let lock = NSLock()
    private let saveLock = NSLock()
    private var table: SnapshotTable
    private var history: StoreHistory
    /// The identifier of every store that opens this table.
    let identifier: String
    /// The entities the table was made for.
    let schema: Schema.Description

    init(_ table: SnapshotTable, history: StoreHistory, identifier: String, schema: Schema.Description) {
        self.table = table
        self.history = history
        self.identifier = identifier
        self.schema = schema
    }

    /// Reads the table.
    func withLock<Result>(_ body: (inout SnapshotTable) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&table)
    }

    /// Reads the history.
    func withHistory<Result>(_ body: (inout StoreHistory) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&history)
    }

    /// Changes the table and its history, one save at a time.
    func withSaveLock<Result>(_ body: (inout SnapshotTable, inout StoreHistory) throws -> Result) rethrows -> Result {
        saveLock.lock()
        defer { saveLock.unlock() }
        lock.lock()
        defer { lock.unlock() }
        return try body(&table, &history)
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
    private let record: StoreHistoryRecord?
    private var before: (table: SnapshotTable, history: StoreHistory)?
    private var isOpen = true

    init(table: GuardedTable, request: DataStoreSaveChangesRequest<DefaultSnapshot>, storeIdentifier: String) throws {
        table.beginPreparedSave()
        do {
            prepared = try table.withLock { try $0.prepare(request, storeIdentifier: storeIdentifier) }
        } catch {
            table.endPreparedSave()
            throw error
        }
        // The save lock keeps every other writer out until finish or abort, so the number stays free.
        let save = prepared
        let changes = table.withLock { $0.historyChanges(of: save) }
        record = table.withHistory { $0.nextRecord(changes, author: request.editingState.author) }
        self.table = table
        result = prepared.result(
            for: storeIdentifier,
            historyToken: record.map {
                DefaultHistoryToken(storeIdentifier: storeIdentifier, transactionNumber: $0.number)
            })
    }

    func commit() throws {
        precondition(isOpen && before == nil, "commit() is called once, between prepareSave and finish")
        let history = table.withHistory { history in
            defer { if let record { history.append(record) } }
            return history
        }
        table.withLock { table in
            self.before = (table, history)
            table.apply(prepared)
        }
    }

    func abort() {
        guard isOpen else { return }
        if let before {
            table.withLock { $0 = before.table }
            table.withHistory { $0 = before.history }
        }
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
