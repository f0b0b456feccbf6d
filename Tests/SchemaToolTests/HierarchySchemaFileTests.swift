import Foundation
import ModelStore
import Testing

@testable import ModelStoreTooling

/// Schema files with class hierarchies: `Fixtures/hierarchy.json` describes what the core stores for
/// the compiled `Golden/Hierarchy.swift` (one entity per hierarchy), generates that file, and the
/// compiled models export back to it.
struct HierarchySchemaFileTests {
    private static let types: [any PersistentModel.Type] = [
        Vehicle.self, Car.self, Truck.self, SportsCar.self, Garage.self,
    ]

    @Test func theFileDescribesWhatTheCoreStores() throws {
        let schema = Schema(Self.types)
        try schema.validate()
        let document = try SchemaToolFixtures.document("hierarchy.json")
        #expect(document.storedDescription == schema.storedDescription)
        let vehicle = try #require(document.storedDescription.entities.first)
        #expect(document.storedDescription.entities.map(\.name) == ["Vehicle", "Garage"])
        #expect(
            vehicle.properties.map(\.name) == [
                "plate", "seats", "garage", "doors", "payload", "depot", "topSpeed", Schema.Entity.classAttributeName,
            ], "the root's properties, then each subclass's, parents before children, then the class attribute")
        #expect(vehicle.indices == [[Schema.Entity.classAttributeName], ["seats"]])
        #expect(vehicle.classes?.map(\.name) == ["Vehicle", "Car", "Truck", "SportsCar"])
        #expect(vehicle.classes?.first?.isAbstract == true)
        #expect(vehicle.classes?.last?.superclassName == "Car")
        #expect(vehicle.classes?.last?.ownPropertyNames == ["topSpeed"])
    }

    @Test func generatingTheModelsGivesTheCommittedFile() throws {
        let document = try SchemaToolFixtures.document("hierarchy.json")
        let generated = try ModelCodeWriter(document: document).file(source: "hierarchy.json")
        #expect(generated == (try SchemaToolFixtures.text("Golden/Hierarchy.swift")))
        #expect(generated.contains("class Vehicle: PersistentModel {"))
        #expect(generated.contains("    required init() {}"))
        #expect(generated.contains("class Car: Vehicle {") && !generated.contains("final class Car"))
        #expect(generated.contains("final class SportsCar: Car {\n    @Attribute var topSpeed: Int?\n}"))
        #expect(generated.contains("static var abstractClasses: [any PersistentModel.Type] { [Vehicle.self] }"))
    }

    @Test func theCompiledModelsExportAsTheFile() throws {
        let (exported, warnings) = try SchemaToolFixtures.exported(Schema(Self.types))
        #expect(warnings.isEmpty)
        #expect(exported == (try SchemaToolFixtures.document("hierarchy.json")))
        #expect(exported.jsonText == (try SchemaToolFixtures.text("Fixtures/hierarchy.json")))
    }

    @Test func aStoredDescriptionSplitsBackIntoOneModelPerClass() throws {
        let stored = Schema(Self.types).storedDescription
        let document = SchemaDocument(stored)
        #expect(document.models.map(\.name) == ["Vehicle", "Car", "Truck", "SportsCar", "Garage"])
        #expect(document.models.map(\.superclass) == [nil, "Vehicle", "Vehicle", "Car", nil])
        #expect(document.model(named: "Truck")?.relationships.map(\.name) == ["depot"])
        #expect(document.model(named: "Vehicle")?.indexes == [["seats"]], "the class attribute's index is the core's")
        #expect(document.storedDescription == stored)
        let reopened = try Schema(stored)
        #expect(reopened.storedDescription == stored, "a schema opened from the file's description agrees")
    }

    @Test func aRequiredSubclassAttributeIsStoredOptional() throws {
        let document = try SchemaDocument.parse(
            Data(
                #"""
                {"models": [{"name": "Shape", "attributes": [{"name": "label", "type": "String"}]},
                 {"name": "Circle", "superclass": "Shape", "attributes": [{"name": "radius", "type": "Double"}]},
                 {"name": "Disk", "superclass": "Shape", "attributes": [{"name": "radius", "type": "Double"}]}]}
                """#.utf8), file: "shapes.json")
        let entities = document.storedDescription.entities
        #expect(entities.count == 1)
        let types = entities.first?.properties.map { $0.type.map(\.description) ?? "" }
        #expect(types == ["String", "Double?", "String"], "a property two siblings declare is stored once")
        #expect(entities.first?.classes?.map(\.ownPropertyNames) == [["label"], ["radius"], ["radius"]])
        let split = SchemaDocument(document.storedDescription)
        #expect(split.model(named: "Circle")?.attributes.map(\.type) == [.optional(.double)])
        #expect(split.storedDescription == document.storedDescription)
    }
}

/// Hierarchy mistakes in a schema file: each names the path and what to do.
struct HierarchySchemaFileErrorTests {
    private func error(_ models: String) throws -> SchemaFileError {
        do {
            let document = try SchemaDocument.parse(Data(#"{"models": [\#(models)]}"#.utf8), file: "bad.json")
            Issue.record("read without an error: \(document)")
            return SchemaFileError(file: "", path: "", problem: "", remedy: "")
        } catch {
            return error
        }
    }

    @Test func superclassesMustBeModelsWithoutACycle() throws {
        let unknown = try error(#"{"name": "A", "superclass": "Nothing"}"#)
        #expect(unknown.path == "models[0].superclass")
        #expect(unknown.problem == "'Nothing' is not another model of this file")
        let itself = try error(#"{"name": "A", "superclass": "A"}"#)
        #expect(itself.path == "models[0].superclass")
        let cycle = try error(#"{"name": "A", "superclass": "B"}, {"name": "B", "superclass": "A"}"#)
        #expect(cycle.path == "models[0].superclass")
        #expect(cycle.problem == "the superclasses form a cycle: 'A' → 'B' → 'A'")
    }

    @Test func subclassesDeclareOnlyTheirOwnPropertiesAndNoConstraints() throws {
        let root = #"{"name": "A", "attributes": [{"name": "x", "type": "Int"}]}"#
        let inherited = try error(
            root + #", {"name": "B", "superclass": "A", "attributes": [{"name": "x", "type": "Int"}]}"#)
        #expect(inherited.path == "models[1].attributes[0].name")
        #expect(inherited.problem == "'B' inherits a property named 'x'")
        let index = try error(
            root
                + #", {"name": "B", "superclass": "A", "attributes": [{"name": "y", "type": "Int"}], "indexes": [["y"]]}"#
        )
        #expect(index.path == "models[1].indexes")
        #expect(index.problem == "'B' is a subclass: its hierarchy's constraints are declared on its root 'A'")
        let classAttribute = try error(
            #"{"name": "A", "attributes": [{"name": "_modelClass", "type": "String"}]}, {"name": "B", "superclass": "A"}"#
        )
        #expect(classAttribute.path == "models[0].attributes[0].name")
    }

    @Test func anInverseMayBeInheritedAndPointToASubclass() throws {
        let document = try SchemaDocument.parse(
            Data(
                #"""
                {"models": [{"name": "Pet", "relationships": [{"name": "owner", "destination": "Owner", "inverse": "dogs"}]},
                 {"name": "Dog", "superclass": "Pet"},
                 {"name": "Owner", "relationships": [{"name": "dogs", "destination": "Dog", "toMany": true, "inverse": "owner"}]}]}
                """#.utf8), file: "pets.json")
        let owner = try #require(document.storedDescription.entities.last)
        #expect(owner.properties.first?.destination == "Pet", "a relationship names its destination's entity")
    }
}
