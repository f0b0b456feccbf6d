import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

@MainActor
struct LiveQueryTests {
    /// Lets the query's listener and its scheduled refetch run; returns once `query` fetched more
    /// than `count` times, or after about two seconds.
    private func settle<M: PersistentModel>(_ query: LiveQuery<M>, past count: Int) async {
        for _ in 0..<2_000 where query.fetchCount <= count {
            try? await Task.sleep(for: .milliseconds(1))
        }
        // A few more turns, so that a refetch that should not happen would have happened.
        for _ in 0..<20 { await Task.yield() }
    }

    @Test func resultsFollowSavesOfOtherContexts() async throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let query = LiveQuery(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]), in: container.mainContext)
        #expect(query.results.isEmpty && query.fetchCount == 1)

        let writer = ModelContext(container)
        writer.insert(Trip(name: "B"))
        writer.insert(Trip(name: "A"))
        try writer.save()
        await settle(query, past: 1)
        #expect(query.results.map(\.name) == ["A", "B"])
        #expect(query.fetchCount == 2)

        let b = try #require(try writer.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "B" })).first)
        writer.delete(b)
        try writer.save()
        await settle(query, past: 2)
        #expect(query.results.map(\.name) == ["A"])
        #expect(query.error == nil)
    }

    @Test func aBurstOfSavesRefetchesOnce() async throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let query = LiveQuery(FetchDescriptor<Trip>(), in: container.mainContext)
        let writer = ModelContext(container)
        for index in 0..<5 {
            writer.insert(Trip(name: "T\(index)"))
            try writer.save()
        }
        await settle(query, past: 1)
        #expect(query.results.count == 5)
        #expect(query.fetchCount == 2)
    }

    @Test func aSaveOfAnUnrelatedEntityDoesNotRefetch() async throws {
        let container = try ModelContainer(for: Schema([Trip.self, Author.self]), configurations: [.inMemory()])
        let query = LiveQuery(FetchDescriptor<Trip>(), in: container.mainContext)
        let writer = ModelContext(container)
        writer.insert(Author("Ada", "Lovelace", email: "a@x"))
        try writer.save()
        writer.insert(Item("Map"))  // Item is related to Trip: it may change what a trip's items are.
        try writer.save()
        await settle(query, past: 1)
        #expect(query.fetchCount == 2)
    }

    @Test func updatesStreamsTheResultsAfterEachRefetch() async throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let query = LiveQuery(FetchDescriptor<Trip>(), in: container.mainContext)
        var updates = query.updates.makeAsyncIterator()
        #expect(await updates.next() == [])
        let writer = ModelContext(container)
        let trip = Trip(name: "Streamed")
        writer.insert(trip)
        try writer.save()
        #expect(await updates.next() == [trip.persistentModelID])
    }
}
