import Foundation
import ModelStore
import Testing

@testable import ModelStoreTooling

/// Renamed models in `schema diff`: marked with `"originalName"` or inferred from the same
/// attributes and relationships, reported as renames, and copied by a custom stage, since the
/// store's lightweight migration would drop the old model's data.
struct ModelRenameTests {
    private func document(_ json: String, file: String = "test.json") throws -> SchemaDocument {
        try SchemaDocument.parse(Data(json.utf8), file: file)
    }

    private let old = #"""
        {"models": [
          {"name": "Item", "attributes": [{"name": "title", "type": "String"}, {"name": "count", "type": "Int"}],
           "relationships": [{"name": "box", "destination": "Box", "inverse": "items"}]},
          {"name": "Box", "attributes": [{"name": "label", "type": "String"}],
           "relationships": [{"name": "items", "destination": "Item", "toMany": true}]}]}
        """#

    @Test func aModelMarkedWithOriginalNameIsARenameThatACustomStageCopies() throws {
        let new = try document(
            #"""
            {"version": "2.0.0", "models": [
              {"name": "Entry", "originalName": "Item",
               "attributes": [{"name": "name", "type": "String", "originalName": "title"},
                              {"name": "count", "type": "Int?"}, {"name": "added", "type": "Date"}],
               "relationships": [{"name": "box", "destination": "Box", "inverse": "items"}]},
              {"name": "Box", "attributes": [{"name": "label", "type": "String"}],
               "relationships": [{"name": "items", "destination": "Entry", "toMany": true}]}]}
            """#)
        #expect(new.models[0].originalName == "Item")
        #expect(new.jsonText.contains(#""name": "Entry",\#n      "originalName": "Item","#), "written back")
        let diff = SchemaDiff(old: try document(old), new: new)
        #expect(diff.modelRenames == [SchemaDiff.ModelRename(old: "Item", new: "Entry", isInferred: false)])
        let marks = diff.changes.map { "\($0.mark) \($0.subject)" }
        #expect(marks.contains("> Entry") && marks.contains("> Entry.name") && marks.contains("+ Entry.added"))
        #expect(!marks.contains("- Item") && !marks.contains("+ Entry"), "not a removal and an addition: \(marks)")
        #expect(diff.needsCustomStage)
        let plan = try MigrationPlanWriter(old: try document(old), new: new, diff: diff)
            .file(oldSource: "a.json", newSource: "b.json")
        #expect(plan.contains("static let carriedItemRows = CarriedRows<(name: String, count: Int)>()"))
        #expect(plan.contains("let oldItemModels = try context.fetch(FetchDescriptor<SchemaV1.Item>())"))
        #expect(plan.contains("carriedItemRows.keep(oldItemModels.map { ($0.title, $0.count) })"))
        #expect(plan.contains("let copy = SchemaV2.Entry()\n                copy.name = row.name\n"))
        #expect(plan.contains("// TODO: relate each copy as its 'Item' was ('box')"))
        #expect(plan.contains("final class CarriedRows<Row>: @unchecked Sendable {"))
    }

    @Test func aModelWithTheSameShapeUnderAnotherNameIsAnInferredRename() throws {
        let new = try document(old.replacingOccurrences(of: "Item", with: "Thing"))
        let diff = SchemaDiff(old: try document(old), new: new)
        #expect(diff.modelRenames == [SchemaDiff.ModelRename(old: "Item", new: "Thing", isInferred: true)])
        let rename = try #require(diff.changes.first { $0.subject == "Thing" })
        #expect(rename.summary == "renamed from 'Item' (inferred)")
        #expect(rename.customReason?.contains(#"say so with "originalName": "Item" on 'Thing'"#) == true)
        #expect(diff.changes.allSatisfy { $0.mark != "-" && $0.mark != "+" }, "\(diff.changes)")
    }

    @Test func anAmbiguousOrDifferentShapeIsNotARename() throws {
        func model(_ name: String, _ type: String = "String") -> String {
            #"{"name": "\#(name)", "attributes": [{"name": "x", "type": "\#(type)"}]}"#
        }
        func diff(_ old: [String], _ new: [String]) throws -> SchemaDiff {
            SchemaDiff(
                old: try document(#"{"models": [\#(old.joined(separator: ", "))]}"#),
                new: try document(#"{"models": [\#(new.joined(separator: ", "))]}"#))
        }
        #expect(try diff([model("A")], [model("B")]).modelRenames.count == 1, "the one match")
        #expect(try diff([model("A")], [model("B"), model("C")]).modelRenames.isEmpty, "two matches")
        #expect(try diff([model("A"), model("Z")], [model("B")]).modelRenames.isEmpty, "two old models match")
        let different = try diff([model("A")], [model("B", "Int")])
        #expect(different.modelRenames.isEmpty)
        #expect(different.changes.map { "\($0.mark) \($0.subject)" } == ["+ B", "- A"])
        let empty = try diff([#"{"name": "A"}"#], [#"{"name": "B"}"#])
        #expect(empty.modelRenames.isEmpty, "a model without properties has no shape to compare")
    }

    @Test func twoModelsClaimingOneOriginalNameAreAnErrorNamingThePath() throws {
        let json = #"""
            {"models": [{"name": "A", "originalName": "Old"}, {"name": "B"}, {"name": "C", "originalName": "Old"}]}
            """#
        let error = try #require(throws: SchemaFileError.self) { try document(json, file: "v2.json") }
        #expect(error.file == "v2.json")
        #expect(error.path == "models[2].originalName")
        #expect(error.problem == "'C' and 'A' (at 'models[0]') both claim to be the renamed 'Old'")
        #expect(error.toolError.message.hasPrefix("the schema file 'v2.json' is invalid at 'models[2].originalName'"))
        let still = try #require(throws: SchemaFileError.self) {
            try document(#"{"models": [{"name": "A", "originalName": "B"}, {"name": "B"}]}"#)
        }
        #expect(still.path == "models[0].originalName")
        #expect(still.problem == "'A' claims to be the renamed 'B', but 'models[1]' is still named 'B'")
        let notAName = try #require(throws: SchemaFileError.self) {
            try document(#"{"models": [{"name": "A", "originalName": 3}]}"#)
        }
        #expect(notAName.path == "models[0].originalName")
    }
}
