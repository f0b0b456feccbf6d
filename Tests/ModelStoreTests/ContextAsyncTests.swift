import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// The context's `async` entry points: they await a ``DataStoreAsynchronous`` store, fall back to
/// the synchronous calls for other stores, and give the same results as the synchronous calls.
struct ContextAsyncTests {
    private func suspendingContainer() throws -> (ModelContainer, SuspendingStore) {
        let container = try ModelContainer(
            for: Schema([Trip.self, Item.self, Destination.self]), configurations: [SuspendingStore.Configuration()])
        return (container, try #require(container.stores.first as? SuspendingStore))
    }

    @Test func anAsynchronousStoreIsAwaitedNotCalledSynchronously() async throws {
        let (container, store) = try suspendingContainer()
        let context = ModelContext(container)
        for (name, budget) in [("Lisbon", 300.0), ("Porto", 100.0), ("Faro", 200.0)] {
            context.insert(Trip(name: name, budget: budget))
        }
        try await context.saveAsync()
        let descriptor = FetchDescriptor<Trip>(
            predicate: #Predicate { $0.budget > 150 }, sortBy: [SortDescriptor(\.name)])
        let names = try await context.fetchAsync(descriptor).map(\.name)
        let count = try await context.fetchCountAsync(descriptor)
        let ids = try await context.fetchIdentifiersAsync(descriptor)
        #expect(names == ["Faro", "Lisbon"])
        #expect(count == 2)
        #expect(ids.count == 2)
        let calls = store.calls.withLock { $0 }
        #expect(calls.sync == 0)
        #expect(calls.async == 5, "the save's one upsert lookup, the save, and the three fetches")
        // The synchronous calls see what the asynchronous save stored.
        #expect(try ModelContext(container).fetch(descriptor).map(\.name) == names)
    }

    /// An awaited save tells observers the transaction it recorded, as the synchronous save does.
    @Test func anAsynchronousSaveCarriesItsHistoryToken() async throws {
        let (container, store) = try suspendingContainer()
        let context = ModelContext(container)
        let recorder = HistoryTokenRecorder(context)
        context.insert(Trip(name: "Lisbon"))
        try await context.saveAsync()
        #expect(store.calls.withLock { $0.async } > 0, "the save was awaited")
        let tokens = recorder.tokens
        #expect(tokens.count == 1 && tokens.first?.storeIdentifier == store.identifier)
    }

    @Test func pendingChangesAreMergedAsTheSynchronousFetchMergesThem() async throws {
        let (container, _) = try suspendingContainer()
        let context = ModelContext(container)
        context.insert(Trip(name: "Saved", budget: 10))
        try await context.saveAsync()
        context.insert(Trip(name: "Pending", budget: 20))
        let descriptor = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.budget, order: .reverse)])
        let asynchronous = try await context.fetchAsync(descriptor).map(\.name)
        #expect(asynchronous == ["Pending", "Saved"])
        #expect(asynchronous == (try context.fetch(descriptor).map(\.name)))
        #expect(try await context.fetchCountAsync(descriptor) == 2)
    }

    @Test func aFailedAsynchronousSaveKeepsPendingChangesAndStoresNothing() async throws {
        let (container, _) = try suspendingContainer()
        let context = ModelContext(container)
        context.insert(Trip(name: "Same"))
        try await context.saveAsync()
        let other = ModelContext(container)
        other.duplicateInsertPolicy = .error
        other.insert(Trip(name: "Same"))
        await #expect(throws: DataStoreError.self) { try await other.saveAsync() }
        #expect(other.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) == 1)
    }

    @Test func anAsynchronousUpsertAwaitsItsLookups() async throws {
        let (container, store) = try suspendingContainer()
        let context = ModelContext(container)
        context.insert(Trip(name: "Same", budget: 1))
        try await context.saveAsync()
        let other = ModelContext(container)
        other.insert(Trip(name: "Same", budget: 2))
        try await other.saveAsync()
        let trips = try ModelContext(container).fetch(FetchDescriptor<Trip>())
        #expect(trips.map(\.budget) == [2], "the second insert updated the first")
        let calls = store.calls.withLock { $0 }
        #expect(calls.sync == 1, "only the check above read the store synchronously")
    }

    @Test func otherStoresTakeTheSynchronousCalls() async throws {
        let container = try ModelContainer(for: Trip.self, Item.self, Destination.self, configurations: .inMemory())
        let context = ModelContext(container)
        context.insert(Trip(name: "Kyoto", budget: 5))
        try await context.saveAsync()
        #expect(!context.hasChanges)
        let all = FetchDescriptor<Trip>()
        #expect(try await context.fetchAsync(all).map(\.name) == ["Kyoto"])
        #expect(try await context.fetchCountAsync(all) == 1)
        #expect(try await context.fetchIdentifiersAsync(all) == (try context.fetchIdentifiers(all)))
    }

    /// Seeded sessions of inserts, renames, deletes and saves, each run through the async entry
    /// points on the suspending store and through the synchronous ones on an in-memory store; after
    /// every step both must list the same trips, as the plain list of names says.
    @Test(arguments: 0..<8 as Range<UInt64>)
    func randomSessionsMatchTheSynchronousPath(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let (asyncContainer, _) = try suspendingContainer()
        let syncContainer = try ModelContainer(for: Trip.self, Item.self, Destination.self, configurations: .inMemory())
        let asyncContext = ModelContext(asyncContainer)
        let syncContext = ModelContext(syncContainer)
        var expected: [String: Double] = [:]
        var counter = 0
        for step in 0..<40 {
            let names = expected.keys.sorted()
            switch Int.random(in: 0..<4, using: &random) {
            case 0, 1:
                counter += 1
                let name = "t\(counter)"
                let budget = Double(Int.random(in: 0..<5, using: &random))
                asyncContext.insert(Trip(name: name, budget: budget))
                syncContext.insert(Trip(name: name, budget: budget))
                expected[name] = budget
            case 2 where !names.isEmpty:
                let name = random.pick(names)
                let budget = Double(Int.random(in: 0..<5, using: &random))
                let byName = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name })
                for trip in try await asyncContext.fetchAsync(byName) { trip.budget = budget }
                for trip in try syncContext.fetch(byName) { trip.budget = budget }
                expected[name] = budget
            case 3 where !names.isEmpty:
                let name = random.pick(names)
                let byName = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name })
                for trip in try await asyncContext.fetchAsync(byName) { asyncContext.delete(trip) }
                for trip in try syncContext.fetch(byName) { syncContext.delete(trip) }
                expected[name] = nil
            default:
                try await asyncContext.saveAsync()
                try syncContext.save()
            }
            let limit = Double(Int.random(in: 0..<5, using: &random))
            let descriptor = FetchDescriptor<Trip>(
                predicate: #Predicate { $0.budget >= limit }, sortBy: [SortDescriptor(\.name)])
            let viaAsync = try await asyncContext.fetchAsync(descriptor).map(\.name)
            let viaSync = try syncContext.fetch(descriptor).map(\.name)
            let oracle = expected.filter { $0.value >= limit }.keys.sorted()
            #expect(viaAsync == oracle, "seed \(seed), step \(step)")
            #expect(viaSync == oracle, "seed \(seed), step \(step)")
            #expect(try await asyncContext.fetchCountAsync(descriptor) == oracle.count, "seed \(seed), step \(step)")
        }
    }
}
