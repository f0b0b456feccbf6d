import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// A context's ``ModelContext/undoManager``: undo and redo of changes, inserts, deletes and
/// relationships between saves, with grouping.
struct UndoTests {
    let container: ModelContainer
    let context: ModelContext
    let undo = UndoManager()
    let lisbon: Trip
    let porto: Trip

    init() throws {
        container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let setup = ModelContext(container)
        setup.insert(Trip(name: "Lisbon", budget: 100, items: [Item("Passport")]))
        setup.insert(Trip(name: "Porto", budget: 50))
        try setup.save()
        context = ModelContext(container)
        context.undoManager = undo
        let trips = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
        lisbon = trips[0]
        porto = trips[1]
    }

    private func storedNames() throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)])).map(\.name)
    }

    @Test func aChangeIsUndoneAndRedone() throws {
        lisbon.budget = 250
        lisbon.name = "Lisboa"
        #expect(undo.canUndo && !undo.canRedo)
        undo.undo()
        #expect(lisbon.budget == 100 && lisbon.name == "Lisbon", "both changes of the turn are one group")
        #expect(undo.canRedo)
        undo.redo()
        #expect(lisbon.budget == 250 && lisbon.name == "Lisboa")
        try context.save()
        #expect(try storedNames() == ["Lisboa", "Porto"])
    }

    @Test func eachTurnOfChangesIsOneStep() throws {
        lisbon.budget = 1
        context.processPendingChanges()  // what save() and the main context's autosave do
        lisbon.budget = 2
        context.processPendingChanges()
        undo.undo()
        #expect(lisbon.budget == 1)
        undo.undo()
        #expect(lisbon.budget == 100)
        #expect(!undo.canUndo)
    }

    @Test func explicitGroupsNestIntoOneStep() throws {
        undo.beginUndoGrouping()
        lisbon.budget = 1
        undo.beginUndoGrouping()
        porto.budget = 2
        undo.endUndoGrouping()
        undo.endUndoGrouping()
        porto.name = "Oporto"
        context.processPendingChanges()
        undo.undo()
        #expect(porto.name == "Porto" && porto.budget == 2 && lisbon.budget == 1)
        undo.undo()
        #expect(porto.budget == 50 && lisbon.budget == 100)
    }

    @Test func anUndoneInsertStoresNothingAndARedoneOneIsStored() throws {
        context.insert(Trip(name: "Faro"))
        undo.undo()
        try context.save()
        #expect(try storedNames() == ["Lisbon", "Porto"])
        undo.redo()
        try context.save()
        #expect(try storedNames() == ["Faro", "Lisbon", "Porto"])
    }

    @Test func anUndoneDeleteKeepsTheModelAndItsChildren() throws {
        context.delete(lisbon)
        undo.undo()
        try context.save()
        #expect(try storedNames() == ["Lisbon", "Porto"])
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Item>()) == 1, "the cascade did not run")
    }

    @Test func relationshipChangesAreUndoneOnBothSides() throws {
        let passport = try #require(lisbon.items.first)
        passport.trip = porto
        #expect(porto.items.count == 1 && lisbon.items.isEmpty)
        undo.undo()
        #expect(passport.trip === lisbon)
        #expect(lisbon.items.map(\.title) == ["Passport"] && porto.items.isEmpty)
        try context.save()
        let stored = try ModelContext(container).fetch(FetchDescriptor<Item>())
        #expect(stored.map { $0.trip?.name } == ["Lisbon"])
    }

    @Test func rollbackForgetsWhatCouldBeUndone() throws {
        lisbon.budget = 1
        context.rollback()
        #expect(!undo.canUndo && lisbon.budget == 100)
    }

    @Test func withoutAnUndoManagerNothingIsRecorded() throws {
        context.undoManager = nil
        lisbon.budget = 1
        context.undoManager = undo
        #expect(!undo.canUndo)
        lisbon.budget = 2
        #expect(undo.canUndo)
    }
}
