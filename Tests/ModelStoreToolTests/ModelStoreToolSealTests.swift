import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreJSONFile
import ModelStoreTestSupport
import Testing

/// `modelstore seal`, and `verify` reporting everything opening would refuse.
struct ModelStoreToolSealTests {
    private let tool: ModelStoreTool

    init() throws {
        tool = try ModelStoreTool()
    }

    private func edit(_ url: URL, _ change: (String) -> String) throws {
        try Data(change(try String(contentsOf: url, encoding: .utf8)).utf8).write(to: url)
    }

    @Test func verifyRefusesAHandEditAndSealAcceptsIt() throws {
        let url = tool.url("library.json")
        try ToolLibrary.seed(.jsonFile(at: url))
        try edit(url) { $0.replacingOccurrences(of: "\"Emma\"", with: "\"Emma!\"") }
        let text = try tool.run("verify", "json:library.json", status: 1).standardOutput
        #expect(text.contains("does not match the checksum"), "\(text)")
        #expect(text.contains("modelstore seal json:"), "\(text)")
        #expect(try tool.run("seal", "json:library.json").standardOutput.contains("sealed"))
        #expect(try tool.json("verify", "json:library.json")["healthy"] as? Bool == true)
        #expect(try tool.json("seal", "json:library.json")["changed"] as? Bool == false)
    }

    @Test func verifyNamesTheSchemaVersionAnOlderAppRefuses() throws {
        let url = tool.url("library.json")
        try ToolLibrary.seed(.jsonFile(at: url))
        try edit(url) {
            $0.replacingOccurrences(of: "\"schemaVersion\": \"1.0.0\"", with: "\"schemaVersion\": \"3.1.0\"")
        }
        _ = try tool.run("seal", "json:library.json")
        let text = try tool.run("verify", "json:library.json").standardOutput
        #expect(
            text.contains("schema version 3.1.0: an app whose schema version is older refuses to open it"), "\(text)")
        #expect(try tool.json("verify", "json:library.json")["schemaVersion"] as? String == "3.1.0")
        // And the app at 1.0.0 does refuse it.
        expectError(.invalidSchema) { try ToolLibrary.open(.jsonFile(at: url)) }
    }

    @Test func verifyReportsAFormatVersionItCannotReadAsAProblem() throws {
        let url = tool.url("library.json")
        try ToolLibrary.seed(.jsonFile(at: url))
        try edit(url) { $0.replacingOccurrences(of: "\"formatVersion\": 1", with: "\"formatVersion\": 2") }
        let report = try tool.json("verify", "json:library.json", status: 1)
        let problems = try #require(report["problems"] as? [[String: Any]])
        #expect((problems.first?["reason"] as? String)?.contains("format version 2, newer than") == true)
    }

    @Test func sealRefusesAnAppendLog() throws {
        try ToolLibrary.seed(.appendLog(at: tool.url("library-log")))
        _ = try tool.run("seal", "log:library-log", status: 3)
    }
}
