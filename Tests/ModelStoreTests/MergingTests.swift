import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// Two contexts on one container: what a save does with a model the other context saved since it
/// was read (``MergePolicy``), and how registered models take in the other context's saves.
struct MergingTests {
    let container: ModelContainer
    let reader: ModelContext
    let writer: ModelContext
    let trip: Trip

    /// `reader` holds `trip` as read; `writer` has since saved a new budget for it.
    init() throws {
        container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let setup = ModelContext(container)
        setup.insert(Trip(name: "Lisbon", budget: 100))
        try setup.save()
        reader = ModelContext(container)
        writer = ModelContext(container)
        trip = try #require(try reader.fetch(FetchDescriptor<Trip>()).first)
        let theirs = try #require(try writer.fetch(FetchDescriptor<Trip>()).first)
        theirs.budget = 250
        try writer.save()
    }

    private func stored() throws -> Trip {
        try #require(try ModelContext(container).fetch(FetchDescriptor<Trip>()).first)
    }

    @Test func errorRefusesTheSaveNamingTheOtherSidesAttributes() throws {
        #expect(reader.mergePolicy == .error)  // the default: nothing the other side wrote is overwritten
        trip.name = "Porto"
        let error = expectError(.conflict) { try reader.save() }
        #expect(error?.propertyNames == ["budget"] && error?.entityName == "Trip")
        let now = try stored()
        #expect(now.name == "Lisbon" && now.budget == 250)
        #expect(reader.hasChanges)
    }

    @Test func mergeByPropertyKeepsWhatEachSideChanged() throws {
        reader.mergePolicy = .mergeByProperty
        trip.name = "Porto"
        try reader.save()
        let now = try stored()
        #expect(now.name == "Porto" && now.budget == 250)
        #expect(trip.budget == 250)
        #expect(!reader.hasChanges)
    }

    @Test func onAnAttributeBothChangedMergeByPropertyKeepsTheContextsValue() throws {
        reader.mergePolicy = .mergeByProperty
        trip.budget = 90
        try reader.save()
        #expect(try stored().budget == 90)
    }

    @Test func storeTrumpsKeepsTheStoredValueOfWhatTheOtherSideChanged() throws {
        reader.mergePolicy = .storeTrumps
        trip.budget = 90
        trip.name = "Porto"
        try reader.save()
        let now = try stored()
        #expect(now.budget == 250 && now.name == "Porto")
        #expect(trip.budget == 250)
    }

    @Test func objectTrumpsWritesTheWholeModel() throws {
        reader.mergePolicy = .objectTrumps
        trip.name = "Porto"
        try reader.save()
        let now = try stored()
        #expect(now.name == "Porto" && now.budget == 100)
    }

    @Test func automaticMergingRefreshesUnchangedModelsAndForgetsDeletedOnes() throws {
        let watcher = ModelContext(container)
        watcher.automaticallyMergesChanges = true
        let watched = try #require(try watcher.fetch(FetchDescriptor<Trip>()).first)
        let theirs = try #require(try writer.fetch(FetchDescriptor<Trip>()).first)
        theirs.budget = 300
        try writer.save()
        #expect(watched.budget == 250)  // not merged until the context merges
        watcher.mergePendingChanges()
        #expect(watched.budget == 300)
        #expect(!watcher.hasChanges)

        writer.delete(theirs)
        try writer.save()
        watcher.mergePendingChanges()
        #expect(watcher.registeredModel(for: watched.persistentModelID, as: Trip.self) == nil)
    }

    @Test func automaticMergingLeavesUnsavedChangesToTheMergePolicy() throws {
        let watcher = ModelContext(container)
        watcher.automaticallyMergesChanges = true
        watcher.mergePolicy = .mergeByProperty
        let watched = try #require(try watcher.fetch(FetchDescriptor<Trip>()).first)
        watched.name = "Faro"
        let theirs = try #require(try writer.fetch(FetchDescriptor<Trip>()).first)
        theirs.budget = 300
        try writer.save()
        watcher.mergePendingChanges()
        #expect(watched.name == "Faro" && watched.budget == 250)
        try watcher.save()
        let now = try stored()
        #expect(now.name == "Faro" && now.budget == 300)
    }

    @MainActor @Test func theMainContextMergesOnTheMainActor() async throws {
        let main = container.mainContext
        #expect(main.automaticallyMergesChanges)
        let shown = try #require(try main.fetch(FetchDescriptor<Trip>()).first)
        let theirs = try #require(try writer.fetch(FetchDescriptor<Trip>()).first)
        theirs.budget = 400
        try writer.save()
        for _ in 0..<1_000 where shown.budget != 400 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(shown.budget == 400)
    }
}
