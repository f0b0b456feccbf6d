import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreInMemory
import ModelStoreTestSupport
import Observation
import Testing

struct ObservationTests {
    @Test func propertyWritesNotifyObservers() throws {
        let trip = Trip(name: "Spring")
        let changed = LockedValue(0)
        withObservationTracking {
            _ = trip.name
        } onChange: {
            changed.withLock { $0 += 1 }
        }
        trip.budget = 10
        #expect(changed.withLock { $0 } == 0, "an unread property does not notify")
        trip.name = "Autumn"
        #expect(changed.withLock { $0 } == 1)
    }

    @Test func relationshipWritesAndInverseUpdatesNotifyObservers() throws {
        let trip = Trip(name: "Spring")
        let item = Item("Passport")
        let changed = LockedValue(0)
        withObservationTracking {
            _ = trip.items
        } onChange: {
            changed.withLock { $0 += 1 }
        }
        item.trip = trip
        #expect(changed.withLock { $0 } == 1, "setting the inverse side notifies observers of this side")
        #expect(trip.items.count == 1)
    }

    /// Counts the observation notifications of reading `read` once.
    private func observing(_ read: @escaping () -> Void) -> LockedValue<Int> {
        let changed = LockedValue(0)
        withObservationTracking(read) { changed.withLock { $0 += 1 } }
        return changed
    }

    @Test func valuesAnotherContextSavedNotifyObserversWhenMerged() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let watcher = ModelContext(container)
        watcher.automaticallyMergesChanges = true
        watcher.insert(Trip(name: "Lisbon", budget: 100))
        try watcher.save()
        let trip = try #require(try watcher.fetch(FetchDescriptor<Trip>()).first)
        let changed = observing { _ = trip.budget }
        let writer = ModelContext(container)
        try #require(try writer.fetch(FetchDescriptor<Trip>()).first).budget = 250
        try writer.save()
        #expect(changed.withLock { $0 } == 0, "nothing changed in the watcher's model before it merges")
        watcher.mergePendingChanges()
        #expect(trip.budget == 250)
        #expect(changed.withLock { $0 } == 1, "the merge replaced the value without a setter, and must say so")
    }

    @Test func rollbackAndRefreshingFetchesNotifyObservers() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let context = ModelContext(container)
        context.insert(Trip(name: "Lisbon", budget: 100))
        try context.save()
        let trip = try #require(try context.fetch(FetchDescriptor<Trip>()).first)
        trip.budget = 5
        let rolledBack = observing { _ = trip.budget }
        context.rollback()
        #expect(trip.budget == 100 && rolledBack.withLock { $0 } == 1)

        let writer = ModelContext(container)
        try #require(try writer.fetch(FetchDescriptor<Trip>()).first).name = "Porto"
        try writer.save()
        let refreshed = observing { _ = trip.name }
        _ = try context.fetch(FetchDescriptor<Trip>())
        #expect(trip.name == "Porto" && refreshed.withLock { $0 } == 1)
    }

    /// A model's writes skip observation until one of its properties is read (nothing can observe
    /// it before): once read, every write notifies, before and after the save.
    @Test func modelsWrittenBeforeAnyReadNotifyOnceObserved() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let context = ModelContext(container)
        let trip = Trip(name: "Lisbon", budget: 100)
        context.insert(trip)
        trip.budget = 120
        let pending = observing { _ = trip.budget }
        trip.budget = 130
        #expect(pending.withLock { $0 } == 1, "an inserted model read once notifies its next write")
        try context.save()
        let saved = observing { _ = trip.name }
        trip.name = "Porto"
        #expect(saved.withLock { $0 } == 1)
        #expect(context.changedModelsArray.count == 1, "the write after the save is a change to save")
        try context.save()
        let stored = try #require(try ModelContext(container).fetch(FetchDescriptor<Trip>()).first)
        #expect(stored.name == "Porto" && stored.budget == 130)
    }

    @Test func transientPropertiesAreObservedButNotPersisted() throws {
        let model = Kitchen()
        let changed = LockedValue(false)
        withObservationTracking {
            _ = model.isSelected
        } onChange: {
            changed.withLock { $0 = true }
        }
        model.isSelected = true
        #expect(changed.withLock { $0 })
    }
}

actor TripImporter: ModelActor {
    nonisolated let modelContainer: ModelContainer
    let modelContext: ModelContext

    init(modelContainer: ModelContainer) {
        self.modelContainer = modelContainer
        self.modelContext = ModelContext(modelContainer)
    }

    func importTrips(_ names: [String]) throws -> [PersistentIdentifier] {
        let trips = names.map { Trip(name: $0) }
        for trip in trips { modelContext.insert(trip) }
        try modelContext.save()
        return trips.map(\.persistentModelID)
    }

    func rename(_ id: PersistentIdentifier, to name: String) throws {
        guard let trip = self[id, as: Trip.self] else { throw DataStoreError.notFound }
        trip.name = name
        try modelContext.save()
    }
}

struct ConcurrencyTests {
    @Test func identifiersCrossActorsAndSavesAreSeenElsewhere() async throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let importer = TripImporter(modelContainer: container)
        let ids = try await importer.importTrips(["Lisbon", "Porto"])
        #expect(ids.count == 2)
        try await importer.rename(ids[0], to: "Lisboa")
        let context = ModelContext(container)
        let names = try ids.map { try context.model(for: $0, as: Trip.self)?.name }
        #expect(names == ["Lisboa", "Porto"])
    }

    @Test func contextsOnManyTasksShareOneContainer() async throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    let context = ModelContext(container)
                    for index in 0..<25 { context.insert(Trip(name: "w\(worker)-\(index)")) }
                    try context.save()
                }
            }
            try await group.waitForAll()
        }
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 100)
    }

    /// A lock whose value is empty (`LockedValue<Void>`, a lock around state kept elsewhere) still
    /// excludes other threads. Under the thread sanitizer (`scripts/sanitize.sh thread`) this also
    /// checks that such a lock draws no report: its empty value once shared its address with the
    /// lock's own pointer, so taking the lock on one thread looked like a race with the value's
    /// use on another.
    @Test func aLockedValueExcludesOtherThreadsEvenWhenItsValueIsEmpty() {
        final class Counter: @unchecked Sendable { var count = 0 }
        let counter = Counter()
        let lock = LockedValue<Void>(())
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<50_000 { lock.withLock { _ in counter.count += 1 } }
        }
        #expect(counter.count == 200_000)
    }

    @MainActor @Test func mainContextIsOnePerContainer() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        #expect(container.mainContext === container.mainContext)
        container.mainContext.insert(Trip(name: "Main"))
        try container.mainContext.save()
        try container.erase()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 0)
    }
}

struct MultipleStoreTests {
    @Test func eachConfigurationOwnsItsEntities() throws {
        let authors = InMemoryStoreConfiguration(name: "authors", schema: Schema([Author.self]))
        let container = try ModelContainer(
            for: Schema([Trip.self, Author.self]), configurations: [authors, .inMemory(name: "rest")])
        #expect(container.stores.count == 2)
        let context = ModelContext(container)
        context.insert(Author("Ada", "Lovelace", email: "a@x"))
        context.insert(Trip(name: "Spring"))
        try context.save()
        let authorStore = try #require(container.stores[0] as? InMemoryStore)
        let tripStore = try #require(container.stores[1] as? InMemoryStore)
        let authorID = try #require(try context.fetch(FetchDescriptor<Author>()).first?.persistentModelID)
        let tripID = try #require(try context.fetch(FetchDescriptor<Trip>()).first?.persistentModelID)
        #expect(authorID.storeIdentifier == authorStore.identifier)
        #expect(tripID.storeIdentifier == tripStore.identifier)
    }

    @Test func duplicateConfigurationNamesAreRejected() throws {
        expectError(.invalidConfiguration) {
            try ModelContainer(for: Trip.self, configurations: .inMemory(name: "a"), .inMemory(name: "a"))
        }
    }
}
