import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// `autosaveEnabled`: the main context saves soon after changes, one save per burst, and a failed
/// autosave reaches the app; other contexts never save on their own.
@MainActor struct AutosaveTests {
    let container: ModelContainer

    init() throws {
        container = try ModelContainer(for: Trip.self, configurations: .inMemory())
    }

    private func storedNames() throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map(\.name)
    }

    /// Lets the main actor run what it has scheduled, up to `limit`, until `done` holds.
    private func turns(until done: () throws -> Bool, limit: Duration = .seconds(5)) async rethrows {
        let deadline = ContinuousClock.now + limit
        while try !done(), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(2)) }
    }

    @Test func theMainContextSavesABurstOfChangesOnceSoonAfter() async throws {
        let main = container.mainContext
        #expect(main.autosaveEnabled)
        var saves = 0
        let observer = NotificationCenter.default.addObserver(
            forName: ModelContext.didSave, object: main, queue: nil
        ) { _ in MainActor.assumeIsolated { saves += 1 } }
        defer { NotificationCenter.default.removeObserver(observer) }

        let lisbon = Trip(name: "Lisbon")
        main.insert(lisbon)
        main.insert(Trip(name: "Porto"))
        lisbon.budget = 120
        #expect(try storedNames().isEmpty)  // nothing saved within the turn that made the changes
        try await turns(until: { try storedNames() == ["Lisbon", "Porto"] })
        #expect(try storedNames() == ["Lisbon", "Porto"])
        #expect(saves == 1)
        #expect(!main.hasChanges)

        lisbon.budget = 130
        main.delete(
            try #require(try main.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Porto" })).first))
        try await turns(until: { try storedNames() == ["Lisbon"] })
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>()).map(\.budget) == [130])
        #expect(saves == 2)
    }

    @Test func otherContextsAndADisabledMainContextDoNotSaveOnTheirOwn() async throws {
        let other = ModelContext(container)
        #expect(!other.autosaveEnabled)
        other.insert(Trip(name: "Kyoto"))
        other.autosaveEnabled = true  // no actor to save on: the flag changes nothing for this context

        let main = container.mainContext
        main.autosaveEnabled = false
        main.insert(Trip(name: "Rome"))
        // Give a scheduled save many turns to happen, then check that none did.
        for _ in 0..<50 {
            await Task.yield()
            try? await Task.sleep(for: .milliseconds(1))
        }
        #expect(try storedNames().isEmpty)
        #expect(other.hasChanges && main.hasChanges)

        main.autosaveEnabled = true  // turning it back on saves what is pending
        try await turns(until: { try storedNames() == ["Rome"] })
        #expect(try storedNames() == ["Rome"])
    }

    @Test func aFailedAutosaveReachesTheHandlerAndKeepsTheChanges() async throws {
        let setup = ModelContext(container)
        setup.insert(Trip(name: "Lisbon"))
        try setup.save()

        let main = container.mainContext
        main.duplicateInsertPolicy = .error
        var failures: [DataStoreError] = []
        main.autosaveErrorHandler = { error in
            if let error = error as? DataStoreError { failures.append(error) }
        }
        main.insert(Trip(name: "Lisbon"))  // the unique name is taken
        await turns(until: { !failures.isEmpty })
        #expect(failures.map(\.code) == [.uniqueConstraintViolation])
        #expect(main.hasChanges)
        #expect(try storedNames() == ["Lisbon"])
    }
}
