import Foundation
import ModelStore
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// A piece of media: the root of a hierarchy stored in one entity `ToolMedia`.
class ToolMedia: PersistentModel {
    @Attribute(.unique) var title: String = ""
    @Relationship var shelf: ToolShelf?

    let persistentBackingData = BackingData()
    required init() {}
}

/// A recording, with its length.
class ToolRecording: ToolMedia {
    @Attribute var minutes: Int = 0
}

/// A podcast episode: a recording with a host.
final class ToolEpisode: ToolRecording {
    @Attribute var host: String?
}

/// A shelf of media of any class.
final class ToolShelf: PersistentModel {
    @Attribute var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \ToolMedia.shelf) var items: [ToolMedia] = []

    let persistentBackingData = BackingData()
    init() {}
}

/// `modelstore schema` and its subcommands on a store whose schema has a class hierarchy (SQLite,
/// which records the hierarchy's classes with its schema).
struct ModelStoreToolHierarchyTests {
    private let tool: ModelStoreTool

    init() throws {
        tool = try ModelStoreTool()
        let container = try ModelContainer(
            for: Schema([ToolMedia.self, ToolRecording.self, ToolEpisode.self, ToolShelf.self]),
            configurations: [SQLiteStoreConfiguration(url: tool.url("media.sqlite"))])
        let context = ModelContext(container)
        let shelf = ToolShelf()
        let episode = ToolEpisode()
        episode.title = "Pilot"
        episode.minutes = 42
        episode.host = "Ada"
        shelf.items = [episode]
        context.insert(shelf)
        try context.save()
    }

    @Test func textListsEachClassWithWhatItDeclares() throws {
        let text = try tool.run("schema", "sqlite:media.sqlite").standardOutput
        #expect(text.contains("\n  class: ToolMedia (root), declares title, shelf\n"))
        #expect(text.contains("\n  class: ToolRecording: ToolMedia, declares minutes\n"))
        #expect(text.contains("\n  class: ToolEpisode: ToolRecording, declares host"))
        #expect(text.contains("\n  minutes      Int?\n"), "a subclass's attribute is stored optional")
    }

    @Test func mermaidDrawsOneBoxPerClassAndTheSubclassLines() throws {
        let lines = try tool.run("schema", "sqlite:media.sqlite", "--mermaid").standardOutput
            .split(separator: "\n").map(String.init)
        #expect(lines.contains("    ToolMedia {"))
        #expect(lines.contains("        String __modelClass"), "the class attribute, as a Mermaid name")
        #expect(lines.contains("    ToolRecording {"))
        #expect(lines.contains("    ToolMedia ||--o| ToolRecording : \"is a (subclass)\""))
        #expect(lines.contains("    ToolRecording ||--o| ToolEpisode : \"is a (subclass)\""))
    }

    @Test func exportWritesTheHierarchyAndGenerateDeclaresIt() throws {
        let printed = try tool.run("schema", "export", "sqlite:media.sqlite", "--out", "media-schema.json")
        #expect(printed.standardOutput == "sqlite:media.sqlite: wrote the schema to 'media-schema.json'\n")
        let file = try String(contentsOf: tool.url("media-schema.json"), encoding: .utf8)
        #expect(file.contains(#""name": "ToolEpisode",\#n      "superclass": "ToolRecording","#))
        #expect(!file.contains("_modelClass"), "the class attribute is the core's, not the file's")
        let fromStore = try tool.run("schema", "sqlite:media.sqlite", "--mermaid").standardOutput
        #expect(try tool.run("schema", "media-schema.json", "--mermaid").standardOutput == fromStore)
        let stored = try tool.json("schema", "sqlite:media.sqlite")["schema"] as? [String: Any]
        let fromFile = try tool.json("schema", "media-schema.json")["schema"] as? [String: Any]
        #expect(NSDictionary(dictionary: try #require(fromFile)) == NSDictionary(dictionary: try #require(stored)))

        let code = try tool.run("schema", "generate", "--schema", "media-schema.json").standardOutput
        #expect(code.contains("class ToolMedia: PersistentModel {"))
        #expect(code.contains("class ToolRecording: ToolMedia {\n    @Attribute var minutes: Int?\n}"))
        #expect(code.contains("final class ToolEpisode: ToolRecording {"))
    }

    @Test func diffCallsANewSubclassLightweightAndARemovedOneCustom() throws {
        try tool.run("schema", "export", "sqlite:media.sqlite", "--out", "next.json")
        var next = try String(contentsOf: tool.url("next.json"), encoding: .utf8)
        let video =
            #"{"name": "ToolVideo", "superclass": "ToolRecording", "attributes": [{"name": "width", "type": "Int?"}]}"#
        next = next.replacingOccurrences(of: "  ]\n}", with: "    ,\(video)\n  ]\n}")
        try Data(next.utf8).write(to: tool.url("next.json"))
        let added = try tool.json("schema", "diff", "--old", "sqlite:media.sqlite", "--new", "next.json")
        #expect(added["stage"] as? String == "lightweight")
        let subjects = (added["changes"] as? [[String: Any]])?.compactMap { $0["subject"] as? String }
        #expect(subjects == ["ToolVideo"])

        let removed = try tool.json("schema", "diff", "--old", "next.json", "--new", "sqlite:media.sqlite")
        #expect(removed["stage"] as? String == "custom")
        let change = try #require((removed["changes"] as? [[String: Any]])?.first)
        #expect(change["subject"] as? String == "ToolVideo")
        #expect((change["summary"] as? String) == "subclass of 'ToolRecording' removed")
    }
}
