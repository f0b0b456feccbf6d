import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// Several OS processes on one database: worker processes (`modelstore-pg-worker`) increment
/// shared counters by read-modify-write saves; afterwards every counter equals the increments the
/// workers were told succeeded, so no update was lost.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLMultiProcessTests {
    /// The worker built beside the test bundle.
    private var worker: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("modelstore-pg-worker")
    }

    /// Runs workers at once and returns each one's report line.
    private func runWorkers(_ count: Int, arguments: [String]) throws -> [String] {
        var processes: [(Process, Pipe)] = []
        for _ in 0..<count {
            let process = Process()
            process.executableURL = worker
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            processes.append((process, output))
        }
        return try processes.map { process, output in
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            try #require(process.terminationStatus == 0, "a worker exited with \(process.terminationStatus)")
            return String(decoding: data, as: UTF8.self)
        }
    }

    private func field(_ name: String, in line: String) -> String? {
        line.split(separator: " ").first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    @Test func workerProcessesIncrementingSharedCountersLoseNoUpdate() throws {
        #expect(FileManager.default.isExecutableFile(atPath: worker.path), "no worker at \(worker.path)")
        let namespace = PostgreSQLServer.freshNamespace("mp")
        let container = try ModelContainer(
            for: Counter.schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
        let context = ModelContext(container)
        for index in 0..<3 { context.insert(Counter(name: "c\(index)")) }
        try context.save()

        let reports = try runWorkers(4, arguments: [namespace, "25", "3", "60", "2"])
        var acknowledged = [0, 0, 0]
        for report in reports {
            let perCounter = try #require(field("perCounter", in: report), "report: \(report)")
            for (index, count) in perCounter.split(separator: ",").enumerated() {
                acknowledged[index] += Int(count) ?? 0
            }
        }
        #expect(acknowledged.reduce(0, +) == 4 * 2 * 25)
        let stored = try ModelContext(container).fetch(FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.name)]))
        #expect(stored.map(\.value) == acknowledged)
    }
}
