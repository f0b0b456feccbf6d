import Foundation
import ModelStore
import ModelStoreJSONFile
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// `modelstore sync` and `modelstore conflicts`: stores opened by URL with no model types.
struct ModelStoreToolSyncTests {
    private let tool: ModelStoreTool

    init() throws {
        tool = try ModelStoreTool()
    }

    @Test func aNewDeviceGetsEverythingAndAnEditComesBack() throws {
        try ToolLibrary.seed(.jsonFile(at: tool.url("phone.json")))
        let first = try tool.json("sync", "json:phone.json", "sqlite:shared.sqlite")
        #expect(first["pushed"] as? Int == 10)
        #expect(first["pulled"] as? Int == 0)

        // A second device that has nothing yet is created with the shared store's schema.
        let second = try tool.json("sync", "sqlite:laptop.sqlite", "sqlite:shared.sqlite")
        #expect(second["pulled"] as? Int == 10)
        #expect(second["pushed"] as? Int == 0)
        let laptopCounts = ModelStoreTool.counts(try tool.json("inspect", "sqlite:laptop.sqlite"))
        #expect(laptopCounts["ToolBook"] == 4 && laptopCounts["ToolAuthor"] == 3 && laptopCounts["ToolTag"] == 3)

        // Nothing changed: nothing moves.
        let quiet = try tool.json("sync", "sqlite:laptop.sqlite", "sqlite:shared.sqlite")
        #expect(quiet["pushed"] as? Int == 0 && quiet["pulled"] as? Int == 0)

        let output = try tool.run("sync", "json:phone.json", "sqlite:shared.sqlite")
        #expect(output.standardOutput.contains("pushed 0 changes, pulled 0 changes, 0 conflicts decided"))
    }

    @Test func aClashBecomesAConflictTheToolListsAndResolves() throws {
        try ToolLibrary.seed(.jsonFile(at: tool.url("phone.json")))
        _ = try tool.json("sync", "json:phone.json", "sqlite:shared.sqlite")
        _ = try tool.json("sync", "json:laptop.json", "sqlite:shared.sqlite")
        try setPages(of: "Emma", to: 500, in: .jsonFile(at: tool.url("phone.json")))
        try setPages(of: "Emma", to: 510, in: .jsonFile(at: tool.url("laptop.json")))
        _ = try tool.json("sync", "json:phone.json", "sqlite:shared.sqlite")
        let clash = try tool.json("sync", "json:laptop.json", "sqlite:shared.sqlite", "--policy", "remote")
        #expect(clash["conflicts"] as? Int == 1)
        #expect(clash["openConflicts"] as? Int == 1)

        let listed = try tool.json("conflicts", "json:laptop.json")
        let conflicts = try #require(listed["conflicts"] as? [[String: Any]])
        try #require(conflicts.count == 1)
        #expect(conflicts[0]["property"] as? String == "pages")
        #expect(conflicts[0]["kind"] as? String == "property")
        #expect(conflicts[0]["outcome"] as? String == "remoteWins")
        let id = try #require(conflicts[0]["id"] as? String)

        let refused = try tool.jsonError("conflicts", "json:laptop.json", "--resolve", id, status: 2)
        #expect((refused["message"] as? String)?.contains("--take") == true)
        _ = try tool.json("conflicts", "json:laptop.json", "--resolve", id, "--take", "local")
        #expect((try tool.json("conflicts", "json:laptop.json")["conflicts"] as? [Any])?.isEmpty == true)
        _ = try tool.json("sync", "json:laptop.json", "sqlite:shared.sqlite")
        _ = try tool.json("sync", "json:phone.json", "sqlite:shared.sqlite")
        #expect(try pages(of: "Emma", in: .jsonFile(at: tool.url("phone.json"))) == 510)
    }

    @Test func storesWithDifferentModelsAreRefusedBeforeAnythingMoves() throws {
        try ToolLibrary.seed(.jsonFile(at: tool.url("phone.json")))
        _ = try tool.json("sync", "json:phone.json", "sqlite:shared.sqlite")
        let other = try ModelContainer(
            for: Leaf.self, configurations: JSONFileStoreConfiguration(url: tool.url("other.json")))
        let context = ModelContext(other)
        context.insert(Leaf())
        try context.save()
        let error = try tool.jsonError("sync", "json:other.json", "sqlite:shared.sqlite", status: 3)
        #expect(error["code"] as? String == "schemaMismatch")
        #expect(ModelStoreTool.counts(try tool.json("inspect", "json:other.json"))["ToolBook"] == nil)
    }

    private func setPages(of title: String, to pages: Int, in configuration: any DataStoreConfiguration) throws {
        try ToolLibrary.withContext(configuration) { context in
            let book = try #require(try context.fetch(FetchDescriptor<ToolBook>()).first { $0.title == title })
            book.pages = pages
            try context.save()
        }
    }

    private func pages(of title: String, in configuration: any DataStoreConfiguration) throws -> Int? {
        try ToolLibrary.withContext(configuration) { context in
            try context.fetch(FetchDescriptor<ToolBook>()).first { $0.title == title }?.pages
        }
    }
}

/// A model no library store has.
final class Leaf: PersistentModel {
    @Attribute var color: String = "green"

    let persistentBackingData = BackingData()
    init() {}
}
