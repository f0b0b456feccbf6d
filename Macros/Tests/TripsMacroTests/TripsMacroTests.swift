import Foundation
import Testing

/// The Trips sample with its models in SwiftData's spelling (`trips-macro`) against the sample as
/// written by hand (`trips`): the same command lines, on every built-in store, print the same text
/// and end with the same status.
struct TripsMacroTests {
    /// A session with the sample, in the order a user would type it.
    static let session: [[String]] = [
        [],
        ["add", "Oslo fjords", "--to", "Oslo", "--start", "2025-09-01", "--budget", "1500", "--item", "Raincoat"],
        ["pack", "Oslo fjords", "Sweater", "--quantity", "2"],
        ["pack", "Lisbon weekend", "Passport"],
        ["complete", "Lisbon weekend"],
        ["rename", "Alps hiking", "Alps trek"],
        ["delete", "Kyoto in autumn"],
        ["list", "--city", "Lisbon"],
        ["list", "--open", "--sort", "budget"],
        ["list", "--search", "LISBON", "--min-budget", "500"],
        ["list", "--done", "--limit", "1"],
        ["stats"],
        ["add", "Oslo fjords", "--to", "Oslo"],
        ["pack", "No such trip", "Socks"],
        [],
    ]

    static let stores = ["memory:", "json:trips.json", "log:trips-log", "sqlite:trips.sqlite"]

    /// The directory the test bundle's build products are in, where both executables are built.
    private static var products: URL {
        URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    private struct Run: Equatable, CustomStringConvertible {
        let status: Int32
        let output: String
        let errors: String
        var description: String { "status \(status)\n\(output)\(errors)" }
    }

    private func run(_ program: String, _ arguments: [String], in directory: URL) throws -> Run {
        let process = Process()
        process.executableURL = Self.products.appending(path: program)
        process.arguments = arguments
        process.currentDirectoryURL = directory
        var environment = ProcessInfo.processInfo.environment
        environment["MODELSTORE_URL"] = nil
        process.environment = environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let reported = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, output: String(decoding: printed, as: UTF8.self),
            errors: String(decoding: reported, as: UTF8.self))
    }

    @Test(arguments: stores)
    func theSessionPrintsWhatTheHandWrittenSamplePrints(store: String) throws {
        let root = FileManager.default.temporaryDirectory.appending(path: "TripsMacroTests-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let (hand, macro) = (root.appending(path: "hand"), root.appending(path: "macro"))
        for directory in [hand, macro] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        var failures = 0
        for command in Self.session {
            let arguments = ["--store", store] + command
            let expected = try run("trips", arguments, in: hand)
            let actual = try run("trips-macro", arguments, in: macro)
            #expect(actual == expected, "trips \(arguments.joined(separator: " "))")
            if actual.status != 0 { failures += 1 }
        }
        // On a store that keeps what it saves, the session's two wrong commands fail, and only those:
        // the session did what it says. (`memory:` starts empty in every process.)
        if store != "memory:" { #expect(failures == 2) }
    }
}
