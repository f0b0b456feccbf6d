import Foundation
import ModelStore
import ModelStoreJSONFile
import ModelStoreTestSupport
import ModelStoreTooling
import Testing

/// The `modelstore` command line: help, usage errors, bad URLs, missing paths and exit statuses.
struct ModelStoreToolCommandLineTests {
    private let tool: ModelStoreTool

    init() throws {
        tool = try ModelStoreTool()
    }

    @Test func helpListsEveryCommandTheSchemesAndTheExitStatuses() throws {
        let help = try tool.run("--help").standardOutput
        for text in [
            "inspect URL", "verify URL", "convert SRC DST", "compact URL", "repair URL", "schema URL [--mermaid]",
            "help COMMAND", "json:PATH", "log:DIR", "memory:", "--json",
        ] {
            #expect(help.contains(text), "--help mentions '\(text)'")
        }
        for status in 0...7 { #expect(help.contains("\n  \(status)  "), "--help documents exit status \(status)") }
        #expect(try tool.run("help").standardOutput == help)
        #expect(try tool.run(status: 2).standardOutput == help, "no arguments prints the help and fails")
    }

    @Test func helpCommandDescribesOneCommand() throws {
        let help = try tool.run("help", "schema").standardOutput
        #expect(help.hasPrefix("usage: modelstore schema URL [--mermaid] [--json]\n"))
        #expect(help.contains("erDiagram"))
        #expect(try tool.run("schema", "--help").standardOutput == help)
        #expect(try tool.run("convert", "-h").standardOutput.hasPrefix("usage: modelstore convert SRC DST"))
        let unknown = try tool.run("help", "frobnicate", status: 2).standardError
        #expect(unknown.contains("there is no command 'frobnicate' to describe"))
    }

    @Test func usageErrorsExitWithTwoAndSayWhatIsExpected() throws {
        let unknownCommand = try tool.run("frobnicate", "json:x.json", status: 2).standardError
        #expect(unknownCommand.contains("'frobnicate' is not a modelstore command"))
        #expect(unknownCommand.contains("'inspect', 'verify', 'convert', 'compact', 'repair', 'schema'"))
        let missing = try tool.run("convert", "json:a.json", status: 2).standardError
        #expect(missing.contains("'convert' takes SRC and DST, but was given 1: 'json:a.json'"))
        let extra = try tool.run("inspect", "json:a.json", "json:b.json", status: 2).standardError
        #expect(extra.contains("'inspect' takes URL, but was given 2"))
        let option = try tool.run("inspect", "json:a.json", "--mermaid", status: 2).standardError
        #expect(option.contains("'inspect' has no option '--mermaid'"))
        let error = try tool.jsonError("verify", status: 2)
        #expect(error["code"] as? String == "usage")
    }

    @Test func badURLsNameTheStringAndListTheSchemes() throws {
        let noScheme = try tool.run("inspect", "library.json", status: 3).standardError
        #expect(noScheme.contains("the store URL 'library.json' does not start with a scheme"))
        #expect(noScheme.contains("'json:library.json'"))
        let error = try tool.jsonError("verify", "ftp:library", status: 3)
        #expect(error["code"] as? String == "invalidConfiguration")
        #expect((error["message"] as? String)?.contains("'ftp:'") == true)
        #expect((error["remedy"] as? String)?.contains("Registered schemes: 'json:PATH") == true)
        let option = try tool.run("inspect", "log:library?durability=sometimes", status: 3).standardError
        #expect(option.contains("sets the option 'durability' to 'sometimes'"))
    }

    @Test func missingPathsAreNotFoundAndNothingIsCreated() throws {
        for arguments in [
            ["inspect", "json:missing.json"], ["verify", "log:missing-log"], ["schema", "json:missing.json"],
            ["compact", "log:missing-log"], ["repair", "log:missing-log"],
            ["convert", "json:missing.json", "log:copy"],
        ] {
            let output = try tool.process.run(arguments, in: tool.directory.url)
            #expect(output.status == 4, "\(arguments): \(output)")
            #expect(output.standardError.contains("there is no store at '"), "\(arguments): \(output)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: tool.directory.url.path).isEmpty)
        let error = try tool.jsonError("inspect", "json:missing.json", status: 4)
        #expect(error["code"] as? String == "notFound")
        #expect((error["message"] as? String)?.contains(tool.url("missing.json").path) == true)
    }

    @Test func inMemoryStoresHaveNothingToRead() throws {
        let error = try tool.jsonError("inspect", "memory:", status: 3)
        #expect((error["message"] as? String)?.contains("keeps nothing between processes") == true)
        #expect(try tool.run("convert", "memory:", "json:copy.json", status: 3).standardError.contains("in-memory"))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func aProgressBarIsDrawnOnlyOnATerminalAndNeverWithJSON() throws {
        try ToolLibrary.seed(.jsonFile(at: tool.url("library.json")))
        let piped = try tool.process.run(
            ["convert", "json:library.json", "log:piped"], in: tool.directory.url,
            environment: ["MODELSTORE_PROGRESS_DELAY": "0"])
        #expect(piped.status == 0 && piped.standardError.isEmpty, "no bar into a pipe: \(piped)")
        // util-linux `script` runs the tool on a pseudo-terminal; the delay of 0 draws the bar at once.
        let drawn = try runOnTerminal("verify json:library.json")
        #expect(drawn.contains("\u{1B}[2K"), "the bar is drawn and erased: \(drawn.debugDescription)")
        #expect(drawn.contains("json:library.json: healthy"))
        let json = try runOnTerminal("verify json:library.json --json")
        #expect(!json.contains("\u{1B}"), "no bar with --json: \(json.debugDescription)")
        #expect(json.contains("\"healthy\" : true"))
    }

    /// Runs `modelstore` with `arguments` on a pseudo-terminal and returns everything it wrote.
    private func runOnTerminal(_ arguments: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qefc", "'\(tool.process.executable.path)' \(arguments)", "/dev/null"]
        process.currentDirectoryURL = tool.directory.url
        var environment = ProcessInfo.processInfo.environment
        environment["MODELSTORE_PROGRESS_DELAY"] = "0"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}
