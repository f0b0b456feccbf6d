import Foundation

/// The schema and the stores of an app: SwiftData's `ModelContainer`.
///
/// ```swift
/// let container = try ModelContainer(for: Trip.self, Item.self, configurations: .inMemory())
/// let context = ModelContext(container)
/// ```
///
/// A container is `Sendable`: share it between actors and give each its own ``ModelContext``
/// (see ``ModelActor``). Each configuration creates one store, which owns the entities of its
/// configuration's schema (or every entity no other configuration claims).
public final class ModelContainer: Sendable {
    /// The schema of every store in the container.
    public let schema: Schema
    /// The configurations, one per store.
    public let configurations: [any DataStoreConfiguration]
    /// The stores, one per configuration, in the order of ``configurations``.
    public let stores: [any DataStore]
    /// The channel the contexts talk to each store through, in the order of ``stores``.
    let channels: [StoreChannel]
    private let storeIndexByEntity: [String: Int]
    /// The subscribers to ``changes``.
    package let changeHub = ChangeHub()
    /// The fetch plans kept per descriptor shape (the schema and stores never change).
    let fetchPlans = FetchPlanCache()
    private let duplicateInserts = LockedValue(DuplicateInsertPolicy.upsert)

    /// What the saves of contexts made from now on do with an inserted model whose unique values
    /// another model already has: ``DuplicateInsertPolicy/upsert`` by default, as in SwiftData
    /// (each context can change its own ``ModelContext/duplicateInsertPolicy``).
    public var duplicateInsertPolicy: DuplicateInsertPolicy {
        get { duplicateInserts.withLock { $0 } }
        set { duplicateInserts.withLock { $0 = newValue } }
    }
    @MainActor private var mainContextStorage: ModelContext?

    /// A container for these model types (and the types their relationships reach).
    public convenience init(
        for types: any PersistentModel.Type..., configurations: any DataStoreConfiguration...
    ) throws {
        try self.init(for: Schema.shared(for: types), configurations: configurations)
    }

    /// A container for a schema, with an optional migration plan passed to every store.
    ///
    /// Validates the schema (throwing ``DataStoreError/invalidSchema``) and each configuration,
    /// then opens the stores. With no configuration it opens the default store, as SwiftData
    /// does: `MODELSTORE_URL` when set, else the shared registry's
    /// ``StoreRegistry/defaultStoreURL`` (throwing ``DataStoreError/invalidConfiguration`` when
    /// neither is set).
    public init(
        for schema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)? = nil,
        configurations: [any DataStoreConfiguration]
    ) throws {
        try schema.validate()
        let configurations = configurations.isEmpty ? [try StoreRegistry.shared.defaultConfiguration()] : configurations
        var stores: [any DataStore] = []
        var prepared: [any DataStoreConfiguration] = []
        var owner: [String: Int] = [:]
        // Configurations that name their own schema claim their entities first; one without takes the rest.
        for (index, configuration) in configurations.enumerated() {
            try configuration.validate()
            if let own = configuration.schema {
                for entity in own.entities where owner[entity.name] == nil { owner[entity.name] = index }
            }
        }
        if let general = configurations.firstIndex(where: { $0.schema == nil }) {
            for entity in schema.entities where owner[entity.name] == nil { owner[entity.name] = general }
        }
        if let orphan = schema.entities.first(where: { owner[$0.name] == nil }) {
            throw DataStoreError(
                .invalidConfiguration, "no configuration stores the entity '\(orphan.name)'",
                remedy: "Add '\(orphan.name)' to a configuration's schema, or add a configuration without a schema")
        }
        let names = configurations.map(\.name)
        if let duplicate = names.first(where: { name in names.filter { $0 == name }.count > 1 }) {
            throw DataStoreError(
                .invalidConfiguration, "two configurations are named '\(duplicate)'",
                remedy: "Give each configuration a unique name")
        }
        for configuration in configurations {
            func open<C: DataStoreConfiguration>(_ configuration: C) throws -> (any DataStore, C) {
                var configuration = configuration
                if configuration.schema == nil { configuration.schema = schema }
                let start = ContinuousClock.now
                let store = try C.Store(configuration, migrationPlan: migrationPlan)
                DebugLog.write(
                    1,
                    "opened \(C.Store.self) '\(configuration.name)' for "
                        + "\(configuration.schema?.entities.map(\.name).joined(separator: ", ") ?? "") "
                        + "in \(DebugLog.milliseconds(since: start))")
                return (store, configuration)
            }
            let (store, configured) = try open(configuration)
            stores.append(store)
            prepared.append(configured)
        }
        self.schema = schema
        self.configurations = prepared
        self.stores = stores
        self.channels = stores.map(StoreChannel.init)
        self.storeIndexByEntity = owner
    }

    /// The context bound to the main actor, created on first use. It merges what other contexts
    /// save as they save it (``ModelContext/automaticallyMergesChanges`` is on), and saves its own
    /// changes soon after they are made (``ModelContext/autosaveEnabled`` is on).
    @MainActor public var mainContext: ModelContext {
        if let context = mainContextStorage { return context }
        let context = ModelContext(self)
        context.mergesOnMainActor = true
        context.automaticallyMergesChanges = true
        context.autosaveEnabled = true
        mainContextStorage = context
        return context
    }

    /// Runs the main context's scheduled autosave.
    @MainActor func autosaveMainContext() { mainContextStorage?.autosave() }

    /// Lets the main context take in other contexts' saves.
    @MainActor func mergeMainContextChanges() { mainContextStorage?.mergePendingChanges() }

    /// The channel to the store that holds an entity.
    func channel(for entityName: String) throws -> StoreChannel {
        channels[try storeIndex(for: entityName)]
    }

    /// The position in ``stores`` of the store that holds an entity.
    func storeIndex(for entityName: String) throws -> Int {
        guard let index = storeIndexByEntity[entityName] else {
            throw DataStoreError(
                .notFound, "the container's schema has no entity '\(entityName)'",
                remedy: "Pass the model type to ModelContainer(for:configurations:)", entityName: entityName)
        }
        return index
    }

    /// Deletes every model in every store, then tells ``changes`` subscribers that every model may
    /// be gone, and posts ``ModelContext/didSave`` with this container as its object and
    /// ``ModelContext/NotificationKey/invalidatedAllIdentifiers`` set, as SwiftData does.
    public func erase() throws {
        defer {
            changeHub.publish(ModelContainerChange(invalidatesAllIdentifiers: true, origin: .erase))
            ModelContext.postDidSave(object: self, invalidatesAllIdentifiers: true)
        }
        for channel in channels { try channel.requireAllowsSave("erasing every model") }
        for store in stores { try store.erase() }
    }

    /// SwiftData's name for ``erase()``: deletes every model in every store.
    public func deleteAllData() throws { try erase() }
}
