import Foundation
import ModelStore
import Testing

@testable import ModelStoreTooling

/// Bad schema files: each error names the file, the path in the document and what is wrong.
struct SchemaFileErrorTests {
    /// The error reading `json` as `bad.json`.
    private func error(_ json: String) throws -> SchemaFileError {
        do {
            let document = try SchemaDocument.parse(Data(json.utf8), file: "bad.json")
            Issue.record("read without an error: \(document)")
            return SchemaFileError(file: "", path: "", problem: "", remedy: "")
        } catch {
            #expect(error.file == "bad.json")
            return error
        }
    }

    private let two = """
        {"name": "Owner", "relationships": [{"name": "pets", "destination": "Pet", "toMany": true}]}
        """

    @Test func malformedJSON() throws {
        let error = try error(#"{"models": [{"name": "A",]}"#)
        #expect(error.path == "")
        #expect(error.problem.hasPrefix("it is not valid JSON"))
        #expect(error.toolError.message.hasPrefix("the schema file 'bad.json' is invalid: it is not valid JSON"))
        #expect(error.toolError.status == .failure && error.toolError.code == "invalidSchema")
    }

    @Test func unknownTypes() throws {
        let unknown = try error(
            #"{"models": [{"name": "A"}, {"name": "B", "attributes": [{"name": "x", "type": "Strng"}]}]}"#)
        #expect(unknown.path == "models[1].attributes[0].type")
        #expect(unknown.problem == "'Strng' is not a type ModelStore stores")
        let spelling = try error(#"{"models": [{"name": "A", "attributes": [{"name": "x", "type": "Array<Int>"}]}]}"#)
        #expect(spelling.path == "models[0].attributes[0].type")
        let enumeration = try error(
            #"{"models": [{"name": "A", "attributes": [{"name": "x", "type": "Kind", "rawType": "Date"}]}]}"#)
        #expect(enumeration.path == "models[0].attributes[0].rawType")
    }

    @Test func danglingDestinations() throws {
        let error = try error(#"{"models": [\#(two)]}"#)
        #expect(error.path == "models[0].relationships[0].destination")
        #expect(error.problem == "'Pet' is not a model of this file")
        #expect(error.toolError.message.contains("'bad.json'") && error.toolError.message.contains("'models[0]."))
    }

    @Test func danglingAndMismatchedInverses() throws {
        let missing = try error(
            #"""
            {"models": [{"name": "Pet"}, {"name": "Owner", "relationships": [
              {"name": "pets", "destination": "Pet", "toMany": true, "inverse": "owner"}]}]}
            """#)
        #expect(missing.path == "models[1].relationships[0].inverse")
        #expect(missing.problem == "'Pet' has no relationship 'owner'")
        let wrongWay = try error(
            #"""
            {"models": [{"name": "Pet", "relationships": [{"name": "vet", "destination": "Vet"}]}, {"name": "Vet"},
              {"name": "Owner", "relationships": [{"name": "pets", "destination": "Pet", "inverse": "vet"}]}]}
            """#)
        #expect(wrongWay.path == "models[2].relationships[0].inverse")
        #expect(wrongWay.problem == "'Pet.vet' points to 'Vet', not back to 'Owner'")
    }

    @Test func fieldsOfTheWrongKindOrUnknown() throws {
        let typo = try error(
            #"{"models": [{"name": "A", "relationships": [{"name": "b", "destination": "A", "tomany": true}]}]}"#)
        #expect(typo.path == "models[0].relationships[0].tomany")
        let kind = try error(
            #"{"models": [{"name": "A", "attributes": [{"name": "x", "type": "Int", "unique": "yes"}]}]}"#)
        #expect(kind.path == "models[0].attributes[0].unique")
        let value = try error(
            #"{"models": [{"name": "A", "attributes": [{"name": "x", "type": "Int8", "default": 300}]}]}"#)
        #expect(value.path == "models[0].attributes[0].default")
        #expect(value.problem == "300 does not fit in 'Int8'")
        let twice = try error(#"{"models": [{"name": "A"}, {"name": "A"}]}"#)
        #expect(twice.path == "models[1].name")
        let constraint = try error(#"{"models": [{"name": "A", "unique": [["nope"]]}]}"#)
        #expect(constraint.path == "models[0].unique[0][0]")
    }

    @Test func theCoreFormIsReadWithPathsToo() throws {
        let description = Schema.Description(
            version: Schema.Version(1, 0, 0),
            entities: [Schema.EntityDescription(name: "A", properties: [.attribute("x", .string)])])
        let data = try JSONEncoder().encode(description)
        #expect(try SchemaDocument.parse(data, file: "core.json").models.map(\.name) == ["A"])
        let error = try error(#"{"entities": [{"name": "A", "properties": "none"}], "version": {}}"#)
        #expect(error.path.hasPrefix("entities[0].properties") || error.path.hasPrefix("version"), "\(error)")
    }

    @Test func badEnumsAndStructs() throws {
        let noCases = try error(#"{"models": [], "enums": [{"name": "E", "cases": []}]}"#)
        #expect(noCases.path == "enums[0].cases" && noCases.problem == "the enum 'E' has no cases")
        let twice = try error(
            #"{"models": [], "enums": [{"name": "E", "cases": ["a", {"name": "b", "rawValue": "a"}]}]}"#)
        #expect(twice.path == "enums[0].cases[1]" && twice.problem.contains("twice"))
        let raw = try error(#"{"models": [], "enums": [{"name": "E", "rawType": "Date", "cases": ["a"]}]}"#)
        #expect(raw.path == "enums[0].rawType")
        let rawValue = try error(
            #"{"models": [], "enums": [{"name": "E", "rawType": "Int", "cases": [{"name": "a", "rawValue": "1"}]}]}"#)
        #expect(rawValue.path == "enums[0].cases[0].rawValue")
        let field = try error(#"{"models": [], "structs": [{"name": "S", "fields": [{"name": "f", "type": "Nope"}]}]}"#)
        #expect(field.path == "structs[0].fields[0].type" && field.problem.contains("'Nope'"))
        let mismatch = try error(
            #"""
            {"models": [{"name": "A", "attributes": [{"name": "e", "type": "E", "rawType": "Int"}]}],
             "enums": [{"name": "E", "cases": ["a"]}]}
            """#)
        #expect(mismatch.path == "models[0].attributes[0].rawType")
        #expect(mismatch.problem == "'E' is declared in \"enums\" otherwise")
    }
}
