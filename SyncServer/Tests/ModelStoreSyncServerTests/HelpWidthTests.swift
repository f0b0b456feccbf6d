import Foundation
import Testing

/// Every usage text the sync server package's programs print fits an 80-column terminal.
struct HelpWidthTests {
    /// Runs a program built beside the test bundle and returns its exit status and its output
    /// (standard output and error together).
    private func run(_ name: String, _ arguments: [String]) throws -> (status: Int32, lines: [String]) {
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent(name)
        try #require(
            FileManager.default.isExecutableFile(atPath: executable.path),
            "'\(executable.path)' is missing: build the package's products with the tests")
        let run = try command([executable.path] + arguments)
        return (run.status, run.output.split(separator: "\n").map(String.init))
    }

    private func expectFits(_ lines: [String], _ command: String) {
        let wide = lines.filter { $0.count > 80 }.map { "\($0.count): \($0)" }
        #expect(wide.isEmpty, "\(command) prints lines over 80 columns: \(wide)")
    }

    @Test func theServersHelpFits() throws {
        let help = try run("modelstore-sync-server", ["--help"])
        #expect(help.status == 0)
        #expect(help.lines.first?.hasPrefix("usage: modelstore-sync-server") == true)
        #expect(help.lines.contains { $0.hasPrefix("--scope-attribute NAME") }, "the options are listed")
        expectFits(help.lines, "modelstore-sync-server --help")
    }

    @Test func theToolsUsageFits() throws {
        for (name, arguments) in [
            ("modelstore-sync-load", [String]()), ("modelstore-sync-fuzz", ["what"]), ("modelstore-sync-first", []),
        ] {
            let usage = try run(name, arguments)
            #expect(usage.status == 2, "\(name) without what it needs exits 2")
            #expect(usage.lines.contains { $0.contains("usage: \(name)") }, "\(name) prints its usage")
            expectFits(usage.lines, name)
        }
    }
}
