import Foundation
import ModelStoreAdapters
import ModelStoreMacros
import Testing

/// A model that uses the rest of `@Attribute`'s and `@Relationship`'s arguments, and only a
/// convenience initializer over the framework's `init()`, as a hand-written model would.
@Model
final class Shelf {
    @Attribute(.preserveValueOnDeletion, originalName: "title") var label: String = ""
    @Attribute(.ephemeral) var isHighlighted: Bool = false
    @Attribute(.allowsCloudEncryption) var owner: String?
    @Relationship(
        deleteRule: .deny, minimumModelCount: 0, maximumModelCount: 3, originalName: "things", inverse: \Box.shelf)
    var boxes: [Box] = []

    convenience init(label: String, boxes: [Box]) {
        self.init()
        self.label = label
        self.boxes = boxes
    }
}

@Model
final class Box {
    var shelf: Shelf?

    init() {}
}

/// `@Attribute` and `@Relationship` arguments reach the schema; a convenience initializer works.
struct DeclarationOptionsTests {
    @Test func theArgumentsReachTheSchema() throws {
        let schema = Schema([Shelf.self, Box.self])
        let shelf = try #require(schema.entity(named: "Shelf"))
        let label = try #require(shelf.attribute(named: "label"))
        #expect(label.originalName == "title" && label.options == [.preserveValueOnDeletion])
        #expect(shelf.ephemeralAttributeNames == ["isHighlighted"])
        #expect(shelf.attribute(named: "isHighlighted") == nil, "an ephemeral attribute is not stored")
        // SwiftData's spelling of an encrypted attribute: stored as sealed Data.
        let owner = try #require(shelf.attribute(named: "owner"))
        #expect(owner.options == [.encrypted] && owner.valueType == .optional(.data))
        let boxes = try #require(shelf.relationship(named: "boxes"))
        #expect(boxes.deleteRule == .deny && boxes.maximumModelCount == 3 && boxes.originalName == "things")
        #expect(boxes.inverseName == "shelf")
        #expect(schema.entity(named: "Box")?.relationship(named: "shelf")?.inverseName == "boxes")
    }

    @Test func aConvenienceInitializerOverTheFrameworksInitSetsRelationshipsThroughTheirSetters() throws {
        let box = Box()
        let shelf = Shelf(label: "Tools", boxes: [box])
        #expect(box.shelf === shelf, "the setter linked the inverse at once")
        let container = try ModelContainer(for: Shelf.self, Box.self, url: "memory:")
        let context = ModelContext(container)
        context.insert(shelf)
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Shelf>())
        #expect(fetched.map(\.label) == ["Tools"] && fetched.first?.boxes.count == 1)
        context.delete(shelf)
        #expect(throws: DataStoreError.self, "the deny rule refuses to delete a shelf with boxes") {
            try context.save()
        }
    }
}
