import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreInMemory
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// Saves across several stores, and failures while loading relationships: issue 12, items 8 and 11.
struct SaveAtomicityTests {
    // 8. A relationship that fails to load surfaces as an error, and is never saved as empty.
    @Test func aRelationshipThatFailsToLoadFailsTheNextSaveAndKeepsTheStoredReferences() throws {
        let faults = StoreFaults()
        let container = try ModelContainer(
            for: Schema([Owner.self, Pet.self, Toy.self]),
            configurations: [PlainStoreConfiguration(name: "plain", faults: faults)])
        let writer = ModelContext(container)
        writer.insert(Pet("Rex", owner: Owner("Ann")))
        try writer.save()

        let context = ModelContext(container)
        let ann = try #require(try context.fetch(FetchDescriptor<Owner>()).first)
        faults.failFetches = true
        _ = ann.pets
        ann.name = "Annie"
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.message.contains("'Owner.pets'"))
        #expect(error.message.contains("fetches of 'plain' fail"))
        faults.failFetches = false
        #expect(ann.pets.map(\.name) == ["Rex"])  // the fault was kept: it loads once the store answers
        try context.save()
        let reread = try #require(try ModelContext(container).fetch(FetchDescriptor<Owner>()).first)
        #expect(reread.name == "Annie")
        #expect(reread.pets.map(\.name) == ["Rex"])
    }

    // 11. A save across stores is all or nothing, whether the first store is in memory or an SQLite file.
    @Test(arguments: [false, true])
    func aSaveThatFailsInTheSecondStoreStoresNothingInTheFirst(petsInSQLite: Bool) throws {
        let directory = try TemporaryDirectory()
        var sqlitePets = SQLiteStoreConfiguration(url: directory.file("pets.sqlite"))
        sqlitePets.schema = Schema([Pet.self])
        let pets: any DataStoreConfiguration =
            petsInSQLite ? sqlitePets : InMemoryStoreConfiguration(name: "pets", schema: Schema([Pet.self]))
        let authors = InMemoryStoreConfiguration(name: "authors", schema: Schema([Author.self]))
        let container = try ModelContainer(for: Schema([Pet.self, Author.self]), configurations: [pets, authors])
        let context = ModelContext(container)
        context.insert(Author("ada@example.com"))
        try context.save()

        let rex = Pet("Rex")
        context.insert(rex)
        let duplicate = Author("ada@example.com")
        context.insert(duplicate)
        context.duplicateInsertPolicy = .error  // the second store refuses the save
        expectError(.uniqueConstraintViolation) { try context.save() }
        #expect(rex.persistentModelID.isTemporary)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Pet>()) == 0)
        #expect(context.hasChanges)

        duplicate.email = "grace@example.com"
        try context.save()
        #expect(!rex.persistentModelID.isTemporary)
        let reader = ModelContext(container)
        #expect(try reader.fetch(FetchDescriptor<Pet>()).map(\.name) == ["Rex"])
        #expect(try reader.fetchCount(FetchDescriptor<Author>()) == 2)
    }

    @Test func aSaveSpanningAStoreWithoutTwoPhaseSavesFailsBeforeWritingAnything() throws {
        let faults = StoreFaults()
        let pets = InMemoryStoreConfiguration(name: "pets", schema: Schema([Pet.self]))
        let plain = PlainStoreConfiguration(name: "plain-authors", schema: Schema([Author.self]), faults: faults)
        let container = try ModelContainer(for: Schema([Pet.self, Author.self]), configurations: [pets, plain])
        let context = ModelContext(container)
        context.insert(Pet("Rex"))
        context.insert(Author("ada@example.com"))
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .unsupportedFeature)
        #expect(error.message.contains("'plain-authors'"))
        #expect(error.remedy?.isEmpty == false)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Pet>()) == 0)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Author>()) == 0)
        #expect(context.hasChanges)

        // A save that touches one store at a time works with any store.
        context.rollback()
        context.insert(Pet("Rex"))
        try context.save()
        context.insert(Author("ada@example.com"))
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Author>()) == 1)
    }
}

/// A model with a unique attribute, kept in a store of its own in the multi-store tests.
final class Author: PersistentModel {
    @Attribute(.unique) var email: String = ""

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ email: String) {
        self.init()
        self.email = email
    }
}
