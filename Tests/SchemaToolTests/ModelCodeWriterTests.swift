import Foundation
import ModelStore
import Testing

@testable import ModelStoreTooling

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

    @Test func enumsAndStructsAreDeclaredFromTheFile() throws {
        let code = try code(
            #"""
            {"models": [{"name": "Ticket", "attributes": [
              {"name": "state", "type": "State"},
              {"name": "size", "type": "Size", "default": 5},
              {"name": "spots", "type": "[Place]"}]}],
             "enums": [{"name": "State", "cases": ["new", {"name": "closed", "rawValue": "done"}]},
                       {"name": "Size", "rawType": "Int8", "cases": [{"name": "small", "rawValue": 4}, "medium"]}],
             "structs": [{"name": "Place", "fields": [{"name": "x", "type": "Double"}, {"name": "size", "type": "Size?"}]}]}
            """#)
        #expect(code.contains("    @Attribute var state: State = .new\n"), "the first case without a default")
        #expect(code.contains("    @Attribute var size: Size = .medium\n"), "4, then 5 for the next case")
        #expect(code.contains("    @Attribute var spots: [Place] = []\n"))
        #expect(
            code.contains("enum State: String, Codable, CaseIterable {\n    case new\n    case closed = \"done\"\n}"))
        #expect(code.contains("enum Size: Int8, Codable, CaseIterable {\n    case small = 4\n    case medium\n}"))
        #expect(code.contains("struct Place: Codable, Hashable {\n    var x: Double = 0\n    var size: Size?\n}"))
    }

    @Test func enumsAndStructsTheFileDoesNotDeclareAreRefused() throws {
        let undeclared = try refusal(
            #"{"models": [{"name": "A", "attributes": [{"name": "s", "type": "[S]", "rawType": "String"}]}]}"#)
        #expect(
            undeclared.message.hasSuffix(
                "the enum 'S' that 'models[0].attributes[0].type' names: the schema file does not declare it"))
        #expect(undeclared.remedy?.contains("\"enums\"") == true)
        let wrongDefault = try refusal(
            #"""
            {"models": [{"name": "A", "attributes": [{"name": "s", "type": "S", "default": "x"}]}],
             "enums": [{"name": "S", "cases": ["y"]}]}
            """#)
        #expect(wrongDefault.message.contains("it is not a raw value of 'S'"))
        let clash = try refusal(#"{"models": [{"name": "A"}], "structs": [{"name": "A", "fields": []}]}"#)
        #expect(clash.message.contains("a second type named 'A'"))
    }
}
