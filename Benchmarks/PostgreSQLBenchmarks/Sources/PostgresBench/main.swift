import BenchHarness
import Foundation

// modelstore-pg-bench: ModelStore's PostgreSQL store against Fluent and raw PostgresNIO, on one
// throwaway server. See Benchmarks/PostgreSQLBenchmarks/README.md for the workloads and numbers.

#if DEBUG
    FileHandle.standardError.write(
        Data(
            """
            modelstore-pg-bench: refusing to report numbers from a debug build.
            Build in release mode: swift run -c release --package-path Benchmarks/PostgreSQLBenchmarks modelstore-pg-bench

            """.utf8))
    exit(2)
#else
    let arguments = Array(CommandLine.arguments.dropFirst())
    let options: PGOptions
    do {
        options = try PGOptions(arguments: arguments)
    } catch {
        FileHandle.standardError.write(Data("modelstore-pg-bench: \(error)\n\(PGOptions.usage)\n".utf8))
        exit(64)
    }

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
#endif

/// The child's one output line, handed from its task to the main thread.
final class LockedLine: @unchecked Sendable {
    // Safety: every access holds `lock`.
    private let lock = NSLock()
    private var line = ""
    func set(_ value: String) { lock.withLock { line = value } }
    func get() -> String { lock.withLock { line } }
}
