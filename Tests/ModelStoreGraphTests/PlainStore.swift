import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreInMemory

/// Switches that make a ``PlainStore`` fail, shared between a test and the store it configures.
final class StoreFaults: Sendable {
    private let state = LockedValue<(fetches: Bool, saves: Bool)>((false, false))

    /// Whether every fetch throws.
    var failFetches: Bool {
        get { state.withLock { $0.fetches } }
        set { state.withLock { $0.fetches = newValue } }
    }

    /// Whether every save throws.
    var failSaves: Bool {
        get { state.withLock { $0.saves } }
        set { state.withLock { $0.saves = newValue } }
    }
}

/// Configures a ``PlainStore``.
struct PlainStoreConfiguration: DataStoreConfiguration {
    typealias Store = PlainStore
    var name: String
    var schema: Schema?
    let faults: StoreFaults

    init(name: String, schema: Schema? = nil, faults: StoreFaults = StoreFaults()) {
        self.name = name
        self.schema = schema
        self.faults = faults
    }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(name) }
}

/// A store with only the required `DataStore` surface (no two-phase save), over an in-memory
/// store, that fails on demand: what a simple third-party adapter looks like.
final class PlainStore: DataStore {
    typealias Snapshot = DefaultSnapshot
    let configuration: PlainStoreConfiguration
    let schema: Schema
    private let base: InMemoryStore
    var identifier: String { base.identifier }

    init(_ configuration: PlainStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        self.configuration = configuration
        base = try InMemoryStore(
            InMemoryStoreConfiguration(name: configuration.name, schema: configuration.schema),
            migrationPlan: migrationPlan)
        schema = base.schema
    }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<
        T, DefaultSnapshot
    > {
        if configuration.faults.failFetches {
            throw DataStoreError(.io, "the test made fetches of '\(configuration.name)' fail")
        }
        return try base.fetch(DataStoreFetchRequest(descriptor: request.descriptor, editingState: request.editingState))
    }

    func save(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) throws -> DataStoreSaveChangesResult<
        DefaultSnapshot
    > {
        if configuration.faults.failSaves {
            throw DataStoreError(.io, "the test made saves of '\(configuration.name)' fail")
        }
        return try base.save(request)
    }
}
