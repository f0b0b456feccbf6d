import Foundation
import ModelStoreTestSupport
import Testing

/// Drives the `trips` executable as a user would, each test in a working directory of its own.
struct TripsCommandTests {
    private let trips: SampleProcess
    private let directory: TemporaryDirectory

    init() throws {
        trips = try SampleProcess(named: "trips")
        directory = try TemporaryDirectory()
    }

    /// Runs `trips` and requires the exit status.
    @discardableResult
    private func run(
        _ arguments: String..., environment: [String: String] = [:], status: Int32 = 0
    ) throws -> SampleProcess.Output {
        let output = try trips.run(arguments, in: directory.url, environment: environment)
        #expect(output.status == status, "trips \(arguments.joined(separator: " ")): \(output)")
        return output
    }

    /// The trip names of a `list` table, in order.
    private func names(_ output: SampleProcess.Output) -> [String] {
        let lines = output.standardOutput.components(separatedBy: "\n")
        guard let header = lines.firstIndex(where: { $0.hasPrefix("NAME  ") }) else { return [] }
        return lines[(header + 1)...].compactMap { line in
            line.isEmpty ? nil : line.components(separatedBy: "  ").first
        }
    }

    // MARK: The default run

    @Test func noArgumentsCreatesTripsJSONWithDemoTripsAndListsThem() throws {
        let first = try run()
        #expect(first.standardOutput.hasPrefix("Added demo trips to json:trips.json."))
        #expect(
            names(first) == [
                "Rome spring break", "Lisbon weekend", "Alps hiking", "Kyoto in autumn", "Lisbon food tour",
            ])
        #expect(FileManager.default.fileExists(atPath: directory.path("trips.json")))

        let second = try run()
        #expect(second.standardOutput.hasPrefix("Trips in json:trips.json:"))
        #expect(names(second).count == 5)
    }

    @Test func theMemoryStoreStartsFreshEveryRun() throws {
        let output = try run("--store", "memory:")
        #expect(output.standardOutput.hasPrefix("Added demo trips to memory:."))
        #expect(names(output).count == 5)
        #expect(!FileManager.default.fileExists(atPath: directory.path("trips.json")))
    }

    @Test func debugLoggingShowsOpensSavesFetchesAndPlansOnlyWhenAskedFor() throws {
        let quiet = try run("--store", "memory:")
        #expect(!quiet.standardError.contains("[ModelStore]"))

        let output = try run("--store", "memory:", environment: ["MODELSTORE_DEBUG": "2"])
        let lines = output.standardError.components(separatedBy: "\n").filter { $0.hasPrefix("[ModelStore] ") }
        #expect(lines.contains { $0.hasPrefix("[ModelStore] opened InMemoryStore") && $0.contains("Trip") })
        #expect(lines.contains { $0.contains("save: ") && $0.contains(" inserted, ") && $0.hasSuffix(" ms") })
        #expect(lines.contains { $0.contains("fetch Trip: 5 in ") })
        #expect(lines.contains { $0.contains("fetch Trip plan:") })
        #expect(names(output).count == 5)  // the app's own output is unchanged

        let levelOne = try run("--store", "memory:", environment: ["MODELSTORE_DEBUG": "1"])
        #expect(levelOne.standardError.contains("fetch Trip: 5 in "))
        #expect(!levelOne.standardError.contains("plan:"))
    }

    // MARK: Commands

    @Test func watchListsAgainWhenAnotherProcessAddsATrip() async throws {
        let trips = self.trips
        let folder = directory.url
        let watching = Task.detached { try trips.run(["watch", "--seconds", "300", "--changes", "1"], in: folder) }
        // The watch creates the store when it opens it; add a trip from another process after that.
        for _ in 0..<400 where !FileManager.default.fileExists(atPath: directory.path("trips.json")) {
            try await Task.sleep(for: .milliseconds(10))
        }
        try await Task.sleep(for: .milliseconds(500))
        try run("add", "Oslo fjords", "--to", "Oslo", "--budget", "900")
        let output = try await watching.value
        #expect(output.status == 0, "\(output)")
        let parts = output.standardOutput.components(separatedBy: "Changed:\n")
        #expect(parts.count >= 2, "the watch did not list the trips again: \(output)")
        #expect(parts[0].hasPrefix("Watching the trips") && !parts[0].contains("Oslo fjords"))
        #expect(parts.last?.contains("Oslo fjords") == true)
    }

    @Test func addListsAndFiltersWithPredicates() throws {
        try run(
            "add", "Oslo fjords", "--to", "Oslo", "--start", "2025-08-01", "--budget", "1500",
            "--item", "Raincoat", "--item", "Boots", "--store", "memory:")  // a fresh store: only checks parsing
        try run()
        try run(
            "add", "Oslo fjords", "--to", "Oslo", "--start", "2025-08-01", "--budget", "1500",
            "--item", "Raincoat", "--item", "Boots")
        #expect(names(try run("list", "--city", "Lisbon")) == ["Lisbon weekend", "Lisbon food tour"])
        #expect(names(try run("list", "--done")) == ["Rome spring break"])
        #expect(
            names(try run("list", "--open", "--min-budget", "1000", "--sort", "budget")) == [
                "Kyoto in autumn", "Oslo fjords", "Alps hiking",
            ])
        #expect(names(try run("list", "--search", "Lisbon", "--max-budget", "500")) == ["Lisbon weekend"])
        #expect(names(try run("list", "--sort", "name", "--limit", "2")) == ["Alps hiking", "Kyoto in autumn"])
        let oslo = try run("list", "--city", "Oslo").standardOutput
        #expect(oslo.contains("Oslo fjords  Oslo         2025-08-01  1500.00      2"))
        #expect(try run("list", "--city", "Atlantis").standardOutput == "No trips match.\n")
    }

    @Test func searchIgnoresCaseAndDiacriticsAndRunsInTheStore() throws {
        try run()
        #expect(names(try run("list", "--search", "lisbon")) == ["Lisbon weekend", "Lisbon food tour"])
        #expect(names(try run("list", "--search", "LISBÓN FOOD")) == ["Lisbon food tour"])
        try run("rename", "Kyoto in autumn", "Kyōto in autumn")
        #expect(names(try run("list", "--search", "kyoto")) == ["Kyōto in autumn"])
        #expect(try run("list", "--search", "oslo").standardOutput == "No trips match.\n")
        let explained = try run("list", "--search", "Lisbon", "--explain").standardOutput
        #expect(explained.contains("nameKey.contains(\"lisbon\")"))
        #expect(explained.contains("predicate on models: no"))
    }

    @Test func explainShowsTheFiltersThatReachTheStore() throws {
        try run()
        let explained = try run("list", "--city", "Lisbon", "--min-budget", "500", "--explain").standardOutput
        #expect(explained.contains("store query: Trip where (destination.city == \"Lisbon\""))
        #expect(explained.contains("budget >= 500.0"))
        #expect(explained.contains("predicate on models: no"))
        #expect(!explained.contains("Lisbon food tour"), "explain lists no trips")
    }

    @Test func completeRenameAndDelete() throws {
        try run()
        #expect(try run("complete", "Alps hiking").standardOutput == "Completed 'Alps hiking'.\n")
        #expect(names(try run("list", "--done")) == ["Rome spring break", "Alps hiking"])

        #expect(
            try run("rename", "Alps hiking", "Mont Blanc").standardOutput == "Renamed 'Alps hiking' to 'Mont Blanc'.\n")
        let clash = try run("rename", "Mont Blanc", "Kyoto in autumn", status: 1)
        #expect(clash.standardError == "trips: a trip named 'Kyoto in autumn' already exists. Choose another name\n")

        let deleted = try run("delete", "Lisbon weekend")
        #expect(deleted.standardOutput == "Deleted 'Lisbon weekend' and its 3 items.\n")
        let stats = try run("stats").standardOutput
        #expect(stats.contains("Trips: 4 (2 open, 2 done)"))
        #expect(stats.contains("Items to pack: 9 (8 kinds)"))
        #expect(stats.contains("Destinations: 4"), "deleting a trip keeps its destination (nullify)")
        #expect(stats.contains("Lisbon           1   600.00"))
    }

    @Test func packAddsItemsToATrip() throws {
        try run()
        #expect(
            try run("pack", "Kyoto in autumn", "Phrasebook", "--quantity", "2").standardOutput
                == "Packed 2 × 'Phrasebook' for 'Kyoto in autumn'.\n")
        let kyoto = try run("list", "--city", "Kyoto").standardOutput
        #expect(kyoto.contains("2400.00      4"))
    }

    @Test func statsSummarisesTheDemoTrips() throws {
        try run()
        let stats = try run("stats").standardOutput
        #expect(stats.contains("Trips: 5 (4 open, 1 done)"))
        #expect(stats.contains("Items to pack: 12 (11 kinds)"))
        #expect(stats.contains("Budget: 5450.00 in total, 4550.00 still open"))
        #expect(stats.contains("First open trip: Lisbon weekend on 2025-05-02"))
        #expect(stats.contains("Destinations: 4"))
    }

    @Test func commandsOnAMissingTripSayWhichName() throws {
        try run()
        for command in [["complete", "Atlantis"], ["delete", "Atlantis"], ["rename", "Atlantis", "Mu"]] {
            let output = try trips.run(command, in: directory.url)
            #expect(output.status == 1)
            #expect(
                output.standardError == "trips: there is no trip named 'Atlantis'. Run 'trips list' to see the names\n")
        }
    }

    // MARK: Stores and the environment

    @Test func theAppendLogKeepsTripsBetweenRuns() throws {
        let first = try run("--store", "log:trips-log?durability=everySave")
        #expect(first.standardOutput.hasPrefix("Added demo trips to log:trips-log?durability=everySave."))
        try run("--store", "log:trips-log", "rename", "Alps hiking", "Mont Blanc")
        let list = try run("list", "--sort", "name", "--store", "log:trips-log")
        #expect(
            names(list) == ["Kyoto in autumn", "Lisbon food tour", "Lisbon weekend", "Mont Blanc", "Rome spring break"])
        #expect(!FileManager.default.fileExists(atPath: directory.path("trips.json")))
    }

    @Test func theEnvironmentVariableOverridesStore() throws {
        let output = try run("--store", "jsn:broken", environment: ["MODELSTORE_URL": "memory:"])
        #expect(output.standardOutput.hasPrefix("Added demo trips to memory:."))
        #expect(!FileManager.default.fileExists(atPath: directory.path("trips.json")))
    }

    @Test func aBadStoreURLNamesItAndTheRegisteredSchemes() throws {
        let output = try run("--store", "jsn:trips.json", status: 1)
        #expect(
            output.standardError.hasPrefix(
                "trips: the store URL 'jsn:trips.json' uses the scheme 'jsn:', which is not registered.\nRegistered schemes: "
            ))
        #expect(output.standardError.contains("'memory:[NAME]'"))
        #expect(output.standardOutput.isEmpty)
    }

    @Test func aBadURLInTheEnvironmentSaysSo() throws {
        let output = try run("list", environment: ["MODELSTORE_URL": "memory:?fast=1"], status: 1)
        #expect(output.standardError.contains("(set by the environment variable 'MODELSTORE_URL')"))
    }

    // MARK: Bad command lines

    @Test(arguments: [
        (["fly"], "trips: unknown command 'fly'"),
        (["--fast"], "trips: 'trips' has no option '--fast'"),
        (["list", "--colour", "red"], "trips: 'list' has no option '--colour'"),
        (["list", "--open", "--done"], "trips: 'list' takes '--open' or '--done', not both"),
        (
            ["list", "--sort", "price"],
            "trips: the option '--sort' of 'list' expects one of name, start, budget, not 'price'"
        ),
        (["add"], "trips: 'add' needs NAME"),
        (["add", "  "], "trips: a trip needs a name that is not blank"),
        (
            ["add", "X", "--start", "2025-02-30"],
            "trips: the option '--start' of 'add' expects a date like 2025-06-01, not '2025-02-30'"
        ),
        (
            ["add", "X", "--budget", "-3"],
            "trips: the option '--budget' of 'add' expects an amount like 1200, not '-3'"
        ),
        (["add", "X", "--to"], "trips: the option '--to' of 'add' needs a value"),
        (["rename", "A"], "trips: 'rename' needs NEW NAME"),
        (["delete", "A", "B"], "trips: 'delete' does not take 'B' (quote names that contain spaces)"),
        (["stats", "--open"], "trips: 'stats' has no option '--open'"),
        (["list", "--store"], "trips: the option '--store' of 'trips' needs a value"),
    ])
    func badCommandLinesExitWithStatusTwoAndAHint(arguments: [String], message: String) throws {
        let output = try trips.run(arguments, in: directory.url)
        #expect(output.status == 2)
        #expect(output.standardError == message + "\nRun 'trips help' for usage.\n")
        #expect(
            !FileManager.default.fileExists(atPath: directory.path("trips.json")), "a bad command line opens no store")
    }

    @Test func helpListsTheCommandsAndTheStores() throws {
        let help = try run("help").standardOutput
        for text in [
            "list [--city CITY]", "--explain", "add NAME", "complete NAME", "rename OLD NEW", "delete NAME", "stats",
            "memory:[NAME]", "MODELSTORE_URL",
        ] {
            #expect(help.contains(text))
        }
        #expect(try run("--help").standardOutput == help)
    }

    @Test func aNameStartingWithDashesFollowsADoubleDash() throws {
        let output = try run("--store", "memory:", "add", "--", "--weird--")
        #expect(output.standardOutput.hasPrefix("Added '--weird--'"))
    }
}
