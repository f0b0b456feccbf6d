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
}
