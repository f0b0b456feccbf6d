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
/// It is a ``TableWritingStore`` over a ``SnapshotTableStorage``: it runs every query natively on
/// snapshots (``SnapshotTable``), enforces unique constraints atomically, and keeps the history of
/// every transaction (``HistoryProviding``) until it is deleted. Nothing survives the store, or, for
/// a shared one (``InMemoryStoreConfiguration/isShared``), the last open store of its name.
public final class InMemoryStore: TableWritingStore, DataStoreTwoPhaseSaving {
    /// The store's snapshot type.
    public typealias Snapshot = DefaultSnapshot

    /// A random identifier per store, shared by the stores that share its models.
    public let identifier: String
    /// The schema.
    public let schema: Schema
    /// The configuration.
    public let configuration: InMemoryStoreConfiguration
    /// The storage, held through its shared entry so that the entry lives as long as a store does.
    private let shared: SharedTables.Table
    private var storage: SnapshotTableStorage { shared.storage }

    /// Creates an empty store, or opens the shared one of the configuration's name.
    ///
    /// Throws ``DataStoreError/invalidConfiguration`` without a schema, or when a shared store of
    /// the name is open with other entities.
    public init(_ configuration: InMemoryStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the in-memory store '\(configuration.name)' has no schema",
                remedy: "Create it through a ModelContainer, or set the configuration's schema")
        }
        let make = {
            SharedTables.Table(
                storage: SnapshotTableStorage(
                    SnapshotTable(schema: schema), history: StoreHistory(limit: configuration.historyLimit)),
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
        self.configuration = configuration
        self.schema = schema
        self.identifier = table.identifier
        self.shared = table
    }

    /// Runs `body` on the table under its read lock.
    public func readTable<Result>(_ body: (SnapshotTable) throws -> Result) rethrows -> Result {
        try storage.read(body)
    }

    /// Runs `change` on the live table, one write at a time.
    public func writeTable<Result>(
        _ change: (inout SnapshotTable, inout StoreHistory) throws -> (result: Result, changed: Bool)
    ) rethrows -> Result {
        try storage.write(change)
    }

    /// Runs `body` on the history under the table's read lock.
    public func readHistory<Result>(_ body: (StoreHistory) throws -> Result) rethrows -> Result {
        try storage.readHistory(body)
    }

    /// Prepares a save that spans several stores: validates it and mints identifiers, holding the
    /// store's save lock until the part is finished or aborted.
    public func prepareSave(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> any PreparedStoreSave<DefaultSnapshot> {
        try storage.prepareSave(request, storeIdentifier: identifier)
    }
}

/// The open shared stores' storage by name, held weakly: a name's models live as long as one of its stores.
private enum SharedTables {
    /// One name's storage, the identifier its stores share, and the entities it was made for.
    final class Table: Sendable {
        let storage: SnapshotTableStorage
        let identifier: String
        let schema: Schema.Description

        init(storage: SnapshotTableStorage, identifier: String, schema: Schema.Description) {
            self.storage = storage
            self.identifier = identifier
            self.schema = schema
        }
    }

    private final class Entry: @unchecked Sendable {
        // Safety: `table` is read and written only inside `tables.withLock`.
        weak var table: Table?
        init(_ table: Table) { self.table = table }
    }

    private static let tables = LockedValue<[String: Entry]>([:])

    /// The open table named `name`, or a new one from `make`.
    static func table(named name: String, make: () -> Table) -> Table {
        tables.withLock { tables in
            if let open = tables[name]?.table { return open }
            let table = make()
            tables = tables.filter { $0.value.table != nil }
            tables[name] = Entry(table)
            return table
        }
    }
}
