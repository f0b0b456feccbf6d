import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// The context's graph semantics, the same in every store: the reproductions of issue 12.
struct GraphSemanticsTests {
    /// Fetches every model of a type in a fresh context, sorted by a key: on a reopened store, or
    /// with `reopening: false`, on the same container.
    private func stored<T: PersistentModel>(
        _ type: T.Type, in store: StoreUnderTest, by key: any KeyPath<T, String> & Sendable, reopening: Bool = true
    ) throws -> [T] {
        let context = ModelContext(reopening ? try store.reopen() : store.container)
        return try context.fetch(FetchDescriptor<T>(sortBy: [SortDescriptor(key)]))
    }

    // 1. A model deleted before its first save vanishes, and so does every reference to it.
    @Test(arguments: StoreKind.allCases)
    func aModelDeletedBeforeItsFirstSaveIsNeverStored(kind: StoreKind) throws {
        let store = try StoreUnderTest(kind)
        let context = ModelContext(store.container)
        let toy = Toy("ball")
        context.insert(toy)
        try context.save()
        let pet = Pet("Rex")
        pet.toys = [toy]
        context.insert(pet)
        #expect(toy.pets.map(\.name) == ["Rex"])
        context.delete(pet)
        try context.save()
        #expect(toy.pets.isEmpty)
        #expect(try stored(Pet.self, in: store, by: \.name).isEmpty)
        let toys = try stored(Toy.self, in: store, by: \.label)
        #expect(toys.map(\.label) == ["ball"])
        #expect(toys.first?.pets.isEmpty == true)
    }

    // 2. Deleting a saved model and a new model that refers to it stores neither.
    @Test(arguments: StoreKind.allCases)
    func deletingASavedModelAndANewOneThatRefersToItSucceeds(kind: StoreKind) throws {
        let store = try StoreUnderTest(kind)
        let context = ModelContext(store.container)
        let pet = Pet("Rex")
        context.insert(pet)
        try context.save()
        let toy = Toy("ball")
        toy.pets = [pet]
        context.insert(toy)
        context.delete(toy)
        context.delete(pet)
        try context.save()
        #expect(try stored(Pet.self, in: store, by: \.name).isEmpty)
        #expect(try stored(Toy.self, in: store, by: \.label).isEmpty)
    }

    // 3. Rollback restores both sides of every relationship.
    @Test(arguments: StoreKind.allCases)
    func rollbackRestoresBothSidesOfEveryRelationship(kind: StoreKind) throws {
        let store = try StoreUnderTest(kind)
        let context = ModelContext(store.container)
        let ann = Owner("Ann")
        let bob = Owner("Bob")
        let rex = Pet("Rex", owner: ann)
        context.insert(ann)
        context.insert(bob)
        try context.save()
        context.delete(ann)
        rex.owner = bob
        #expect(bob.pets.map(\.name) == ["Rex"])
        context.rollback()
        #expect(rex.owner === ann)
        #expect(ann.pets.map(\.name) == ["Rex"])
        #expect(bob.pets.isEmpty)
        #expect(!context.hasChanges)
        bob.name = "Bobby"  // something to save: the relationship must be stored as it was
        try context.save()
        let owners = try stored(Owner.self, in: store, by: \.name)
        #expect(owners.map(\.name) == ["Ann", "Bobby"])
        #expect(owners.map { $0.pets.map(\.name) } == [["Rex"], []])
        let pets = try stored(Pet.self, in: store, by: \.name)
        #expect(pets.first?.owner?.name == "Ann")
    }

    // 4. Every store does the same, right thing when a cascade deletes a new model a new model lists.
    @Test(arguments: StoreKind.allCases)
    func aCascadeThroughNewModelsIsTheSameInEveryStore(kind: StoreKind) throws {
        let store = try StoreUnderTest(kind)
        let context = ModelContext(store.container)
        let ann = Owner("Ann")
        context.insert(ann)
        try context.save()
        let rex = Pet("Rex", owner: ann)
        let toy = Toy("ball")
        context.insert(rex)
        context.insert(toy)
        rex.toys.append(toy)
        context.delete(ann)
        try context.save()
        #expect(toy.pets.isEmpty)
        #expect(try stored(Owner.self, in: store, by: \.name).isEmpty)
        #expect(try stored(Pet.self, in: store, by: \.name).isEmpty)
        let toys = try stored(Toy.self, in: store, by: \.label)
        #expect(toys.map(\.label) == ["ball"])
        #expect(toys.first?.pets.isEmpty == true)
    }

    // 5. A change between values that compare equal but are stored differently is written.
    @Test(arguments: StoreKind.allCases)
    func changesBetweenEqualButDistinctValuesAreWritten(kind: StoreKind) throws {
        let store = try StoreUnderTest(kind)
        let context = ModelContext(store.container)
        let pet = Pet("e\u{301}mile", weight: 0.0)
        context.insert(pet)
        try context.save()
        pet.weight = -0.0
        pet.name = "\u{e9}mile"
        try context.save()
        let reopened = try #require(try stored(Pet.self, in: store, by: \.name).first)
        #expect(reopened.weight.sign == .minus)
        #expect(Array(reopened.name.unicodeScalars) == Array("\u{e9}mile".unicodeScalars))
    }

    // 6. A to-many relationship is a set: appending a model already in it does nothing.
    @Test(arguments: StoreKind.allCases)
    func appendingAModelAlreadyInAToManyRelationshipDoesNothing(kind: StoreKind) throws {
        let store = try StoreUnderTest(kind)
        let context = ModelContext(store.container)
        let ann = Owner("Ann")
        let rex = Pet("Rex")
        context.insert(ann)
        rex.owner = ann
        ann.pets.append(rex)
        #expect(ann.pets.count == 1)
        let toy = Toy("ball")
        rex.toys = [toy, toy]
        #expect(rex.toys.count == 1)
        #expect(toy.pets.count == 1)
        try context.save()
        let owners = try stored(Owner.self, in: store, by: \.name)
        #expect(owners.first?.pets.count == 1)
        #expect(try stored(Pet.self, in: store, by: \.name).first?.toys.count == 1)
    }

    // 7. A model whose context is gone still reads its relationships.
    @Test(arguments: StoreKind.allCases)
    func aModelOutlivingItsContextStillReadsItsRelationships(kind: StoreKind) throws {
        let store = try StoreUnderTest(kind)
        do {
            let context = ModelContext(store.container)
            context.insert(Owner("Ann"))
            context.insert(Pet("Rex", owner: context.insertedModelsArray.first as? Owner))
            try context.save()
        }
        let ann = try #require(try ModelContext(store.container).fetch(FetchDescriptor<Owner>()).first)
        #expect(ann.modelContext == nil)
        #expect(ann.pets.map(\.name) == ["Rex"])
        #expect(ann.pets.first?.owner?.name == "Ann")
    }

    // 7b. A model its context let go of (reset) has no context, reads its relationships through the
    // container, and joins the context again when inserted.
    @Test(arguments: StoreKind.allCases)
    func aModelTheContextLetGoOfStillReadsItsRelationships(kind: StoreKind) throws {
        let store = try StoreUnderTest(kind)
        do {
            let context = ModelContext(store.container)
            let ann = Owner("Ann")
            context.insert(ann)
            context.insert(Pet("Rex", owner: ann))
            try context.save()
        }
        let context = ModelContext(store.container)
        let ann = try #require(try context.fetch(FetchDescriptor<Owner>()).first)
        #expect(ann.modelContext === context)
        context.reset()
        #expect(ann.modelContext == nil)
        #expect(ann.pets.map(\.name) == ["Rex"])
        context.insert(ann)
        #expect(ann.modelContext === context)
    }

    // 9. A Codable value that cannot encode itself fails the save, naming entity, property and cause.
    @Test(arguments: StoreKind.allCases)
    func aValueThatFailsToEncodeFailsTheSave(kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: [Note.self])
        let context = ModelContext(store.container)
        let good = Note()
        good.title = "good"
        context.insert(good)
        try context.save()
        let before = try store.files()
        let bad = Note()
        bad.title = "bad"
        bad.body = Fragile("x", failsToEncode: true)
        context.insert(bad)
        good.title = "changed"
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .invalidValue)
        #expect(error.message.contains("'Note.body'"))
        #expect(error.message.contains("refused"))
        #expect(context.hasChanges)
        #expect(try store.files() == before)
        let notes = try ModelContext(try store.reopen()).fetch(FetchDescriptor<Note>())
        #expect(notes.map(\.title) == ["good"])
    }

    // 10. A batch delete writes only what it says: other pending edits stay pending.
    @Test(arguments: StoreKind.allCases)
    func aBatchDeleteLeavesOtherPendingEditsPending(kind: StoreKind) throws {
        let store = try StoreUnderTest(kind)
        let context = ModelContext(store.container)
        let toy = Toy("ball")
        let rex = Pet("Rex")
        rex.toys = [toy]
        context.insert(rex)
        try context.save()
        toy.label = "unsaved label"
        try context.delete(model: Pet.self)
        #expect(toy.pets.isEmpty)
        #expect(toy.label == "unsaved label")
        #expect(toy.hasChanges)
        let toys = try stored(Toy.self, in: store, by: \.label, reopening: false)
        #expect(toys.map(\.label) == ["ball"])
        #expect(toys.first?.pets.isEmpty == true)
        try context.save()
        #expect(try stored(Toy.self, in: store, by: \.label).map(\.label) == ["unsaved label"])
    }
}

/// A model that outlives both its context and its container stops the program when it reads an
/// unloaded relationship, rather than showing it empty (issue 12, item 7).
struct ReleasedContainerTests {
    @Test func readingAFaultAfterTheContainerIsGoneFailsLoudly() async {
        await #expect(processExitsWith: .failure) {
            let owner: Owner
            do {
                let container = try ModelContainer(for: Owner.self, configurations: InMemoryStoreConfiguration())
                let context = ModelContext(container)
                context.insert(Pet("Rex", owner: Owner("Ann")))
                try context.save()
                owner = try ModelContext(container).fetch(FetchDescriptor<Owner>()).first!
            }
            _ = owner.pets
        }
    }
}
