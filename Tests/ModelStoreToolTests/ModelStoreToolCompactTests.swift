import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreJSONFile
import ModelStoreTestSupport
import Testing

/// `modelstore compact`: a new checkpoint for an append log, and errors for everything else.
struct ModelStoreToolCompactTests {
    private let tool: ModelStoreTool

    init() throws {
        tool = try ModelStoreTool()
    }

    @Test func compactingALogWritesACheckpointAndKeepsEveryModel() throws {
        let directory = tool.url("library-log")
        try ToolLibrary.seed(.appendLog(at: directory))
        try ToolLibrary.churn(.appendLog(at: directory), saves: 30)
        let original = try ToolLibrary.describe(.appendLog(at: directory))
        let report = try tool.json("compact", "log:library-log")
        #expect(report["checkpoint"] as? String == "checkpoint-00000002.mscheckpoint")
        #expect(report["modelCount"] as? Int == 10)
        #expect(report["lastTransaction"] as? Int == 32)
        #expect(report["archivedSegments"] as? [String] == ["segment-00000001.mslog"])
        let deadBefore = try #require(report["deadFractionBefore"] as? Double)
        #expect(try #require(report["deadFractionAfter"] as? Double) < deadBefore)
        let archived = directory.appendingPathComponent("history/segment-00000001.mslog")
        #expect(FileManager.default.fileExists(atPath: archived.path))
        #expect(try ToolLibrary.describe(.appendLog(at: directory)) == original)
        let text = try tool.run("compact", "log:library-log").standardOutput
        #expect(text.hasPrefix("Compacted log:library-log: wrote 'checkpoint-"))
    }

    @Test func compactRefusesOtherSchemesAndOpenLogs() throws {
        try ToolLibrary.seed(.jsonFile(at: tool.url("library.json")))
        let json = try tool.jsonError("compact", "json:library.json", status: 3)
        #expect((json["message"] as? String)?.contains("only append logs are compacted") == true)
        #expect(try tool.jsonError("compact", "memory:", status: 3)["code"] as? String == "unsupportedFeature")

        let directory = tool.url("library-log")
        try ToolLibrary.seed(.appendLog(at: directory))
        let held = try ToolLibrary.open(.appendLog(at: directory))
        let locked = try tool.jsonError("compact", "log:library-log", status: 5)
        #expect((locked["message"] as? String)?.contains("'\(directory.path)' is open for writing") == true)
        withExtendedLifetime(held) {}
    }
}
