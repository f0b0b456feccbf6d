import Foundation
import ModelStore
import Testing

@testable import ModelStoreTooling

/// `schema generate`: the committed `Golden/Models.swift` is what the tool writes for
/// `Fixtures/schema.json`, it compiles (it is part of this target), and the schema of the
/// compiled models exports back to the same file.
struct GoldenModelsTests {
    @Test func generatingTheModelsAgainGivesTheCommittedFile() throws {
        let document = try SchemaToolFixtures.document("schema.json")
        let generated = try ModelCodeWriter(document: document).file(source: "schema.json")
        #expect(generated == (try SchemaToolFixtures.text("Golden/Models.swift")))
    }

    @Test func theCompiledModelsExportAsTheSchemaFile() throws {
        let schema = Schema([Project.self, Todo.self, Person.self])
        try schema.validate()
        let (exported, warnings) = try SchemaToolFixtures.exported(schema)
        #expect(warnings.isEmpty)
        #expect(exported == (try SchemaToolFixtures.document("schema.json")))
        #expect(exported.jsonText == (try SchemaToolFixtures.text("Fixtures/schema.json")))
    }

    @Test func theSchemaFileIsWrittenAsItIsRead() throws {
        let text = try SchemaToolFixtures.text("Fixtures/schema.json")
        #expect(try SchemaToolFixtures.document("schema.json").jsonText == text)
    }

    @Test func initialValuesThatChangePerModelAreNotFixedValues() throws {
        let exported = SchemaDocument(Schema([Project.self, Todo.self, Person.self]))
        let project = try #require(exported.model(named: "Project"))
        let attributes = Dictionary(uniqueKeysWithValues: project.attributes.map { ($0.name, $0) })
        #expect(attributes["createdAt"]?.defaultValue == .now)
        #expect(attributes["id"]?.defaultValue == nil, "a new UUID per model")
        let launch = try #require(DefaultValueText.date("2024-01-31T12:00:00Z"))
        #expect(attributes["launch"]?.defaultValue == .value(.date(launch)), "a fixed date stays a date")
    }
}
