import Foundation
import ModelStore
import Testing

/// A shelf of volumes, declared as SwiftData apps that sync through CloudKit declare to-many
/// relationships: an optional array with an empty initial value.
final class Shelf: PersistentModel {
    @Attribute var label: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Volume.shelf) var volumes: [Volume]? = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ label: String) {
        self.init()
        self.label = label
    }
}

/// A volume on at most one shelf.
final class Volume: PersistentModel {
    @Attribute var title: String = ""
    @Relationship var shelf: Shelf?

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ title: String) {
        self.init()
        self.title = title
    }
}

/// `[Model]?` to-many relationships, in every built-in store.
@Suite struct OptionalToManyTests {
    @Test(arguments: StoreKind.allCases)
    func anOptionalArrayIsAToManyRelationshipWithItsInverse(_ kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: [Shelf.self, Volume.self])
        let schemaRelationship = try #require(store.schema.entity(named: "Shelf")?.relationship(named: "volumes"))
        #expect(!schemaRelationship.isToOne)
        #expect(schemaRelationship.inverseName == "shelf")

        let context = ModelContext(store.container)
        let poetry = Shelf("Poetry")
        let prose = Shelf("Prose")
        context.insert(poetry)
        context.insert(prose)
        let odes = Volume("Odes")
        let sonnets = Volume("Sonnets")
        poetry.volumes = [odes, sonnets]  // set from the optional side
        let novel = Volume("Novel")
        context.insert(novel)
        novel.shelf = prose  // set from the other side
        #expect(prose.volumes?.map(\.title) == ["Novel"])
        #expect(odes.shelf === poetry)
        try context.save()

        let reread = ModelContext(try store.reopen())
        let shelves = try reread.fetch(FetchDescriptor<Shelf>(sortBy: [SortDescriptor(\.label)]))
        #expect(shelves.map(\.label) == ["Poetry", "Prose"])
        #expect(shelves[0].volumes?.map(\.title).sorted() == ["Odes", "Sonnets"])
        #expect(shelves[1].volumes?.map(\.title) == ["Novel"])

        // Setting nil empties it, and it reads back as an empty array.
        shelves[1].volumes = nil
        try reread.save()
        let again = ModelContext(try store.reopen())
        let emptied = try #require(
            try again.fetch(FetchDescriptor<Shelf>(predicate: #Predicate { $0.label == "Prose" })).first)
        #expect(emptied.volumes?.isEmpty == true)
        #expect(
            try again.fetch(FetchDescriptor<Volume>(predicate: #Predicate { $0.title == "Novel" })).first?.shelf == nil)

        // The delete rule holds: deleting a shelf deletes its volumes.
        let full = try #require(
            try again.fetch(FetchDescriptor<Shelf>(predicate: #Predicate { $0.label == "Poetry" })).first)
        again.delete(full)
        try again.save()
        #expect(try again.fetch(FetchDescriptor<Volume>()).map(\.title) == ["Novel"])
    }
}
