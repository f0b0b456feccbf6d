import Foundation
import ModelStoreAdapters
import ModelStoreMacros
import Testing

/// An importer written as a SwiftData app writes one.
@ModelActor
actor TripImporter {
    func importTrips(_ names: [String]) throws -> [PersistentIdentifier] {
        let trips = names.map { Trip(name: $0, start: Date(timeIntervalSince1970: 0)) }
        trips.forEach(modelContext.insert)
        try modelContext.save()
        return trips.map(\.persistentModelID)
    }

    func addTrip(_ name: String) throws {
        modelContext.insert(Trip(name: name, start: Date(timeIntervalSince1970: 0)))
        try modelContext.save()
    }

    /// Whether the actor's context is the one its executor holds.
    func usesTheExecutorsContext() -> Bool { modelContext === modelExecutor.modelContext }

    func names() throws -> [String] {
        try modelContext.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map(\.name)
    }
}

/// `@ModelActor`: an actor with its own context on a container.
struct ModelActorTests {
    @Test func anActorInsertsAndTheContainerSeesItsSaves() async throws {
        let directory = try TemporaryDirectory()
        let container = try ModelContainer(
            for: Trip.self, Item.self, Destination.self, url: "sqlite:\(directory.url.path)/actor.sqlite")
        let importer = TripImporter(modelContainer: container)
        let ids = try await importer.importTrips(["B", "A"])
        #expect(ids.count == 2)
        #expect(try await importer.names() == ["A", "B"])
        #expect(importer.modelContainer === container)
        let context = ModelContext(container)
        #expect(try context.fetch(FetchDescriptor<Trip>()).map(\.name).sorted() == ["A", "B"])
        #expect(try context.model(for: ids[0], as: Trip.self)?.name == "B")
    }

    @Test func theActorRunsOnItsModelExecutorOneJobAtATime() async throws {
        let container = try ModelContainer(for: Trip.self, Item.self, Destination.self, url: "memory:")
        let importer = TripImporter(modelContainer: container)
        #expect(importer.modelExecutor is DefaultSerialModelExecutor)
        #expect(await importer.usesTheExecutorsContext())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<40 {
                group.addTask { try await importer.addTrip("Trip \(index)") }
            }
            try await group.waitForAll()
        }
        #expect(try await importer.names().count == 40)
    }
}
