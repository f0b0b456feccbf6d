import Foundation
import Testing

/// The Trips sample on PostgreSQL: `trips-postgres` opens the store that `MODELSTORE_URL` names,
/// as `trips` does for the built-in stores, and a second run sees what the first saved.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct TripsOnPostgreSQLTests {
    /// The sample built beside the test bundle.
    private var trips: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("trips-postgres")
    }

    /// Runs `trips-postgres` on `url` and returns its exit status and output.
    private func run(_ arguments: [String], url: String) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = trips
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["MODELSTORE_URL"] = url
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func tripsRunsOnAPostgresURLAndASecondRunSeesTheFirstsTrips() throws {
        let base = try #require(PostgreSQLServer.url)
        let url = base + (base.contains("?") ? "&" : "?") + "namespace=" + PostgreSQLServer.freshNamespace("trips")
        let (added, addOutput) = try run(["add", "Porto", "--to", "Porto", "--budget", "900"], url: url)
        #expect(added == 0, "\(addOutput)")
        let (listed, list) = try run(["list", "--city", "Porto"], url: url)
        #expect(listed == 0, "\(list)")
        #expect(list.contains("Porto"), "\(list)")
        // The sample prints the store it opened, never the password in its URL.
        if let password = URLComponents(string: base)?.password, !password.isEmpty {
            #expect(!(addOutput + list).contains(password), "the sample printed the URL's password")
        }
    }
}
