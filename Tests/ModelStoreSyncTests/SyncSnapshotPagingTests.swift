import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// A host's whole read of a shared store, page by page: every model once, however the store
/// changes between pages.
@Suite struct SyncSnapshotPagingTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// A shared container on a store of `kind` holding journeys `J0`...`J<count - 1>`, each with a leg.
    func shared(_ kind: String, count: Int) throws -> ModelContainer {
        let url = kind == "memory" ? "memory:" : "\(kind):" + directory.path("shared.\(kind)")
        let container = try ModelContainer(for: Replica.schema, url: url)
        let context = ModelContext(container)
        for number in 0..<count {
            let journey = Journey("J\(number)", budget: number)
            journey.notes = number % 10 == 0 ? "tenth" : ""
            let leg = Leg("P\(number)")
            context.insert(journey)
            context.insert(leg)
            leg.journey = journey
        }
        try context.save()
        return container
    }

    /// Pulls a whole read in pages of `limit`, calling `between` after each page with its number and
    /// the journeys read so far;
    /// returns the names of the journeys and the places of the legs read, in order, and the pages.
    func readWhole(
        _ host: SyncHost, limit: Int, access: SyncAccess = .unrestricted,
        between: (Int, [String]) throws -> Void = { _, _ in }
    ) throws -> (journeys: [String], legs: [String], pages: Int) {
        var cursor = SyncCursor.start
        var journeys: [String] = []
        var legs: [String] = []
        var pages = 0
        while cursor.snapshot != nil {
            let reply = try host.pull(SyncPullRequest(replica: "reader", cursor: cursor, limit: limit), access: access)
            #expect(reply.models.count <= limit)
            for model in reply.models {
                switch (model.entity, model.values?["name"], model.values?["place"]) {
                case ("Journey", .string(let name)?, _): journeys.append(name)
                case ("Leg", _, .string(let place)?): legs.append(place)
                default: Issue.record("unexpected model in a whole read: \(model)")
                }
            }
            cursor = reply.cursor
            pages += 1
            try between(pages, journeys)
        }
        return (journeys, legs, pages)
    }

    @Test(arguments: ["sqlite", "memory", "log"])
    func aWholeReadPagesAcrossManyModelsWithoutMissingOrRepeating(kind: String) throws {
        let container = try shared(kind, count: 2_500)
        let read = try readWhole(try SyncHost(container: container), limit: 97)
        #expect(read.journeys == (0..<2_500).map { "J\($0)" })
        #expect(read.legs == (0..<2_500).map { "P\($0)" })
        #expect(read.pages == 5_000 / 97 + 1)
    }

    @Test(arguments: ["sqlite", "memory"])
    func modelsDeletedOrAddedBetweenPagesNeitherHideNorRepeatOthers(kind: String) throws {
        let container = try shared(kind, count: 1_000)
        let context = ModelContext(container)
        var deleted = Set<String>()
        var deletedAhead: [String] = []
        let read = try readWhole(try SyncHost(container: container), limit: 50) { page, readSoFar in
            guard page == 4 || page == 9 else { return }
            // Models already read and models still ahead, every fifth of a stretch on both sides.
            let range = page == 4 ? 100..<400 : 350..<700
            for number in range where number % 5 == 0 && !deleted.contains("J\(number)") {
                let name = "J\(number)"
                let journey = try #require(
                    try context.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == name })).first)
                context.delete(journey)
                deleted.insert(name)
                if !readSoFar.contains(name) { deletedAhead.append(name) }
            }
            context.insert(Journey("New\(page)"))
            try context.save()
        }
        #expect(Set(read.journeys).count == read.journeys.count, "a journey was read twice")
        // Every journey that was there all along is read; the ones deleted before their page are not.
        let kept = (0..<1_000).map { "J\($0)" }.filter { !deleted.contains($0) }
        #expect(kept.allSatisfy(read.journeys.contains))
        #expect(deletedAhead.count > 50)
        #expect(deletedAhead.allSatisfy { !read.journeys.contains($0) })
        let numbers = read.journeys.filter { $0.hasPrefix("J") }.compactMap { Int($0.dropFirst()) }
        #expect(numbers == numbers.sorted())
    }

    @Test func aScopeThatHoldsFewModelsStillReadsEachOnce() throws {
        let container = try shared("sqlite", count: 3_000)
        let scope = SyncScope { _ in ["Journey": .equal("notes", .string("tenth")), "Leg": .constant(false)] }
        let read = try readWhole(try SyncHost(container: container, scope: scope), limit: 20)
        #expect(read.journeys == stride(from: 0, to: 3_000, by: 10).map { "J\($0)" })
        #expect(read.legs.isEmpty)
    }

    @Test func aStoreWithGapsInItsKeysIsReadWhole() throws {
        let container = try shared("sqlite", count: 2_000)
        let context = ModelContext(container)
        // Keep one journey in 50: long runs of keys with no model.
        for journey in try context.fetch(FetchDescriptor<Journey>()) where journey.budget % 50 != 7 {
            context.delete(journey)
        }
        try context.save()
        let read = try readWhole(try SyncHost(container: container), limit: 10)
        #expect(read.journeys == stride(from: 7, to: 2_000, by: 50).map { "J\($0)" })
    }
}
