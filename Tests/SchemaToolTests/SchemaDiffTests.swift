import Foundation
import ModelStore
import Testing

@testable import ModelStoreTooling

/// How `schema diff` classifies changes: lightweight when the store can make them by itself,
/// custom when they need code.
struct SchemaDiffTests {
    /// A one-model schema with these attributes and relationships.
    private func schema(
        _ attributes: [SchemaDocument.Attribute], _ relationships: [SchemaDocument.Relationship] = [],
        unique: [[String]] = []
    ) -> SchemaDocument {
        var item = SchemaDocument.Model(name: "Item", attributes: attributes, relationships: relationships)
        item.unique = unique
        let tag = SchemaDocument.Model(name: "Tag")
        return SchemaDocument(models: [item, tag])
    }

    private func attribute(_ name: String, _ type: AttributeType, unique: Bool = false) -> SchemaDocument.Attribute {
        SchemaDocument.Attribute(name: name, type: type, unique: unique)
    }

    /// The stage of the only change (or the diff's, if several).
    private func stage(_ old: SchemaDocument, _ new: SchemaDocument) -> String {
        SchemaDiff(old: old, new: new).needsCustomStage ? "custom" : "lightweight"
    }

    @Test func addingRemovingAndRenamingAreLightweight() {
        let base = schema([attribute("title", .string)])
        let note = attribute("note", .optional(.string))
        #expect(stage(base, schema([attribute("title", .string), note])) == "lightweight")
        #expect(
            stage(base, schema([attribute("title", .string), attribute("count", .integer(bits: 64, signed: true))]))
                == "lightweight", "a required attribute gets its initial value")
        #expect(stage(base, schema([])) == "lightweight")
        var renamed = attribute("name", .string)
        renamed.originalName = "title"
        let diff = SchemaDiff(old: base, new: schema([renamed]))
        #expect(diff.changes.map(\.mark) == [">"], "a rename, not a removal and an addition: \(diff.changes)")
        #expect(!diff.needsCustomStage)
        #expect(stage(base, SchemaDocument(models: [])) == "lightweight", "removing a model")
    }

    @Test func optionalityChangesAreLightweightAndOtherTypeChangesCustom() {
        let required = schema([attribute("size", .integer(bits: 64, signed: true))])
        let optional = schema([attribute("size", .optional(.integer(bits: 64, signed: true)))])
        #expect(stage(required, optional) == "lightweight")
        #expect(stage(optional, required) == "lightweight")
        #expect(stage(required, schema([attribute("size", .string)])) == "custom")
        #expect(stage(required, schema([attribute("size", .integer(bits: 32, signed: true))])) == "custom")
    }

    @Test func uniquenessThatExistingDataMayBreakIsCustom() {
        let base = schema([attribute("title", .string)])
        #expect(stage(base, schema([attribute("title", .string, unique: true)])) == "custom", "becomes unique")
        #expect(stage(schema([attribute("title", .string, unique: true)]), base) == "lightweight", "no longer unique")
        let newUnique = schema([attribute("title", .string), attribute("code", .string, unique: true)])
        #expect(stage(base, newUnique) == "custom", "a new unique attribute")
        let newIdentifier = schema([attribute("title", .string), attribute("id", .uuid, unique: true)])
        #expect(stage(base, newIdentifier) == "lightweight", "a new UUID per model is unique already")
        let compound = schema([attribute("title", .string), attribute("kind", .string)], unique: [["title", "kind"]])
        #expect(stage(schema([attribute("title", .string), attribute("kind", .string)]), compound) == "custom")
    }

    @Test func relationshipChangesThatLoseDataAreCustom() {
        let toOne = SchemaDocument.Relationship(name: "tag", destination: "Tag")
        var toMany = toOne
        toMany.toMany = true
        #expect(stage(schema([], [toOne]), schema([], [toMany])) == "lightweight")
        #expect(stage(schema([], [toMany]), schema([], [toOne])) == "custom")
        var elsewhere = toOne
        elsewhere.destination = "Item"
        #expect(stage(schema([], [toOne]), schema([], [elsewhere])) == "custom")
        var limited = toMany
        limited.maximumModelCount = 2
        #expect(stage(schema([], [toMany]), schema([], [limited])) == "custom")
        #expect(stage(schema([], [limited]), schema([], [toMany])) == "lightweight")
        var cascading = toOne
        cascading.deleteRule = .cascade
        #expect(stage(schema([], [toOne]), schema([], [cascading])) == "lightweight")
    }

    @Test func aLightweightPlanHasNoCustomStage() throws {
        let old = schema([attribute("title", .string)])
        var new = schema([attribute("title", .string), attribute("note", .optional(.string))])
        new.version = Schema.Version(2, 0, 0)
        let plan = try MigrationPlanWriter(old: old, new: new, diff: SchemaDiff(old: old, new: new))
            .file(oldSource: "a.json", newSource: "b.json")
        #expect(plan.contains("static let migrateV1toV2 = MigrationStage.lightweight("))
        #expect(!plan.contains("willMigrate"))
        #expect(plan.contains("/// - Item.note: new attribute 'String?'"))
    }
}
