import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

struct SchemaTests {
    @Test func entitiesDescribeAttributesRelationshipsAndConstraints() throws {
        let schema = Schema([Trip.self])
        #expect(Set(schema.entities.map(\.name)) == ["Trip", "Item", "Destination"])
        let trip = try #require(schema.entity(for: Trip.self))
        #expect(trip.properties.map(\.name) == ["name", "start", "budget", "isDone", "items", "destination"])
        #expect(trip.attribute(named: "name")?.isUnique == true)
        #expect(trip.attribute(named: "budget")?.valueType == .double)
        #expect(trip.attribute(named: "scratch") == nil)
        let items = try #require(trip.relationship(named: "items"))
        #expect(items.destination == "Item")
        #expect(!items.isToOne)
        #expect(items.deleteRule == .cascade)
        #expect(items.inverseName == "trip")
        let item = try #require(schema.entity(named: "Item"))
        #expect(item.relationship(named: "trip")?.inverseName == "items")
        #expect(item.relationship(named: "trip")?.isToOne == true)
        #expect(trip.uniquenessConstraints == [["name"]])
        #expect(Schema.entityName(for: Trip.self) == "Trip")
        #expect(trip.propertyName(for: \Trip.budget) == "budget")
        #expect(trip.propertyName(for: \Trip.scratch) == nil)
        try schema.validate()
    }

    @Test func compoundConstraintsIndexesAndCountLimits() throws {
        let schema = Schema([Author.self])
        let author = try #require(schema.entity(for: Author.self))
        #expect(author.uniquenessConstraints.contains(["email"]))
        #expect(author.uniquenessConstraints.contains(["first", "last"]))
        #expect(author.indices == [["last"]])
        let book = try #require(schema.entity(for: Book.self))
        #expect(book.relationship(named: "related")?.maximumModelCount == 2)
        #expect(author.relationship(named: "books")?.deleteRule == .deny)
    }

    @Test func everyValueTypeHasAStoredType() throws {
        let entity = try #require(Schema([Kitchen.self]).entity(for: Kitchen.self))
        #expect(entity.attribute(named: "int8")?.valueType == .integer(bits: 8, signed: true))
        #expect(entity.attribute(named: "uint64")?.valueType == .integer(bits: 64, signed: false))
        #expect(entity.attribute(named: "optionalString")?.valueType == .optional(.string))
        #expect(entity.attribute(named: "optionalString")?.isOptional == true)
        #expect(entity.attribute(named: "scores")?.valueType == .dictionary(key: .string, value: .double))
        #expect(
            entity.attribute(named: "priority")?.valueType == .enumeration(name: "KitchenPriority", rawValue: .string))
        #expect(entity.attribute(named: "address")?.valueType == .composite(name: "PostalAddress"))
        #expect(entity.attribute(named: "draft") == nil)
        #expect(entity.ephemeralAttributeNames == ["draft"])
        #expect(entity.attribute(named: "isSelected") == nil)
        #expect(entity.attribute(named: "notPersisted") == nil)
    }

    @Test func unsupportedTypeIsReportedByTypeAndProperty() throws {
        let error = try #require(throws: DataStoreError.self) {
            try ModelContainer(for: Unstorable.self, configurations: .inMemory())
        }
        #expect(error.code == .invalidSchema)
        #expect(error.message.contains("'Unstorable.opaque'"))
        #expect(error.message.contains("Opaque"))
        #expect(error.remedy != nil)
    }

    @Test func mismatchedInverseIsReported() throws {
        let error = try #require(throws: DataStoreError.self) {
            try ModelContainer(for: Orphan.self, configurations: .inMemory())
        }
        #expect(error.code == .invalidSchema)
        #expect(error.message.contains("'Orphan.owner'"))
    }

    @Test func indexOnAnUnstoredPropertyIsReported() throws {
        let error = try #require(throws: DataStoreError.self) {
            try ModelContainer(for: BadIndex.self, configurations: .inMemory())
        }
        #expect(error.code == .invalidSchema)
        #expect(error.message.contains("index of 'BadIndex'"))
    }
}

/// A model whose attributes declare every shape of `@Attribute`: nothing, options, an original
/// name, both, and two options.
private final class Declared: PersistentModel {
    @Attribute var plain: Int = 0
    @Attribute(.unique) var code: String = ""
    @Attribute(originalName: "label") var title: String = ""
    @Attribute(.preserveValueOnDeletion, originalName: "amount") var total: Double = 0
    @Attribute(.unique, .preserveValueOnDeletion) var serial: Int = 0

    let persistentBackingData = BackingData()
    init() {}
}

struct AttributeDeclarationTests {
    @Test func everyShapeOfDeclarationReachesTheSchema() throws {
        let entity = try #require(Schema([Declared.self]).entity(for: Declared.self))
        func attribute(_ name: String) throws -> Schema.Attribute { try #require(entity.attribute(named: name)) }
        #expect(try attribute("plain").options == [])
        #expect(try attribute("plain").originalName == nil)
        #expect(try attribute("code").options == .unique)
        #expect(try attribute("code").originalName == nil)
        #expect(try attribute("title").options == [])
        #expect(try attribute("title").originalName == "label")
        #expect(try attribute("total").options == .preserveValueOnDeletion)
        #expect(try attribute("total").originalName == "amount")
        #expect(try attribute("serial").options == [.unique, .preserveValueOnDeletion])
        #expect(try attribute("serial").originalName == nil)
    }

    /// What a declaration says is one word per attribute in each model, whatever it says: a
    /// wrapper is its value and that word.
    @Test func aDeclarationCostsEachModelOneWord() {
        #expect(MemoryLayout<Attribute<Int>>.size == MemoryLayout<Int>.size + MemoryLayout<Int>.size)
        #expect(MemoryLayout<Attribute<String>>.size == MemoryLayout<String>.size + MemoryLayout<Int>.size)
        #expect(MemoryLayout<Attribute<Date?>>.stride == MemoryLayout<Date?>.stride + MemoryLayout<Int>.size)
    }
}
