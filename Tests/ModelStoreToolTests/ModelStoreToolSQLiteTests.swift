import Foundation
import ModelStore
import ModelStoreJSONFile
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// `modelstore` on `sqlite:` stores: inspect, verify (SQLite's integrity check and the schema
/// check), convert to and from every other store keeping keys and relationships, and compact.
struct ModelStoreToolSQLiteTests {
    private let tool: ModelStoreTool

    init() throws {
        tool = try ModelStoreTool()
    }

    @Test func convertsToAndFromEveryStoreKeepingKeysAndRelationships() throws {
        try ToolLibrary.seed(.sqlite(at: tool.url("library.sqlite")))
        let original = try ToolLibrary.describe(.sqlite(at: tool.url("library.sqlite")))
        #expect(original.count == 10)
        let inspected = try tool.json("inspect", "sqlite:library.sqlite")
        #expect(ModelStoreTool.counts(inspected) == ToolLibrary.counts)

        let toJSON = try tool.json("convert", "sqlite:library.sqlite", "json:library.json")
        #expect(toJSON["keptPrimaryKeys"] as? Bool == true)
        #expect(toJSON["referenceCount"] as? Int == 15)
        #expect(try ToolLibrary.describe(.jsonFile(at: tool.url("library.json"))) == original)

        let toLog = try tool.json("convert", "json:library.json", "log:library-log")
        #expect(toLog["keptPrimaryKeys"] as? Bool == true)
        let back = try tool.json("convert", "log:library-log", "sqlite:copy.sqlite")
        #expect(back["keptPrimaryKeys"] as? Bool == true)
        #expect(ModelStoreTool.counts(back) == ToolLibrary.counts)
        #expect(try ToolLibrary.describe(.sqlite(at: tool.url("copy.sqlite"))) == original)
        #expect(try tool.json("verify", "sqlite:copy.sqlite")["healthy"] as? Bool == true)
    }

    @Test func inspectAndVerifyWriteNoFile() throws {
        try ToolLibrary.seed(.sqlite(at: tool.url("library.sqlite")))
        let before = try Data(contentsOf: tool.url("library.sqlite"))
        let inspected = try tool.json("inspect", "sqlite:library.sqlite")
        #expect(ModelStoreTool.counts(inspected) == ToolLibrary.counts)
        let verified = try tool.json("verify", "sqlite:library.sqlite")
        #expect(verified["healthy"] as? Bool == true, "\(verified)")
        #expect(ModelStoreTool.counts(verified) == ToolLibrary.counts)
        #expect(try Data(contentsOf: tool.url("library.sqlite")) == before)
        for suffix in ["-wal", "-shm"] {
            #expect(!FileManager.default.fileExists(atPath: tool.url("library.sqlite" + suffix).path), "\(suffix)")
        }
    }

    @Test func anInMemoryDatabaseHasNothingToReadAndIsNotTakenForAPath() throws {
        for command in ["inspect", "verify", "compact"] {
            let error = try tool.jsonError(command, "sqlite::memory:", status: 3)
            #expect(error["code"] as? String == "unsupportedFeature")
            #expect(
                (error["message"] as? String)?.contains("'sqlite::memory:' names an in-memory store") == true,
                "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: tool.url(":memory:").path))
    }

    @Test func verifyReportsADamagedDatabaseAndCompactVacuums() throws {
        try ToolLibrary.seed(.sqlite(at: tool.url("library.sqlite")))
        #expect(try tool.json("verify", "sqlite:library.sqlite")["healthy"] as? Bool == true)
        let compacted = try tool.json("compact", "sqlite:library.sqlite")
        #expect((compacted["byteCountAfter"] as? Int ?? 0) > 0)
        #expect(try ToolLibrary.describe(.sqlite(at: tool.url("library.sqlite"))).count == 10)

        // Damage the pages after the first one: the integrity check names the file.
        var bytes = try Data(contentsOf: tool.url("library.sqlite"))
        for index in 4096..<bytes.count { bytes[index] = UInt8(truncatingIfNeeded: index &* 13) }
        try bytes.write(to: tool.url("library.sqlite"))
        let report = try tool.json("verify", "sqlite:library.sqlite", status: 1)
        #expect(report["healthy"] as? Bool == false)
        let problems = report["problems"] as? [[String: Any]] ?? []
        #expect(!problems.isEmpty)
        #expect(problems.allSatisfy { ($0["file"] as? String)?.hasSuffix("library.sqlite") == true })
    }
}
