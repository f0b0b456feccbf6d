import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTooling

/// A store opened by URL with the schema it recorded, read and written as snapshots, with no model types.
///
/// It reaches the adapter through the scheme registered for the URL (the built-in `memory:`, `json:`,
/// `log:` and `sqlite:`, and any scheme a linked adapter registers, such as `postgres:`), reads the
/// schema the store keeps, and sends the store queries (`StoreQuery`) and saves directly, so it
/// works on any `DataStoreQuerying` store whatever app wrote it.
///
/// Calls are serialized by a lock: the store is used from the server's tasks.
public final class StudioStore: @unchecked Sendable {
    // Safety: `store` and `container` are only touched under `lock`; the rest is immutable.
    /// The URL as given, with a password in it replaced by `***`.
    public let url: String
    /// The schema the store recorded, as opened.
    public let schema: Schema
    /// The store's own identifier, part of every identifier it mints.
    public let storeIdentifier: String
    /// The type of the store, for explanations (`SQLiteStore`).
    public let storeTypeName: String
    /// The store's query capabilities.
    public let capabilities: QueryCapabilities
    /// Whether the store keeps history (`HistoryProviding`).
    public let keepsHistory: Bool

    private let lock = NSLock()
    private var container: ModelContainer?
    /// The values before and after of the edits made through this studio, by transaction number:
    /// the store's history records which properties changed, not their values.
    private var editedValues: [Int64: EditedValue] = [:]
    private let store: any DataStore
    private let maintenance: (any DataStoreMaintenance)?
    private let maintenanceRequest: StoreMaintenanceRequest

    /// Opens the store a URL names with the schema it recorded.
    ///
    /// Throws ``StudioError`` when the URL's scheme is not registered, the scheme cannot read a stored
    /// schema (`memory:`), nothing is at the URL, or the store does not run store queries.
    public init(url typed: String, registry: StoreRegistry = .shared) throws {
        // Pages, errors and the maintenance's messages name the store without a password in its URL.
        let string = StoreURL.redactingPassword(in: typed)
        registry.registerBuiltInSchemes()
        let url: StoreURL
        do {
            url = try registry.url(typed)
        } catch {
            throw StudioError(.store, String(describing: error))
        }
        guard let scheme = registry.scheme(named: url.scheme) else {
            throw StudioError(
                .store, "the scheme '\(url.scheme):' of '\(string)' is not registered",
                remedy: "Use 'sqlite:PATH', 'json:PATH' or 'log:DIR', or link the adapter that registers it")
        }
        guard let maintenance = scheme.maintenance else {
            throw StudioError(
                .store,
                "the scheme '\(scheme.name):' keeps no schema that the studio could read, so '\(string)' cannot be "
                    + "opened without the app's model types",
                remedy: "Name a stored store, such as 'sqlite:PATH', 'json:PATH', 'log:DIR' or 'postgres://…'")
        }
        let configuration: any DataStoreConfiguration
        let description: Schema.Description
        do {
            configuration = try scheme.makeConfiguration(url)
            if maintenance.storesFiles && !url.location.isEmpty
                && !FileManager.default.fileExists(atPath: url.fileURL.path)
            {
                throw StudioError(
                    .notFound, "there is no store at '\(url.fileURL.path)' (named by '\(string)')",
                    remedy: "Check the path; a relative path starts from '\(FileManager.default.currentDirectoryPath)'")
            }
            description = try maintenance.storedSchema(
                StoreMaintenanceRequest(name: string, url: url, configuration: configuration))
        } catch let error as StudioError {
            throw error
        } catch {
            throw StudioError(.store, String(describing: error))
        }
        do {
            let schema = try Schema(description)
            let container = try ModelContainer(for: schema, configurations: [configuration])
            self.schema = schema
            self.container = container
            store = container.stores[0]
        } catch {
            throw StudioError(.store, "the store '\(string)' could not be opened: \(error)")
        }
        guard let querying = store as? any DataStoreQuerying else {
            throw StudioError(
                .store,
                "the store '\(string)' (\(type(of: store))) does not run store queries, so the studio cannot read it "
                    + "entity by entity without the app's model types",
                remedy: "Its adapter can conform to DataStoreQuerying, as every built-in store does")
        }
        self.url = string
        self.maintenance = maintenance
        maintenanceRequest = StoreMaintenanceRequest(name: string, url: url, configuration: configuration)
        capabilities = querying.queryCapabilities
        storeIdentifier = store.identifier
        storeTypeName = String(describing: type(of: store))
        keepsHistory = store is any HistoryProviding
    }

    /// The sync conflicts the store keeps, oldest first (resolved ones too when asked), or `nil` for a
    /// store that was never synced (its schema has no sync entities).
    public func conflicts(includingResolved: Bool) throws -> [SyncConflict]? {
        guard let container = lock.withLock({ container }), schema.entity(named: SyncMetadata.conflictEntityName) != nil
        else { return nil }
        return try SyncConflicts(container: container).list(includingResolved: includingResolved)
    }

    /// Resolves a sync conflict by keeping one side's value, as `modelstore conflicts --resolve` does,
    /// saved as author `studio`.
    public func resolveConflict(_ id: String, take side: SyncConflicts.Side) throws {
        guard let container = lock.withLock({ container }) else {
            throw StudioError(.store, "the store '\(url)' is closed")
        }
        try SyncConflicts(container: container, author: "studio").resolve(id, take: side)
    }

    /// The model a sync global identifier names in this store, if it has it.
    public func model(forGlobalID globalID: String, entity: String) throws -> PersistentIdentifier? {
        let records = SyncMetadata.recordEntityName(for: entity)
        guard schema.entity(named: records) != nil else { return nil }
        let found = try fetch(StoreQuery(entityName: records, filter: .equal("globalID", .string(globalID)), limit: 1))
        if case .reference(let id)? = found.first?["model"] { return id }
        return nil
    }

    /// Closes the store as its adapter says (releasing its locks at once).
    public func close() {
        lock.withLock {
            maintenance?.close(store)
            container = nil
        }
    }

    /// The entities, by name.
    public var entities: [Schema.Entity] { schema.entities.sorted { $0.name < $1.name } }

    /// The entity named `name`; throws ``StudioError/Kind/notFound`` listing the entities otherwise.
    public func entity(named name: String) throws -> Schema.Entity {
        guard let entity = schema.entities.first(where: { $0.name == name }) else {
            throw StudioError(
                .notFound, "the store '\(url)' has no entity '\(name)'",
                remedy: "Its entities are " + entities.map { "'\($0.name)'" }.joined(separator: ", "))
        }
        return entity
    }

    // MARK: Reading

    /// The snapshots a query selects, in its order.
    public func fetch(_ query: StoreQuery) throws -> [DefaultSnapshot] {
        try checkRuns(query)
        return try guarded { try Self.fetch(query, from: store) }
    }

    /// The identifiers a query selects, in its order: what a bounded count reads.
    public func identifiers(_ query: StoreQuery) throws -> [PersistentIdentifier] {
        try checkRuns(query)
        return try guarded { try Self.identifiers(query, from: store) }
    }

    /// How many models a query selects (an exact count reads every matching row).
    public func count(_ query: StoreQuery) throws -> Int {
        try checkRuns(query)
        return try guarded { try Self.count(query, in: store) }
    }

    /// How many models of each entity the store holds, by entity name, as its adapter's maintenance
    /// finds them without reading a large table whole (counted, or estimated from its statistics:
    /// `StoreEntityCount.isEstimate`); `nil` when the adapter keeps no statistics, and for a store
    /// kept in files.
    ///
    /// A file store's maintenance reads the files through a connection of its own, and this process
    /// has the store open: closing a second SQLite connection to the file drops the locks the open one
    /// holds (POSIX locks belong to the process), so another process that then closes the store takes
    /// itself for the last one and deletes the write-ahead log and its index, leaving the studio's
    /// connection on the deleted files, blind to every later commit. The pages count such a store
    /// through the open one instead.
    public func estimatedCounts() throws -> [String: StoreEntityCount]? {
        guard let maintenance, !maintenance.storesFiles else { return nil }
        do {
            guard let counts = try maintenance.estimatedCounts(maintenanceRequest) else { return nil }
            return Dictionary(counts.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        } catch {
            throw StudioError.from(error)
        }
    }

    /// The model with an identifier, or `nil` if the store does not have it.
    public func snapshot(_ id: PersistentIdentifier) throws -> DefaultSnapshot? {
        try fetch(StoreQuery(entityName: id.entityName, filter: .identifiers([id]))).first
    }

    /// How the store would reach the rows of a query (scan or index), if it says.
    public func accessPath(for query: StoreQuery) -> StoreAccessPath? {
        lock.withLock { (store as? any DataStoreQuerying)?.accessPath(for: query) }
    }

    /// The store's own account of how it runs a query (an SQL store's `EXPLAIN`), as its adapter's
    /// maintenance gives it; `nil` when the adapter gives none or the plan cannot be read.
    public func queryPlan(for query: StoreQuery) -> [String]? {
        guard let maintenance else { return nil }
        return lock.withLock { try? maintenance.queryPlan(for: query, in: store) }
    }

    /// Throws ``StudioError/Kind/badRequest`` when the store cannot run a query exactly as asked:
    /// the studio sends every query whole to the store and never evaluates it itself.
    public func checkRuns(_ query: StoreQuery) throws {
        if let filter = query.filter {
            let missing = filter.kinds.subtracting(capabilities.filters)
            if !missing.isEmpty {
                throw StudioError(
                    .badRequest,
                    "the store '\(url)' (\(storeTypeName)) cannot run the conditions \(missing) of the filter exactly",
                    remedy: "Write the filter with the kinds the store runs: \(capabilities.filters)")
            }
        }
        if !query.sort.isEmpty && !capabilities.sorting {
            throw StudioError(
                .badRequest, "the store '\(url)' (\(storeTypeName)) does not sort", remedy: "Browse in identifier order"
            )
        }
        if (query.limit != nil || query.offset > 0) && !capabilities.offsetAndLimit {
            throw StudioError(
                .badRequest, "the store '\(url)' (\(storeTypeName)) does not apply a limit, so it cannot be paged",
                remedy: "Its adapter can declare offsetAndLimit in its QueryCapabilities")
        }
    }

    // MARK: History

    /// The newest transactions, newest first: at most `limit`, older than `before` when given.
    public func history(before: Int64? = nil, limit: Int) throws -> [DefaultHistoryTransaction] {
        guard keepsHistory else { return [] }
        var descriptor: HistoryDescriptor<DefaultHistoryTransaction>
        if let before {
            descriptor = HistoryDescriptor(predicate: #Predicate { $0.token.transactionNumber < before })
        } else {
            descriptor = HistoryDescriptor()
        }
        descriptor.sortBy = [SortDescriptor(\.token.transactionNumber, order: .reverse)]
        descriptor.fetchLimit = limit
        return try guarded {
            guard let history = store as? any HistoryProviding else { return [] }
            return try history.fetchHistory(descriptor)
        }
    }

    /// The number of the newest transaction in the store's history, 0 when there is none: the history
    /// token a page is rendered at, and what the live pages' watch reads.
    public func newestTransactionNumber() throws -> Int64 {
        try history(limit: 1).first?.transactionIdentifier ?? 0
    }

    /// The numbers of the transactions after transaction `number`, oldest first, at most `limit`: what
    /// a page rendered at `number` has not shown.
    public func transactionNumbers(after number: Int64, limit: Int) throws -> [Int64] {
        guard keepsHistory else { return [] }
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(
            predicate: #Predicate { $0.token.transactionNumber > number })
        descriptor.sortBy = [SortDescriptor(\.token.transactionNumber)]
        descriptor.fetchLimit = limit
        return try guarded {
            guard let history = store as? any HistoryProviding else { return [] }
            return try history.fetchHistory(descriptor).map(\.transactionIdentifier)
        }
    }

    /// The sizes and modification times of a store's files, which change when anyone commits.
    public struct FileSignature: Sendable, Hashable {
        /// Each file's name, size and modification time.
        public var files: [String]
        /// The latest modification time among the files.
        public var lastModified: Date

        /// Whether a file was modified less than `interval` before `now` (or claims a later time).
        public func changed(within interval: Duration, of now: Date = Date()) -> Bool {
            let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
            return lastModified > now.addingTimeInterval(-seconds)
        }
    }

    /// The sizes and modification times of the store's files, which change when anyone commits;
    /// `nil` for a store with no files the studio can see (PostgreSQL).
    ///
    /// Besides the files the scheme's maintenance lists, it looks at the files beside a store file
    /// whose names start with the file's name, where a database keeps its journal (SQLite's `-wal`,
    /// which a commit changes while the database file itself stays as it was).
    public func fileSignature() -> FileSignature? {
        let files = maintenance?.files(maintenanceRequest) ?? []
        guard !files.isEmpty else { return nil }
        let location = maintenanceRequest.location
        var isDirectory: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: location.path, isDirectory: &isDirectory)
        let folder = exists && isDirectory.boolValue ? location : location.deletingLastPathComponent()
        var names = Set(files.map(\.path))
        if exists && !isDirectory.boolValue {
            let prefix = location.lastPathComponent
            let siblings = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            names.formUnion(siblings.filter { $0.hasPrefix(prefix) })
        }
        var lastModified = Date.distantPast
        let entries = names.sorted().map { name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)
            let size = (attributes?[.size] as? NSNumber)?.int64Value ?? -1
            let modified = attributes?[.modificationDate] as? Date ?? .distantPast
            lastModified = max(lastModified, modified)
            return "\(name) \(size) \(modified.timeIntervalSince1970)"
        }
        return FileSignature(files: entries, lastModified: lastModified)
    }

    // MARK: Writing

    /// Sets one attribute of a model, as author `studio`, if its stored attribute values are still
    /// `expected` (the values the page showed): a change made meanwhile is refused as a conflict,
    /// as a context with the `.error` merge policy refuses it.
    public func update(
        _ id: PersistentIdentifier, attribute name: String, to value: StoreValue, expected: [StoreValue]
    ) throws {
        let entity = try entity(named: id.entityName)
        guard let attribute = entity.attribute(named: name) else {
            throw StudioError(.notFound, "'\(entity.name)' has no attribute '\(name)'")
        }
        guard let current = try snapshot(id) else {
            throw StudioError(.notFound, "the store '\(url)' has no model '\(id)'", remedy: "It may have been deleted")
        }
        if let hierarchy = ClassHierarchy(entity) {
            if name == hierarchy.classAttribute.name {
                throw StudioError(
                    .forbidden, "'\(name)' records the class of '\(id)', which an edit cannot change",
                    remedy: "Insert a model of the other class from the app and delete this one")
            }
            if let className = hierarchy.className(of: current),
                !hierarchy.has(.attribute(attribute), inClass: className)
            {
                throw StudioError(
                    .badRequest, "'\(id)' is a '\(className)', which has no attribute '\(name)'",
                    remedy: "Edit an attribute of '\(className)' or of a class it inherits from")
            }
        }
        var changed = current
        changed.values[attribute.slot] = value
        var request = DataStoreSaveChangesRequest<DefaultSnapshot>(
            editingState: EditingState(author: Self.author), inserted: [], updated: [changed], deleted: [])
        request.expectedValues = [id: expected]
        let differing = entity.attributes.filter { attribute in
            attribute.slot < expected.count && current.values[attribute.slot] != expected[attribute.slot]
        }
        if !differing.isEmpty {
            throw StudioError(
                .conflict,
                "'\(id)' changed since the page showed it: "
                    + differing.map { "'\($0.name)'" }.joined(separator: ", ") + " no longer hold what was shown",
                remedy: "Reload the page and make the change again")
        }
        if !capabilities.enforcesUniqueness {
            try checkUniqueness(of: changed, in: entity)
        }
        // A store that keeps no history, or does not return the token, gets no values before and after.
        let number = try guarded { try Self.save(request, to: store) }?.transactionNumber
        if let number {
            lock.withLock {
                editedValues[number] = EditedValue(
                    attribute: name, before: current.values[attribute.slot], after: value)
            }
        }
    }

    /// Throws ``StudioError/Kind/conflict`` with the error a store that enforces uniqueness throws
    /// (`DataStoreError.uniqueConstraintViolation`) when another model of `entity` holds the key
    /// `changed` gives one of its uniqueness constraints; a key with a `nil` in it claims nothing.
    ///
    /// This is the check a context runs before it saves to a store that leaves uniqueness to it
    /// (`QueryCapabilities.enforcesUniqueness` is false), made with one query per constraint, since
    /// the studio saves snapshots without a context.
    func checkUniqueness(of changed: DefaultSnapshot, in entity: Schema.Entity) throws {
        constraints: for names in entity.uniquenessConstraints {
            var key: [StoreValue] = []
            for name in names {
                guard let slot = entity.slot(of: name), !changed.values[slot].isNull else { continue constraints }
                key.append(changed.values[slot])
            }
            let sameKey = StoreFilter.and(zip(names, key).map { StoreFilter.equal($0, $1) })
            let holders = try identifiers(StoreQuery(entityName: entity.name, filter: sameKey, limit: 2))
            if holders.contains(where: { $0 != changed.persistentIdentifier }) {
                throw StudioError.from(
                    DataStoreError.uniqueConstraintViolation(
                        entityName: entity.name, propertyNames: names, conflictingValues: key))
            }
        }
    }

    /// One attribute an edit through this studio changed, with its values before and after.
    public struct EditedValue: Sendable, Hashable {
        /// The attribute's name.
        public var attribute: String
        /// Its value before the edit.
        public var before: StoreValue
        /// Its value after.
        public var after: StoreValue
    }

    /// The values before and after of the edit that made a transaction, if this studio made it since it
    /// started.
    public func editedValue(inTransaction number: Int64) -> EditedValue? {
        lock.withLock { editedValues[number] }
    }

    /// Deletes a model as author `studio`; refuses one that still has related models, since the studio
    /// has no model types to apply the app's delete rules with.
    public func delete(_ id: PersistentIdentifier) throws {
        let entity = try entity(named: id.entityName)
        guard let current = try snapshot(id) else {
            throw StudioError(.notFound, "the store '\(url)' has no model '\(id)'", remedy: "It may have been deleted")
        }
        for relationship in entity.relationships where !current.values[relationship.slot].referencedIdentifiers.isEmpty
        {
            throw StudioError(
                .forbidden,
                "'\(id)' still has related models in '\(entity.name).\(relationship.name)' (delete rule "
                    + "'\(relationship.deleteRule.rawValue)')",
                remedy: "Remove those first, or delete it from the app, which applies the delete rules")
        }
        let request = DataStoreSaveChangesRequest<DefaultSnapshot>(
            editingState: EditingState(author: Self.author), inserted: [], updated: [], deleted: [current])
        _ = try guarded { try Self.save(request, to: store) }
    }

    /// The author the studio's writes are recorded with in history.
    public static let author = "studio"

    // MARK: Generic bodies

    private func guarded<T>(_ body: () throws -> T) throws -> T {
        do {
            return try lock.withLock(body)
        } catch {
            throw StudioError.from(error)
        }
    }

    private static func request(_ query: StoreQuery) -> DataStoreFetchRequest<StudioRecord> {
        DataStoreFetchRequest(descriptor: FetchDescriptor(), editingState: EditingState(author: author), query: query)
    }

    private static func fetch<S: DataStore>(_ query: StoreQuery, from store: S) throws -> [DefaultSnapshot] {
        try store.fetch(request(query)).fetchedSnapshots.map(\.defaultSnapshot)
    }

    private static func identifiers<S: DataStore>(
        _ query: StoreQuery, from store: S
    ) throws -> [PersistentIdentifier] {
        try store.fetchIdentifiers(request(query))
    }

    private static func count<S: DataStore>(_ query: StoreQuery, in store: S) throws -> Int {
        try store.fetchCount(request(query))
    }

    /// Saves a request in the store's snapshot type; returns the token of the transaction it recorded.
    private static func save<S: DataStore>(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, to store: S
    ) throws -> DefaultHistoryToken? {
        var withExpected = DataStoreSaveChangesRequest<S.Snapshot>(
            editingState: request.editingState, inserted: request.inserted.map(S.Snapshot.init),
            updated: request.updated.map(S.Snapshot.init), deleted: request.deleted.map(S.Snapshot.init))
        withExpected.expectedValues = request.expectedValues
        return try store.save(withExpected).historyToken
    }
}
