import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreJSONFile
import ModelStoreTestSupport
import Testing

/// `modelstore verify` and `modelstore repair`: finding damage, saying where, and setting it aside.
struct ModelStoreToolVerifyRepairTests {
    private let tool: ModelStoreTool

    init() throws {
        tool = try ModelStoreTool()
    }

    /// A log of the library plus one more transaction, whose last record gets a flipped byte.
    private func damagedLog() throws -> (segment: URL, damagedRecord: Int) {
        let directory = tool.url("library-log")
        try ToolLibrary.seed(.appendLog(at: directory))
        let segment = directory.appendingPathComponent("segment-00000001.mslog")
        let before = try Data(contentsOf: segment).count
        try ToolLibrary.withContext(.appendLog(at: directory)) { context in
            context.insert(ToolTag("late"))
            try context.save()
        }
        var bytes = try Data(contentsOf: segment)
        #expect(bytes.count > before)
        bytes[before + 20] ^= 0x10  // inside the third transaction's record
        try bytes.write(to: segment)
        return (segment, before)
    }

    @Test func healthyStoresVerify() throws {
        try ToolLibrary.seed(.jsonFile(at: tool.url("library.json")))
        try ToolLibrary.seed(.appendLog(at: tool.url("library-log")))
        for url in ["json:library.json", "log:library-log"] {
            let report = try tool.json("verify", url)
            #expect(report["healthy"] as? Bool == true, "\(url)")
            #expect((report["problems"] as? [Any])?.isEmpty == true, "\(url)")
            #expect(ModelStoreTool.counts(report) == ToolLibrary.counts, "\(url)")
            #expect(try tool.run("verify", url).standardOutput == "\(url): healthy (10 models)\n")
        }
    }

    @Test func aFlippedByteInALogFailsVerifyWithTheSegmentAndOffset() throws {
        let (_, offset) = try damagedLog()
        let report = try tool.json("verify", "log:library-log", status: 1)
        #expect(report["healthy"] as? Bool == false)
        let problems = try #require(report["problems"] as? [[String: Any]])
        #expect(problems.count == 1)
        #expect(problems.first?["file"] as? String == "segment-00000001.mslog")
        #expect(problems.first?["offset"] as? Int == offset)
        #expect((report["remedy"] as? String)?.contains("modelstore repair log:library-log") == true)

        let text = try tool.run("verify", "log:library-log", status: 1).standardOutput
        #expect(text.contains("damaged, 1 problem:\n  'segment-00000001.mslog' at byte \(offset): "))
    }

    @Test func repairSetsTheDamageAsideAndThenTheLogVerifies() throws {
        let (segment, offset) = try damagedLog()
        let length = try Data(contentsOf: segment).count
        let report = try tool.json("repair", "log:library-log")
        #expect(report["changed"] as? Bool == true)
        #expect(report["lastKeptTransaction"] as? Int == 2)
        let damage = try #require(report["damage"] as? [String: Any])
        #expect(damage["file"] as? String == "segment-00000001.mslog")
        #expect(damage["offset"] as? Int == offset)
        let setAside = try #require(report["setAside"] as? [[String: Any]])
        #expect(setAside.count == 1)
        #expect(setAside.first?["offset"] as? Int == offset)
        #expect(setAside.first?["byteCount"] as? Int == length - offset)
        let savedAs = try #require(setAside.first?["savedAs"] as? String)
        #expect(savedAs.hasPrefix("damaged/"))
        #expect(FileManager.default.fileExists(atPath: tool.url("library-log").appendingPathComponent(savedAs).path))

        let verified = try tool.json("verify", "log:library-log")
        #expect(verified["healthy"] as? Bool == true)
        #expect(ModelStoreTool.counts(verified) == ToolLibrary.counts, "the first two transactions are kept")
        let again = try tool.run("repair", "log:library-log").standardOutput
        #expect(again.contains("nothing to repair"))
    }

    @Test func repairRefusesAnOpenLogAndOtherSchemes() throws {
        let directory = tool.url("library-log")
        try ToolLibrary.seed(.appendLog(at: directory))
        do {
            let held = try ToolLibrary.open(.appendLog(at: directory))
            let error = try tool.jsonError("repair", "log:library-log", status: 5)
            #expect(error["code"] as? String == "locked")
            let pid = ProcessInfo.processInfo.processIdentifier
            #expect((error["message"] as? String)?.contains("open for writing by process \(pid)") == true)
            withExtendedLifetime(held) {}
        }
        try ToolLibrary.seed(.jsonFile(at: tool.url("library.json")))
        let error = try tool.jsonError("repair", "json:library.json", status: 3)
        #expect((error["message"] as? String)?.contains("only append logs are repaired") == true)
        #expect((error["remedy"] as? String)?.contains("library.json.backup") == true)
    }

    @Test func aDamagedJSONFileFailsVerifyWithTheLineAndColumn() throws {
        let file = tool.url("library.json")
        try ToolLibrary.seed(.jsonFile(at: file))
        var text = try String(contentsOf: file, encoding: .utf8)
        let range = try #require(text.range(of: "\"Mrs Dalloway\""))
        text.replaceSubrange(range, with: "\"Mrs Dalloway")  // the string now swallows the comma after it
        try text.write(to: file, atomically: true, encoding: .utf8)
        let damagedLine = text[..<range.lowerBound].filter { $0 == "\n" }.count + 1

        let report = try tool.json("verify", "json:library.json", status: 1)
        let problem = try #require((report["problems"] as? [[String: Any]])?.first)
        #expect(problem["file"] as? String == file.path)
        #expect(problem["line"] as? Int == damagedLine)
        #expect(problem["column"] as? Int != nil)
        #expect(problem["offset"] as? Int != nil)
        let output = try tool.run("verify", "json:library.json", status: 1).standardOutput
        #expect(output.contains("at line \(damagedLine), column "))
        #expect(try String(contentsOf: file, encoding: .utf8) == text, "verify writes nothing")
    }
}
