import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport

/// A city trip: synced between replicas in these tests.
public final class Journey: PersistentModel {
    /// The city, unique.
    @Attribute(.unique) public var name: String = ""
    /// What it may cost.
    @Attribute public var budget: Int = 0
    /// Free text.
    @Attribute public var notes: String = ""
    /// Its legs, deleted with it.
    @Relationship(deleteRule: .cascade, inverse: \Leg.journey) public var legs: [Leg] = []

    /// The model's storage.
    public let persistentBackingData = BackingData()
    /// An empty model.
    public init() {}
    /// A journey named `name` with `budget`.
    public convenience init(_ name: String, budget: Int = 0) {
        self.init()
        self.name = name
        self.budget = budget
    }
}

/// One leg of a journey.
public final class Leg: PersistentModel {
    /// Where the leg goes.
    @Attribute public var place: String = ""
    /// The journey it belongs to.
    @Relationship public var journey: Journey?

    /// The model's storage.
    public let persistentBackingData = BackingData()
    /// An empty model.
    public init() {}
    /// A leg at `place`.
    public convenience init(_ place: String) {
        self.init()
        self.place = place
    }
}

/// A model only a newer schema has.
public final class Traveller: PersistentModel {
    /// The traveller's name.
    @Attribute public var name: String = ""

    /// The model's storage.
    public let persistentBackingData = BackingData()
    /// An empty model.
    public init() {}
}

/// A replica: a container on a store URL, and its engine against a shared host.
public struct Replica {
    /// The replica's local container.
    public let container: ModelContainer
    /// Its engine.
    public let engine: SyncEngine

    /// The journeys and legs, with the sync entities.
    public static let schema = Schema([Journey.self, Leg.self]).includingSyncMetadata()

    /// A replica of a container and its engine.
    public init(container: ModelContainer, engine: SyncEngine) {
        self.container = container
        self.engine = engine
    }

    /// A replica on the store at `url`, syncing with `host` in process.
    public init(url: String, host: SyncHost, configuration: SyncConfiguration = SyncConfiguration()) throws {
        container = try ModelContainer(for: Self.schema, url: url)
        engine = try SyncEngine(
            container: container, transport: InProcessSyncTransport(host: host), configuration: configuration)
    }

    /// A new context on the replica's container.
    public func context() -> ModelContext { ModelContext(container) }

    /// Every journey as `name: budget notes [legs]`, sorted, for comparing replicas.
    public func journeys() throws -> [String] {
        try context().fetch(FetchDescriptor<Journey>()).map { journey in
            "\(journey.name): \(journey.budget) \(journey.notes) \(journey.legs.map(\.place).sorted())"
        }.sorted()
    }
}

/// A shared store and a host for it.
public func makeHost(url: String) throws -> SyncHost {
    try SyncHost(container: ModelContainer(for: Replica.schema, url: url))
}
