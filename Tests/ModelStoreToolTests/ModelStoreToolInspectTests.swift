import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreJSONFile
import ModelStoreTestSupport
import Testing

/// `modelstore inspect`: entities, counts, schema version and sizes on disk.
struct ModelStoreToolInspectTests {
    private let tool: ModelStoreTool

    init() throws {
        tool = try ModelStoreTool()
    }

    @Test func jsonFileCountsEntitiesAndListsItsFiles() throws {
        try ToolLibrary.seed(.jsonFile(at: tool.url("library.json")))
        let report = try tool.json("inspect", "json:library.json")
        #expect(report["url"] as? String == "json:library.json")
        #expect(report["scheme"] as? String == "json")
        #expect(report["schemaVersion"] as? String == "1.0.0")
        #expect(ModelStoreTool.counts(report) == ToolLibrary.counts)
        #expect(report["modelCount"] as? Int == 10)
        #expect((report["storeIdentifier"] as? String)?.hasPrefix("json-") == true)
        #expect(report["log"] == nil)
        let files = try #require(report["files"] as? [[String: Any]])
        let sizes = Dictionary(
            uniqueKeysWithValues: files.map { ($0["path"] as? String ?? "", $0["byteCount"] as? Int ?? -1) })
        let document = try FileManager.default.attributesOfItem(atPath: tool.url("library.json").path)[.size] as? Int
        #expect(sizes["library.json"] == document)
        #expect(sizes["library.json.backup"] != nil, "the backup is part of the store")
        #expect(report["byteCount"] as? Int == sizes.values.reduce(0, +))

        let text = try tool.run("inspect", "json:library.json").standardOutput
        #expect(text.hasPrefix("json:library.json  (store 'json-"))
        #expect(text.contains("schema version 1.0.0"))
        #expect(text.contains("\n  ToolBook     4\n"))
        #expect(text.contains("\n  total       10\n"))
    }

    @Test func appendLogListsSegmentsCheckpointHistoryAndDeadFraction() throws {
        let directory = tool.url("library-log")
        try ToolLibrary.seed(.appendLog(at: directory))
        try ToolLibrary.churn(.appendLog(at: directory), saves: 30)
        let fresh = try tool.json("inspect", "log:library-log")
        #expect(ModelStoreTool.counts(fresh) == ToolLibrary.counts)
        let log = try #require(fresh["log"] as? [String: Any])
        #expect(log["transactionCount"] as? Int == 32)
        #expect(log["checkpoint"] == nil)
        let segments = try #require(log["segments"] as? [[String: Any]])
        #expect(segments.map { $0["file"] as? String } == ["segment-00000001.mslog"])
        #expect(segments.first?["transactionCount"] as? Int == 32)
        let dead = try #require(log["deadFraction"] as? Double)
        #expect(dead > 0.5, "the values each save replaced are dead bytes")

        try ToolLibrary.withContext(.appendLog(at: directory, compaction: .manual)) { context in
            try #require(context.container.stores.first as? AppendLogStore).compact()
        }
        let compacted = try #require(try tool.json("inspect", "log:library-log")["log"] as? [String: Any])
        let checkpoint = try #require(compacted["checkpoint"] as? [String: Any])
        #expect(checkpoint["modelCount"] as? Int == 10)
        #expect(checkpoint["lastTransaction"] as? Int == 32)
        let history = try #require(compacted["historySegments"] as? [[String: Any]])
        #expect(history.map { $0["path"] as? String } == ["history/segment-00000001.mslog"])
        #expect(try #require(compacted["deadFraction"] as? Double) < dead)

        let text = try tool.run("inspect", "log:library-log").standardOutput
        #expect(text.contains("Log: 32 transactions, format 1"))
        #expect(text.contains("checkpoint-00000002.mscheckpoint"))
        #expect(text.contains("history: 1 segment"))
        #expect(text.contains("dead fraction "))
    }

    @Test func inspectingALogNeedsNoLockAndWritesNothing() throws {
        let directory = tool.url("library-log")
        try ToolLibrary.seed(.appendLog(at: directory))
        let held = try ToolLibrary.open(.appendLog(at: directory))
        let before = try snapshotOfFiles(under: directory)
        let report = try tool.json("inspect", "log:library-log")
        #expect(report["modelCount"] as? Int == 10)
        #expect(try snapshotOfFiles(under: directory) == before)
        withExtendedLifetime(held) {}
    }

    /// Every file under a directory with its contents.
    private func snapshotOfFiles(under directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.subpathsOfDirectory(atPath: directory.path) {
            let url = directory.appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                files[name] = try Data(contentsOf: url)
            }
        }
        return files
    }
}
