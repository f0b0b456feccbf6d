import Foundation
import ModelStore
import Testing

@testable import ModelStoreTooling

/// How `schema diff` classifies changes to class hierarchies, and the plan it writes for them.
struct HierarchySchemaDiffTests {
    private func document(_ models: String) throws -> SchemaDocument {
        try SchemaDocument.parse(Data(#"{"models": [\#(models)]}"#.utf8), file: "test.json")
    }

    private let root = #"{"name": "Animal", "attributes": [{"name": "name", "type": "String"}]}"#
    private let dog = #"{"name": "Dog", "superclass": "Animal", "attributes": [{"name": "breed", "type": "String?"}]}"#
    private let cat = #"{"name": "Cat", "superclass": "Animal"}"#

    @Test func aNewSubclassOrSubclassAttributeIsLightweight() throws {
        let flat = try document(root)
        let withDog = try document(root + "," + dog)
        let added = SchemaDiff(old: flat, new: withDog)
        #expect(!added.needsCustomStage)
        #expect(
            added.changes.map(\.summary) == [
                "new subclass of 'Animal' (stored in the entity 'Animal', whose models keep their classes)"
            ])
        let moreDog = try document(
            root + #", {"name": "Dog", "superclass": "Animal", "attributes": [{"name": "breed", "type": "String?"}, "#
                + #"{"name": "age", "type": "Int"}]}"#)
        let attribute = SchemaDiff(old: withDog, new: moreDog)
        #expect(!attribute.needsCustomStage)
        #expect(attribute.changes.map(\.subject) == ["Dog.age"])
    }

    @Test func aRemovedSubclassIsCustomAndSaysWhatToDo() throws {
        let diff = SchemaDiff(old: try document(root + "," + dog), new: try document(root))
        #expect(diff.needsCustomStage)
        let change = try #require(diff.changes.first)
        #expect(change.mark == "-" && change.subject == "Dog")
        #expect(change.summary == "subclass of 'Animal' removed")
        #expect(change.customReason?.contains("delete them in willMigrate") == true)
        #expect(change.customSteps == [.willMigrate])
    }

    @Test func aChangedSuperclassOrANewlyAbstractClassIsCustom() throws {
        let old = try document(root + "," + dog + "," + cat)
        let moved = try document(
            root + "," + #"{"name": "Dog", "superclass": "Cat", "attributes": [{"name": "breed", "type": "String?"}]}"#
                + "," + cat)
        let diff = SchemaDiff(old: old, new: moved)
        #expect(diff.needsCustomStage)
        #expect(diff.changes.map(\.summary) == ["superclass 'Animal' becomes 'Cat'"])
        #expect(diff.changes.first?.customReason?.contains("stay in the entity 'Animal'") == true)
        let detached = try document(
            root + "," + #"{"name": "Dog", "attributes": [{"name": "breed", "type": "String?"}]}"# + "," + cat)
        let split = SchemaDiff(old: old, new: detached)
        #expect(split.changes.map(\.summary) == ["superclass 'Animal' becomes 'none'"])
        #expect(split.changes.first?.customReason?.contains("are in the entity 'Animal'") == true)

        let abstract = try document(
            #"{"name": "Animal", "abstract": true, "attributes": [{"name": "name", "type": "String"}]}"#
                + "," + dog + "," + cat)
        #expect(SchemaDiff(old: old, new: abstract).changes.map(\.summary) == ["becomes abstract"])
        #expect(SchemaDiff(old: old, new: abstract).needsCustomStage)
        #expect(!SchemaDiff(old: abstract, new: old).needsCustomStage, "no longer abstract")
    }

    @Test func thePlanDeclaresBothHierarchies() throws {
        var old = try document(root + "," + dog)
        old.version = Schema.Version(1, 0, 0)
        var new = try document(root + "," + dog + "," + cat)
        new.version = Schema.Version(2, 0, 0)
        let diff = SchemaDiff(old: old, new: new)
        let plan = try MigrationPlanWriter(old: old, new: new, diff: diff).file(oldSource: "a", newSource: "b")
        #expect(
            plan.contains("    static var models: [any PersistentModel.Type] { [Animal.self, Dog.self, Cat.self] }"))
        #expect(plan.contains("    class Animal: PersistentModel {"))
        #expect(plan.contains("    final class Cat: Animal {\n    }"))
        #expect(plan.contains("MigrationStage.lightweight("))
    }
}
