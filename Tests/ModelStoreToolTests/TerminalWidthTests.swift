import Foundation
import ModelStoreTestSupport
import Testing

/// Every help text and table that `modelstore` and `trips` print fits an 80-column terminal.
struct TerminalWidthTests {
    private let modelstore: SampleProcess
    private let trips: SampleProcess
    private let directory: TemporaryDirectory

    init() throws {
        modelstore = try SampleProcess(named: "modelstore")
        trips = try SampleProcess(named: "trips")
        directory = try TemporaryDirectory()
    }

    /// The lines of `output` wider than 80 columns, each with its width.
    private func wideLines(_ output: SampleProcess.Output) -> [String] {
        output.standardOutput.split(separator: "\n").map(String.init).filter { $0.count > 80 }.map {
            "\($0.count): \($0)"
        }
    }

    /// Runs a program in the test's directory, requires it to succeed, and checks the width of what it printed.
    private func expectFits(_ program: SampleProcess, _ arguments: String...) throws {
        let output = try program.run(arguments, in: directory.url)
        let command = arguments.joined(separator: " ")
        #expect(output.status == 0, "\(command): \(output)")
        #expect(!output.standardOutput.isEmpty, "\(command) printed something")
        #expect(wideLines(output).isEmpty, "\(command) prints lines over 80 columns: \(wideLines(output))")
    }

    @Test func modelstoreHelpFits() throws {
        try expectFits(modelstore, "--help")
        let overview = try modelstore.run(["--help"], in: directory.url).standardOutput
        let commands = [
            "inspect", "verify", "convert", "compact", "repair", "schema", "schema export", "schema generate",
            "schema diff", "seal",
        ]
        for command in commands {
            #expect(overview.contains("\n  \(command) "), "--help lists '\(command)'")
            try expectFits(modelstore, "help", command)
        }
    }

    @Test func aCommandWhoseSynopsisIsWideStillListsItsDescriptionInTheColumn() throws {
        let overview = try modelstore.run(["--help"], in: directory.url).standardOutput
        let lines = overview.components(separatedBy: "\n")
        let export = try #require(lines.firstIndex { $0.hasPrefix("  schema export [SOURCE]") })
        // The synopsis wraps under itself, then the description starts in the column of the others.
        #expect(lines[export + 1].hasPrefix("    [--"))
        let inspect = try #require(lines.first { $0.hasPrefix("  inspect URL") })
        let description = try #require(inspect.range(of: "entities, counts"))
        let column = inspect.distance(from: inspect.startIndex, to: description.lowerBound)
        #expect(lines[export + 2].prefix(column).allSatisfy { $0 == " " } && lines[export + 2].count > column)
        #expect(lines[export + 2].dropFirst(column).hasPrefix("write a store's"))
    }

    @Test func tripsHelpAndTablesFit() throws {
        try expectFits(trips, "help")
        try expectFits(trips)  // adds the demo trips and lists them
        try expectFits(trips, "list", "--sort", "budget")
        try expectFits(trips, "stats")
        let help = try trips.run(["help"], in: directory.url).standardOutput
        // Each store URL is followed by spaces or a line break, never by its description directly.
        #expect(help.contains("  memory:[NAME]  "))
        #expect(!help.contains("false" + "one readable"))
        #expect(help.contains("json:PATH[?backup=true|false]\n"))
    }

    @Test func modelstoreReportsOnTheTripsStoreFit() throws {
        #expect(try trips.run([], in: directory.url).status == 0)
        try expectFits(modelstore, "inspect", "json:trips.json")
        try expectFits(modelstore, "verify", "json:trips.json")
        try expectFits(modelstore, "schema", "json:trips.json")
        // convert's one-line summary is a sentence, not help or a table; the tables of the copy are checked.
        #expect(try modelstore.run(["convert", "json:trips.json", "log:trips-log"], in: directory.url).status == 0)
        try expectFits(modelstore, "inspect", "log:trips-log")
    }
}
