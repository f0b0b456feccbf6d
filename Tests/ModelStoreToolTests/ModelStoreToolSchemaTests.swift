import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreJSONFile
import ModelStoreTestSupport
import Testing

/// `modelstore schema`: the stored schema as text, data and a Mermaid ER diagram.
struct ModelStoreToolSchemaTests {
    private let tool: ModelStoreTool

    init() throws {
        tool = try ModelStoreTool()
        try ToolLibrary.seed(.jsonFile(at: tool.url("library.json")))
    }

    @Test func mermaidDrawsEntitiesAttributesAndCardinalities() throws {
        let diagram = try tool.run("schema", "json:library.json", "--mermaid").standardOutput
        let lines = diagram.split(separator: "\n").map(String.init)
        #expect(lines.first == "erDiagram")
        #expect(lines.contains("    ToolAuthor {"))
        #expect(lines.contains("        String name UK"))
        #expect(lines.contains("        Int pages"))
        #expect(lines.contains("        String subtitle \"optional\""))
        #expect(lines.contains("        String label UK"))
        // One line per relationship and its inverse: an author has zero or more books, a book zero or one author.
        #expect(lines.contains("    ToolAuthor |o--o{ ToolBook : \"books (cascade) / author\""))
        #expect(!lines.contains { $0.contains("ToolBook }o--o| ToolAuthor") }, "the inverse is not drawn twice")
        // Without an inverse, a tag is shared by any number of books.
        #expect(lines.contains("    ToolBook }o--o{ ToolTag : \"tags\""))
    }

    @Test func textAndJSONDescribeTheStoredSchema() throws {
        let text = try tool.run("schema", "json:library.json").standardOutput
        #expect(text.hasPrefix("json:library.json: schema version 1.0.0\n"))
        #expect(text.contains("\n  books  [ToolBook]  inverse author, delete rule cascade\n"))
        #expect(text.contains("\n  subtitle  String?\n"))

        let report = try tool.json("schema", "json:library.json", "--mermaid")
        let schema = try #require(report["schema"] as? [String: Any])
        let entities = try #require(schema["entities"] as? [[String: Any]])
        #expect(Set(entities.compactMap { $0["name"] as? String }) == ["ToolAuthor", "ToolBook", "ToolTag"])
        #expect((report["mermaid"] as? String)?.hasPrefix("erDiagram\n") == true)
        #expect(try tool.json("schema", "json:library.json")["mermaid"] == nil)

        try tool.run("convert", "json:library.json", "log:library-log")
        let fromLog = try tool.json("schema", "log:library-log")
        let logSchema = try #require(fromLog["schema"] as? [String: Any])
        #expect(NSDictionary(dictionary: logSchema) == NSDictionary(dictionary: schema))
    }
}
