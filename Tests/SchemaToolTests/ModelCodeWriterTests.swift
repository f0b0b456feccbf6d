import Foundation
import ModelStore
import Testing

@testable import ModelStoreTool

/// What `schema generate` writes for particular declarations, and what it refuses to declare.
struct ModelCodeWriterTests {
    private func code(_ json: String) throws -> String {
        let document = try SchemaDocument.parse(Data(json.utf8), file: "test.json")
        return try ModelCodeWriter(document: document).file(source: "test.json")
    }

    private func refusal(_ json: String) throws -> ToolError {
        do {
            let code = try code(json)
            Issue.record("generated without an error:\n\(code)")
            return ToolError(.success, code: "", "")
        } catch let error as ToolError {
            #expect(error.status == .unsupported)
            return error
        }
    }

    @Test func optionsDefaultsAndInversesAreSpelledOut() throws {
        let code = try code(
            #"""
            {"models": [{"name": "Note", "attributes": [
              {"name": "key", "type": "String", "unique": true, "externalStorage": true,
               "preserveValueOnDeletion": true},
              {"name": "mood", "type": "String?", "default": "calm"},
              {"name": "stamp", "type": "Date?", "default": "2001-01-01T00:00:00.500Z"}],
             "relationships": [{"name": "parent", "destination": "Note", "inverse": "children"},
              {"name": "children", "destination": "Note", "toMany": true, "minimumModelCount": 1}]}]}
            """#)
        let options = "[.unique, .externalStorage, .preserveValueOnDeletion]"
        #expect(code.contains("    @Attribute(\(options)) var key: String = \"\"\n"))
        #expect(code.contains("    @Attribute var mood: String? = \"calm\"\n"))
        #expect(code.contains("    @Attribute var stamp: Date? = Date(timeIntervalSince1970: 978307200.5)\n"))
        #expect(code.contains("    @Relationship(inverse: \\Note.children) var parent: Note?\n"))
        #expect(code.contains("    @Relationship(minimumModelCount: 1) var children: [Note] = []\n"), "one side only")
    }

    @Test func namesTheGeneratedCodeUsesAreRefused() throws {
        let model = try refusal(#"{"models": [{"name": "Date"}]}"#)
        #expect(
            model.message == "'generate' cannot declare a model named 'Date' ('models[0].name'): "
                + "the generated code uses that name itself")
        let property = try refusal(
            #"{"models": [{"name": "A", "attributes": [{"name": "hasChanges", "type": "Bool"}]}]}"#)
        #expect(property.message.contains("the property 'A.hasChanges'"))
        let codable = try refusal(
            #"{"models": [{"name": "A", "attributes": [{"name": "home", "type": "Address?", "codable": true}]}]}"#)
        #expect(codable.message.contains("the Codable struct 'Address' that 'models[0].attributes[0].type' names"))
    }
}
