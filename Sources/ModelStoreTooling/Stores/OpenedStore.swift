import Foundation
import ModelStore

/// A store opened with a schema built from its stored description: read entity by entity and
/// written as snapshots, with no model types.
///
/// Reading goes through `StoreQuery` (`DataStoreFetchRequest<SchemaOnlyModel>` carrying the
/// entity's name), so the store must conform to `DataStoreQuerying`, as the built-in ones do.
/// ``StoreReference/open(schema:)`` opens one from a store URL.
public final class OpenedStore {
    /// The container that opened the store, kept so the store stays open.
    private var container: ModelContainer?
    /// The store.
    public let store: any DataStore
    /// The schema it was opened with.
    public let schema: Schema
    private let editingState = EditingState(author: "modelstore")
    /// The adapter's maintenance, which closes the store.
    private let maintenance: (any DataStoreMaintenance)?

    /// Opens the store a configuration names with `schema`; `name` is the URL, for errors.
    ///
    /// Throws `DataStoreError.Code.unsupportedFeature` for a store that does not run store queries.
    public init(
        configuration: any DataStoreConfiguration, schema: Schema, name: String,
        maintenance: (any DataStoreMaintenance)?
    ) throws {
        self.maintenance = maintenance
        let container = try ModelContainer(for: schema, configurations: [configuration])
        store = container.stores[0]
        self.container = container
        self.schema = schema
        guard store is any DataStoreQuerying else {
            throw DataStoreError(
                .unsupportedFeature,
                "the store '\(name)' (\(type(of: store))) does not run store queries, so it cannot be read "
                    + "entity by entity without the app's model types",
                remedy: "Its adapter can conform to DataStoreQuerying, as every built-in store does")
        }
    }

    /// The store's identifier, which goes into every identifier it mints.
    public var identifier: String { store.identifier }

    /// Every snapshot of an entity, in identifier order.
    public func snapshots(of entityName: String) throws -> [DefaultSnapshot] {
        try Self.fetch(entityName, from: store, editingState: editingState)
    }

    /// How many models of an entity the store holds.
    public func count(of entityName: String) throws -> Int {
        try Self.count(entityName, in: store, editingState: editingState)
    }

    /// Saves snapshots as new models in one save, and returns the identifiers the store changed
    /// (empty when it kept every identifier it was given).
    public func insert(_ snapshots: [DefaultSnapshot]) throws -> [PersistentIdentifier: PersistentIdentifier] {
        try Self.insert(snapshots, into: store, editingState: editingState)
    }

    /// Closes the store as its adapter's maintenance says (releasing a lock at once), or by releasing it.
    public func close() {
        maintenance?.close(store)
        container = nil
    }

    private static func request(
        _ entityName: String, _ editingState: EditingState
    ) -> DataStoreFetchRequest<SchemaOnlyModel> {
        DataStoreFetchRequest(
            descriptor: FetchDescriptor(), editingState: editingState, query: StoreQuery(entityName: entityName))
    }

    private static func fetch<S: DataStore>(
        _ entityName: String, from store: S, editingState: EditingState
    ) throws -> [DefaultSnapshot] {
        try store.fetch(request(entityName, editingState)).fetchedSnapshots.map(\.defaultSnapshot)
    }

    private static func count<S: DataStore>(
        _ entityName: String, in store: S, editingState: EditingState
    ) throws -> Int {
        try store.fetchCount(request(entityName, editingState))
    }

    private static func insert<S: DataStore>(
        _ snapshots: [DefaultSnapshot], into store: S, editingState: EditingState
    ) throws -> [PersistentIdentifier: PersistentIdentifier] {
        let request = DataStoreSaveChangesRequest<S.Snapshot>(
            editingState: editingState, inserted: snapshots.map(S.Snapshot.init), updated: [], deleted: [])
        return try store.save(request).remappedIdentifiers
    }
}
