import Foundation

/// Runs one benchmark in a child process, so that its peak resident size is its own.
public enum ChildProcess {
    /// The prefix of the line on which a child prints its measurement.
    public static let resultPrefix = "MEASUREMENT "

    /// The line a child prints for its measurement.
    public static func resultLine(_ measurement: BenchmarkResult) throws -> String {
        let data = try JSONEncoder().encode(measurement)
        return resultPrefix + String(decoding: data, as: UTF8.self)
    }

    /// The measurement in a child's standard output, if it printed one.
    public static func parse(output: String) -> BenchmarkResult? {
        parseAll(output).first
    }

    /// Every measurement line in a text, such as a file written with `--save`, in order.
    public static func parseAll(_ text: String) -> [BenchmarkResult] {
        text.split(separator: "\n").compactMap { line in
            guard line.hasPrefix(resultPrefix) else { return nil }
            return try? JSONDecoder().decode(BenchmarkResult.self, from: Data(line.dropFirst(resultPrefix.count).utf8))
        }
    }

    /// Runs `executable` with `arguments` and returns the measurement it prints.
    ///
    /// The child's standard error passes through. A child that exits without a measurement,
    /// crashes or outlives `timeout` seconds (it is then terminated) yields a failed measurement.
    public static func run(
        executable: String, arguments: [String], timeout: Double, workload: String, system: String, n: Int
    ) -> BenchmarkResult {
        func failure(_ reason: String) -> BenchmarkResult {
            BenchmarkResult(workload: workload, system: system, n: n, status: .failed(reason))
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        do {
            try process.run()
        } catch {
            return failure("could not start '\(executable)': \(error)")
        }
        // Drain stdout while waiting, so a chatty child never blocks on a full pipe.
        let collected = Collected()
        let reader = Thread {
            collected.set(output.fileHandleForReading.readDataToEndOfFile())
        }
        reader.start()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            // Stop the child we started, by its process id. SIGKILL, because children started
            // through Foundation's Process may inherit a mask that blocks SIGTERM; the parent
            // removes the scratch files the child leaves.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            collected.wait()
            return failure("timed out after \(Int(timeout)) s (raise --timeout)")
        }
        process.waitUntilExit()
        collected.wait()
        let text = String(decoding: collected.data, as: UTF8.self)
        if let measurement = parse(output: text) { return measurement }
        if process.terminationReason == .uncaughtSignal {
            return failure("the child process died of signal \(process.terminationStatus)")
        }
        return failure("the child process exited with status \(process.terminationStatus) without a measurement")
    }

    /// The bytes a reader thread collected, handed over once.
    private final class Collected: @unchecked Sendable {
        // Safety: `data` is written once by the reader thread before it signals `done`, and read
        // only after `wait()` returns, so the semaphore orders every access.
        private var storage = Data()
        private let done = DispatchSemaphore(value: 0)

        func set(_ data: Data) {
            storage = data
            done.signal()
        }

        func wait() {
            done.wait()
            done.signal()
        }

        var data: Data { storage }
    }
}
