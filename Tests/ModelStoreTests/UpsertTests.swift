import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// ``DuplicateInsertPolicy``: what a save does with an inserted model whose unique values another
/// model already has.
struct UpsertTests {
    let container: ModelContainer

    init() throws {
        container = try ModelContainer(for: Trip.self, Author.self, configurations: .inMemory())
        container.duplicateInsertPolicy = .upsert
        let setup = ModelContext(container)
        setup.insert(Trip(name: "Lisbon", budget: 100, items: [Item("Passport")]))
        setup.insert(Author("Ada", "Lovelace", email: "ada@example.com"))
        try setup.save()
    }

    private func trips() throws -> [Trip] {
        try ModelContext(container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.name)]))
    }

    @Test func theStoredModelTakesTheInsertedValuesAndTheContextKeepsIt() throws {
        let context = ModelContext(container)
        let stored = try #require(try context.fetch(FetchDescriptor<Trip>()).first)
        let inserted = Trip(name: "Lisbon", budget: 250, items: [Item("Map")])
        context.insert(inserted)
        try context.save()
        let now = try trips()
        #expect(now.map(\.name) == ["Lisbon"] && now[0].budget == 250)
        #expect(now[0].items.map(\.title).sorted() == ["Map", "Passport"])
        #expect(stored.budget == 250, "the context keeps the model it had, with the new values")
        #expect(inserted.persistentModelID == stored.persistentModelID)
        #expect(try context.model(for: inserted.persistentModelID) === stored)
        #expect(!context.hasChanges)
    }

    @Test func twoInsertsWithOneValueInOneSaveStoreOneModelWithTheLaterValues() throws {
        let context = ModelContext(container)
        context.insert(Trip(name: "Porto", budget: 1))
        context.insert(Trip(name: "Porto", budget: 2))
        try context.save()
        let porto = try trips().filter { $0.name == "Porto" }
        #expect(porto.map(\.budget) == [2])
    }

    @Test func aCompoundConstraintMatchesOnlyWhenEveryValueDoes() throws {
        let context = ModelContext(container)
        context.insert(Author("Ada", "Byron", email: "byron@example.com"))  // another last name: a new model
        context.insert(Author("Ada", "Lovelace", email: "ada@example.com"))  // the stored one
        try context.save()
        let authors = try ModelContext(container).fetch(FetchDescriptor<Author>(sortBy: [SortDescriptor(\.last)]))
        #expect(authors.map(\.last) == ["Byron", "Lovelace"])
    }

    @Test func aStoredModelThisSaveDeletesOrRenamesIsNotMatched() throws {
        let context = ModelContext(container)
        let stored = try #require(try context.fetch(FetchDescriptor<Trip>()).first)
        context.delete(stored)
        let replacement = Trip(name: "Lisbon", budget: 5)
        context.insert(replacement)
        try context.save()
        #expect(try trips().map(\.budget) == [5])
        #expect(replacement.persistentModelID != stored.persistentModelID)

        let renaming = ModelContext(container)
        let lisbon = try #require(try renaming.fetch(FetchDescriptor<Trip>()).first)
        lisbon.name = "Faro"
        renaming.insert(Trip(name: "Lisbon", budget: 9))
        try renaming.save()
        #expect(try trips().map(\.name) == ["Faro", "Lisbon"])
    }

    /// A save of more models than one lookup query asks for (500): a stored value in a later
    /// chunk, and a value inserted twice far apart, each fold into one model.
    @Test func aLargeSaveFoldsAcrossLookupChunks() throws {
        let context = ModelContext(container)
        let stored = try #require(try context.fetch(FetchDescriptor<Trip>()).first)
        for index in 0..<1_200 { context.insert(Trip(name: "T\(index)", budget: Double(index))) }
        let late = Trip(name: "T5", budget: -5)
        context.insert(late)
        let lisbon = Trip(name: "Lisbon", budget: 7)
        context.insert(lisbon)
        try context.save()
        let now = try trips()
        #expect(now.count == 1_201)
        #expect(now.first { $0.name == "T5" }?.budget == -5)
        #expect(now.first { $0.name == "Lisbon" }?.budget == 7)
        #expect(lisbon.persistentModelID == stored.persistentModelID)
        #expect(stored.budget == 7)
    }

    /// A save tries its inserts first and folds duplicates only when a unique value is taken; a
    /// conflict that folding cannot remove (an update into a taken value) still fails the save,
    /// and nothing is stored.
    @Test func anUpdateIntoATakenValueFailsTheSaveWithOrWithoutDuplicates() throws {
        let setup = ModelContext(container)
        setup.insert(Trip(name: "Porto", budget: 1))
        try setup.save()

        let context = ModelContext(container)
        let named = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Porto" })
        let porto = try #require(try context.fetch(named).first)
        porto.name = "Lisbon"
        context.insert(Trip(name: "Madrid", budget: 3))
        let error = expectError(.uniqueConstraintViolation) { try context.save() }
        #expect(error?.propertyNames == ["name"])
        #expect(try trips().map(\.name) == ["Lisbon", "Porto"], "nothing of the failed save is stored")
        #expect(context.insertedModelsArray.count == 1 && context.hasChanges, "the insert is still pending")

        context.insert(Trip(name: "Lisbon", budget: 7))  // folds into the stored Lisbon
        expectError(.uniqueConstraintViolation) { try context.save() }
        #expect(try trips().map(\.budget) == [100, 1], "the fold is not stored when the save fails")

        porto.name = "Porto"
        try context.save()
        #expect(try trips().map(\.name) == ["Lisbon", "Madrid", "Porto"])
        #expect(try trips().map(\.budget) == [7, 3, 1])
    }

    @Test func theErrorPolicyRefusesTheSaveAndStoresNothing() throws {
        let context = ModelContext(container)
        context.duplicateInsertPolicy = .error
        context.insert(Trip(name: "Lisbon", budget: 250))
        let error = expectError(.uniqueConstraintViolation) { try context.save() }
        #expect(error?.propertyNames == ["name"])
        #expect(try trips().map(\.budget) == [100])
        #expect(context.hasChanges)
    }
}
