import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport

/// A city trip: synced between replicas in these tests.
final class Journey: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var budget: Int = 0
    @Attribute var notes: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Leg.journey) var legs: [Leg] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ name: String, budget: Int = 0) {
        self.init()
        self.name = name
        self.budget = budget
    }
}

/// One leg of a journey.
final class Leg: PersistentModel {
    @Attribute var place: String = ""
    @Relationship var journey: Journey?

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ place: String) {
        self.init()
        self.place = place
    }
}

/// A model only a newer schema has.
final class Traveller: PersistentModel {
    @Attribute var name: String = ""

    let persistentBackingData = BackingData()
    init() {}
}

/// A replica: a container on a store URL, and its engine against a shared host.
struct Replica {
    let container: ModelContainer
    let engine: SyncEngine

    static let schema = Schema([Journey.self, Leg.self]).includingSyncMetadata()

    init(container: ModelContainer, engine: SyncEngine) {
        self.container = container
        self.engine = engine
    }

    init(url: String, host: SyncHost, configuration: SyncConfiguration = SyncConfiguration()) throws {
        container = try ModelContainer(for: Self.schema, url: url)
        engine = try SyncEngine(
            container: container, transport: InProcessSyncTransport(host: host), configuration: configuration)
    }

    func context() -> ModelContext { ModelContext(container) }

    /// Every journey as `name: budget notes [legs]`, sorted, for comparing replicas.
    func journeys() throws -> [String] {
        try context().fetch(FetchDescriptor<Journey>()).map { journey in
            "\(journey.name): \(journey.budget) \(journey.notes) \(journey.legs.map(\.place).sorted())"
        }.sorted()
    }
}

/// A shared store and a host for it.
func makeHost(url: String) throws -> SyncHost {
    try SyncHost(container: ModelContainer(for: Replica.schema, url: url))
}
