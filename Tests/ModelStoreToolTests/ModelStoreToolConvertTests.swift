import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreAppendLog
import ModelStoreJSONFile
import ModelStoreTestSupport
import Testing

/// `modelstore convert`: copies between stores keep primary keys and relationships.
struct ModelStoreToolConvertTests {
    private let tool: ModelStoreTool

    init() throws {
        tool = try ModelStoreTool()
    }

    @Test func jsonToLogToJSONKeepsCountsKeysAndRelationships() throws {
        try ToolLibrary.seed(.jsonFile(at: tool.url("library.json")))
        let original = try ToolLibrary.describe(.jsonFile(at: tool.url("library.json")))
        #expect(original.count == 10)

        let toLog = try tool.json("convert", "json:library.json", "log:library-log")
        #expect(ModelStoreTool.counts(toLog) == ToolLibrary.counts)
        #expect(toLog["keptPrimaryKeys"] as? Bool == true)
        #expect(toLog["referenceCount"] as? Int == 15, "4 authors→books, 4 books→author, 7 books→tags")
        let logIdentifier = try #require(toLog["destinationStoreIdentifier"] as? String)
        #expect(logIdentifier.hasPrefix("log-"))
        #expect(try ToolLibrary.describe(.appendLog(at: tool.url("library-log"))) == original)

        let back = try tool.json("convert", "log:library-log", "json:copy.json")
        #expect(back["sourceStoreIdentifier"] as? String == logIdentifier)
        #expect(ModelStoreTool.counts(back) == ToolLibrary.counts)
        #expect(try ToolLibrary.describe(.jsonFile(at: tool.url("copy.json"))) == original)

        // The copy holds only its own store identifier, in identifiers and references alike.
        let copy = try String(contentsOf: tool.url("copy.json"), encoding: .utf8)
        let source = try String(contentsOf: tool.url("library.json"), encoding: .utf8)
        let sourceIdentifier = try #require(toLog["sourceStoreIdentifier"] as? String)
        #expect(source.contains(sourceIdentifier))
        #expect(!copy.contains(sourceIdentifier) && !copy.contains(logIdentifier))
        #expect(try tool.json("verify", "json:copy.json")["healthy"] as? Bool == true)
    }

    @Test func convertingIntoMemoryReadsAndWritesEverythingAndKeepsNothing() throws {
        try ToolLibrary.seed(.appendLog(at: tool.url("library-log")))
        let report = try tool.json("convert", "log:library-log", "memory:")
        #expect(report["modelCount"] as? Int == 10)
        #expect(report["keptPrimaryKeys"] as? Bool == true)
        let text = try tool.run("convert", "log:library-log", "memory:").standardOutput
        #expect(text.hasPrefix("Copied 10 models from log:library-log to memory: (store '"))
    }

    @Test func aDestinationThatHoldsModelsIsRefusedAndLeftAlone() throws {
        try ToolLibrary.seed(.jsonFile(at: tool.url("library.json")))
        try ToolLibrary.seed(.jsonFile(at: tool.url("other.json")))
        let before = try Data(contentsOf: tool.url("other.json"))
        let error = try tool.jsonError("convert", "json:library.json", "json:other.json", status: 6)
        #expect((error["message"] as? String)?.contains("already holds 10 models") == true)
        #expect(try Data(contentsOf: tool.url("other.json")) == before)

        try Data("not a store".utf8).write(to: tool.url("notes.txt"))
        let foreign = try tool.jsonError("convert", "json:library.json", "json:notes.txt", status: 6)
        #expect((foreign["message"] as? String)?.contains("is not a store modelstore can read") == true)
        #expect(try String(contentsOf: tool.url("notes.txt"), encoding: .utf8) == "not a store")

        let same = try tool.jsonError("convert", "json:library.json", "json:./library.json", status: 2)
        #expect((same["message"] as? String)?.contains("are the same store") == true)
    }

    @Test func anEmptyDirectoryIsAValidDestination() throws {
        try ToolLibrary.seed(.jsonFile(at: tool.url("library.json")))
        try FileManager.default.createDirectory(at: tool.url("empty"), withIntermediateDirectories: false)
        try tool.run("convert", "json:library.json", "log:empty")
        #expect(try ToolLibrary.describe(.appendLog(at: tool.url("empty"))).count == 10)
    }

    @Test func aLockedSourceIsReportedAndNothingIsCreated() throws {
        let directory = tool.url("library-log")
        try ToolLibrary.seed(.appendLog(at: directory))
        let held = try ToolLibrary.open(.appendLog(at: directory))
        let output = try tool.run("convert", "log:library-log", "json:copy.json", status: 5)
        let pid = ProcessInfo.processInfo.processIdentifier
        #expect(output.standardError.contains("is open for writing by process \(pid)"))
        #expect(!FileManager.default.fileExists(atPath: tool.url("copy.json").path))
        withExtendedLifetime(held) {}
    }

    @Test func aFailedCopyRemovesWhatItCreated() throws {
        // A log whose book refers to an author the log does not hold: the append log stores
        // snapshots as given, so the copy finds the dangling reference only while rewriting.
        let directory = tool.url("library-log")
        try ToolLibrary.seed(.appendLog(at: directory))
        try ToolLibrary.withContext(.appendLog(at: directory)) { context in
            let store = try #require(context.container.stores.first as? AppendLogStore)
            let book = try #require(store.schema.entity(named: "ToolBook"))
            let missing = PersistentIdentifier.identifier(
                for: store.identifier, entityName: "ToolAuthor", primaryKey: 999)
            let orphan = try DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: "ToolBook"), entity: book,
                namedValues: ["title": .string("Orphan"), "author": .reference(missing)])
            _ = try store.insert(DataStoreBatchInsertRequest(snapshots: [orphan], editingState: EditingState()))
        }
        let error = try tool.jsonError("convert", "log:library-log", "json:copy.json", status: 1)
        #expect((error["message"] as? String)?.contains("ToolAuthor(\(try storeIdentifier(directory)):999)") == true)
        let left = try FileManager.default.contentsOfDirectory(atPath: tool.directory.url.path)
        #expect(left == ["library-log"], "no copy.json, copy.json.lock or copy.json.backup is left")
    }

    private func storeIdentifier(_ directory: URL) throws -> String {
        try AppendLogStore.inspect(at: directory).storeIdentifier
    }
}
