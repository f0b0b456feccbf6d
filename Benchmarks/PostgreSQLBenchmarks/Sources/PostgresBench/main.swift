import BenchHarness
import Foundation

// modelstore-pg-bench: ModelStore's PostgreSQL store against Fluent and raw PostgresNIO, on one
// throwaway server. See Benchmarks/PostgreSQLBenchmarks/README.md for the workloads and numbers.

let arguments = Array(CommandLine.arguments.dropFirst())
let options: PGOptions
do {
    options = try PGOptions(arguments: arguments)
} catch {
    FileHandle.standardError.write(Data("modelstore-pg-bench: \(error)\n\(PGOptions.usage)\n".utf8))
    exit(64)
}

// A debug build may run the smoke size (CI builds it in debug: a cold release build of Fluent and
// PostgresNIO costs ~30 min), which checks every result; its numbers are not to be quoted. Full
// runs refuse a debug build. Children are started by a parent that passed this check.
#if DEBUG
    if case .run = options.mode, !options.isSmoke, options.fromFiles.isEmpty {
        FileHandle.standardError.write(
            Data(
                """
                modelstore-pg-bench: refusing to report numbers from a debug build (only --smoke runs in debug, \
                to check results; its timings are not to be quoted).
                Build in release mode: swift run -c release --package-path Benchmarks/PostgreSQLBenchmarks modelstore-pg-bench

                """.utf8))
        exit(2)
    }
#endif

switch options.mode {
case .help:
    print(PGOptions.usage)
case .list:
    print("workloads: " + Workload.allCases.map(\.rawValue).joined(separator: ", "))
    for system in Systems.all { print("\(system.name): \(system.summary)") }
case .child(let workload, let system, let n):
    // The benchmark runs in a task of its own, off the main thread, so every system is awaited the
    // same way; the main thread waits for it.
    let done = DispatchSemaphore(value: 0)
    let line = LockedLine()
    Task.detached {
        let result = await Child.run(workload: workload, system: system, n: n, options: options)
        line.set((try? ChildProcess.resultLine(result)) ?? "")
        done.signal()
    }
    done.wait()
    print(line.get())
case .run:
    exit(Parent.run(options, command: arguments.joined(separator: " ")))
}

/// The child's one output line, handed from its task to the main thread.
final class LockedLine: @unchecked Sendable {
    // Safety: every access holds `lock`.
    private let lock = NSLock()
    private var line = ""
    func set(_ value: String) { lock.withLock { line = value } }
    func get() -> String { lock.withLock { line } }
}
