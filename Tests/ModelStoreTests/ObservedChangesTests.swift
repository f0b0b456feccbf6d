import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Observation
import Testing

/// ``ObservedChanges``: a container's changes as an observable value on the main actor.
@MainActor
struct ObservedChangesTests {
    let container: ModelContainer
    let context: ModelContext

    init() throws {
        container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        context = ModelContext(container)
    }

    private func save(_ trip: Trip) throws {
        context.insert(trip)
        try context.save()
    }

    @Test func aBurstOfSavesArrivesAsOneObservableUpdate() throws {
        let trips = ObservedChanges(of: container, for: [Trip.self])
        let notified = LockedValue(0)
        withObservationTracking {
            _ = trips.count
        } onChange: {
            notified.withLock { $0 += 1 }
        }
        try save(Trip(name: "Lisbon"))
        try save(Trip(name: "Porto"))
        #expect(trips.count == 0, "changes arrive on the main actor's next turn, not inside the save")
        trips.takePendingChanges()
        #expect(trips.count == 2)
        #expect(notified.withLock { $0 } == 1)
        let latest = try #require(trips.latest)
        #expect(latest.insertedIdentifiers.count == 1)
        guard case .context = latest.origin else {
            Issue.record("a context's save has origin \(latest.origin)")
            return
        }
    }

    @Test func changesToOtherEntitiesAreNotCounted() throws {
        let items = ObservedChanges(of: container, for: [Item.self])
        let everything = ObservedChanges(of: container)
        try save(Trip(name: "Lisbon"))
        items.takePendingChanges()
        everything.takePendingChanges()
        #expect(items.count == 0 && items.latest == nil)
        #expect(everything.count == 1)
        try save(Trip(name: "Porto", items: [Item("Passport")]))
        items.takePendingChanges()
        #expect(items.count == 1)
        try container.erase()
        items.takePendingChanges()
        #expect(items.count == 2 && items.latest?.invalidatesAllIdentifiers == true)
    }

    @Test func changesArriveOnTheMainActorByThemselves() async throws {
        let trips = ObservedChanges(of: container, for: [Trip.self])
        try save(Trip(name: "Lisbon"))
        for _ in 0..<2_000 where trips.count == 0 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(trips.count == 1)
    }
}
