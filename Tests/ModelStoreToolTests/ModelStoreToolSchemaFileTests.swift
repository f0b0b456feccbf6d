import Foundation
import ModelStore
import ModelStoreJSONFile
import ModelStoreTestSupport
import Testing

/// `modelstore schema export`, `generate` and `diff`, and `schema --mermaid` on schema files,
/// run as a user runs them.
struct ModelStoreToolSchemaFileTests {
    private let tool: ModelStoreTool

    init() throws {
        tool = try ModelStoreTool()
    }

    /// A file of the schema tools' test target (`Fixtures/v1.json`, `Golden/Models.swift`).
    private func fixture(_ path: String) throws -> String {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: folder.appendingPathComponent("SchemaToolTests/\(path)"), encoding: .utf8)
    }

    /// Writes `text` into the test's directory as `name`.
    private func write(_ text: String, to name: String) throws {
        try Data(text.utf8).write(to: tool.url(name))
    }

    @Test func exportWritesAStoresSchemaThatDrawsLikeTheStore() throws {
        try ToolLibrary.seed(.jsonFile(at: tool.url("library.json")))
        let printed = try tool.run("schema", "export", "json:library.json").standardOutput
        #expect(printed.contains(#"{"name": "name", "type": "String", "unique": true}"#))
        let books = #"{"name": "books", "destination": "ToolBook", "toMany": true, "deleteRule": "cascade", "#
        #expect(printed.contains(books + #""inverse": "author"}"#))
        #expect(printed.contains(#"{"name": "subtitle", "type": "String?"}"#))

        let report = try tool.run("schema", "export", "json:library.json", "--out", "library-schema.json")
        #expect(report.standardOutput == "json:library.json: wrote the schema to 'library-schema.json'\n")
        #expect(try String(contentsOf: tool.url("library-schema.json"), encoding: .utf8) == printed)
        let fromStore = try tool.run("schema", "json:library.json", "--mermaid").standardOutput
        #expect(try tool.run("schema", "library-schema.json", "--mermaid").standardOutput == fromStore)
        #expect(try tool.run("schema", "export", "library-schema.json").standardOutput == printed, "export is stable")
    }

    @Test func exportReadsWhatSchemaJSONPrintsAndPrintsJSONItself() throws {
        try ToolLibrary.seed(.jsonFile(at: tool.url("library.json")))
        let report = try tool.run("schema", "json:library.json", "--json").standardOutput
        try write(report, to: "report.json")
        let fromReport = try tool.run("schema", "export", "report.json").standardOutput
        #expect(fromReport == (try tool.run("schema", "export", "json:library.json").standardOutput))

        let exported = try tool.json("schema", "export", "json:library.json")
        #expect(exported["source"] as? String == "json:library.json")
        let models = try #require((exported["schema"] as? [String: Any])?["models"] as? [[String: Any]])
        #expect(models.compactMap { $0["name"] as? String } == ["ToolAuthor", "ToolBook", "ToolTag"])
        let generated = try tool.json("schema", "generate", "--schema", "report.json")
        #expect((generated["code"] as? String)?.contains("final class ToolBook: PersistentModel {") == true)
    }

    @Test func generateWritesTheModelsOfASchemaFile() throws {
        try write(try fixture("Fixtures/schema.json"), to: "schema.json")
        let output = try tool.run("schema", "generate", "--schema", "schema.json", "--out", "Models.swift")
        #expect(output.standardOutput == "schema.json: wrote 3 models to 'Models.swift'\n")
        #expect(
            try String(contentsOf: tool.url("Models.swift"), encoding: .utf8) == (try fixture("Golden/Models.swift")))
        let printed = try tool.run("schema", "generate", "--schema=schema.json").standardOutput
        #expect(printed == (try fixture("Golden/Models.swift")))
        let diagram = try tool.run("schema", "schema.json", "--mermaid").standardOutput
        #expect(diagram.contains("    Project |o--o{ Todo : \"todos (cascade) / project\""))
    }

    @Test func diffPrintsTheChangesAndWritesThePlan() throws {
        try write(try fixture("Fixtures/v1.json"), to: "v1.json")
        try write(try fixture("Fixtures/v2.json"), to: "v2.json")
        let output = try tool.run(
            "schema", "diff", "--old", "v1.json", "--new", "v2.json", "--out", "MigrationPlan.swift")
        let text = output.standardOutput
        #expect(text.hasPrefix("v1.json (1.0.0) -> v2.json (2.0.0): a custom stage\n"))
        #expect(text.contains("  + Project.code   new attribute 'String', unique"))
        #expect(text.contains("  > Todo.text      renamed from 'title'"))
        #expect(text.contains("wrote the migration plan to 'MigrationPlan.swift'"))
        let plan = try String(contentsOf: tool.url("MigrationPlan.swift"), encoding: .utf8)
        #expect(plan == (try fixture("Golden/MigrationPlan.swift")))

        let report = try tool.json("schema", "diff", "--old", "v1.json", "--new", "v1.json")
        #expect(report["stage"] as? String == "lightweight")
        #expect((report["changes"] as? [Any])?.isEmpty == true)
        #expect((report["notes"] as? [String])?.first?.contains("the plan calls it 2.0.0") == true)
        let written = try FileManager.default.contentsOfDirectory(atPath: tool.directory.url.path)
        #expect(written.filter { $0.hasSuffix(".swift") } == ["MigrationPlan.swift"], "no plan without --out")
    }

    @Test func diffComparesAStoreWithASchemaFile() throws {
        try ToolLibrary.seed(.jsonFile(at: tool.url("library.json")))
        try tool.run("schema", "export", "json:library.json", "--out", "next.json")
        var next = try String(contentsOf: tool.url("next.json"), encoding: .utf8)
        next = next.replacingOccurrences(
            of: #"{"name": "pages", "type": "Int"}"#, with: #"{"name": "pages", "type": "Int", "unique": true}"#)
        try write(next, to: "next.json")
        let report = try tool.json("schema", "diff", "--old", "json:library.json", "--new", "next.json")
        let changes = try #require(report["changes"] as? [[String: Any]])
        #expect(changes.count == 1)
        #expect(changes.first?["subject"] as? String == "ToolBook.pages")
        #expect(changes.first?["stage"] as? String == "custom")
    }

    @Test func badSchemaFilesNameTheFileAndThePathAndExitWithSeven() throws {
        try write(#"{"models": [{"name": "A",]}"#, to: "broken.json")
        let broken = try tool.run("schema", "export", "broken.json", status: 7).standardError
        #expect(broken.contains("the schema file 'broken.json' is invalid: it is not valid JSON"))

        try write(#"{"models": [{"name": "A", "attributes": [{"name": "x", "type": "Strng"}]}]}"#, to: "type.json")
        let type = try tool.jsonError("schema", "generate", "--schema", "type.json", status: 7)
        #expect(type["code"] as? String == "invalidSchema")
        #expect(
            type["message"] as? String == "the schema file 'type.json' is invalid at 'models[0].attributes[0].type': "
                + "'Strng' is not a type ModelStore stores")

        try write(
            #"{"models": [{"name": "A"}, {"name": "B", "relationships": [{"name": "a", "destination": "C"}]}]}"#,
            to: "destination.json")
        let destination = try tool.run("schema", "destination.json", "--mermaid", status: 7).standardError
        #expect(destination.contains("'destination.json' is invalid at 'models[1].relationships[0].destination'"))

        try write(
            #"{"models": [{"name": "A", "relationships": [{"name": "b", "destination": "A", "inverse": "c"}]}]}"#,
            to: "inverse.json")
        let inverse = try tool.run("schema", "diff", "--old", "inverse.json", "--new", "inverse.json", status: 7)
        #expect(inverse.standardError.contains("'inverse.json' is invalid at 'models[0].relationships[0].inverse'"))
        #expect(inverse.standardError.contains("'A' has no relationship 'c'"))

        let missing = try tool.run("schema", "generate", "--schema", "missing.json", status: 4).standardError
        #expect(missing.contains("there is no schema file at '"))
        let enumeration =
            #"{"models": [{"name": "A", "attributes": [{"name": "k", "type": "Kind", "rawType": "Int"}]}]}"#
        try write(enumeration, to: "enum.json")
        let unsupported = try tool.run("schema", "generate", "--schema", "enum.json", status: 3).standardError
        #expect(unsupported.contains("cannot declare the enum 'Kind' that 'models[0].attributes[0].type' names"))
        #expect(!FileManager.default.fileExists(atPath: tool.url("Models.swift").path))
    }

    @Test func usageErrorsForTheSubcommands() throws {
        let noSchema = try tool.run("schema", "generate", "--out", "Models.swift", status: 2).standardError
        #expect(noSchema.contains("'schema generate' needs the schema to declare"))
        let noValue = try tool.run("schema", "generate", "--schema", status: 2).standardError
        #expect(noValue.contains("the option '--schema' of 'schema generate' needs a value"))
        let noNew = try tool.run("schema", "diff", "--old", "v1.json", status: 2).standardError
        #expect(noNew.contains("'schema diff' needs the old and the new schema"))
        let extra = try tool.run("schema", "export", "a.json", "b.json", status: 2).standardError
        #expect(extra.contains("'schema export' takes [SOURCE], but was given 2"))
    }

    @Test func helpShowsExamplesForEachSubcommand() throws {
        for (command, example) in [
            ("export", "modelstore schema export json:trips.json --out schema.json"),
            ("export", "modelstore schema export --package . --target App --models Project,Task"),
            ("generate", "modelstore schema generate --schema schema.json --out"),
            ("diff", "modelstore schema diff --old v1.json --new v2.json"),
        ] {
            let help = try tool.run("help", "schema", command).standardOutput
            #expect(help.hasPrefix("usage: modelstore schema \(command) "), "\(help)")
            #expect(help.contains("Examples:\n") && help.contains(example), "help for 'schema \(command)': \(help)")
            #expect(try tool.run("schema", command, "--help").standardOutput == help)
        }
        let schema = try tool.run("help", "schema").standardOutput
        #expect(schema.contains("modelstore schema schema.json --mermaid"))
        for command in ["export", "generate", "diff"] { #expect(schema.contains("  schema \(command) ")) }
        let overview = try tool.run("--help").standardOutput
        #expect(overview.contains("schema generate --schema SOURCE [--out FILE]"))
        #expect(overview.contains("schema diff --old SOURCE --new SOURCE [--out FILE]"))
    }
}
