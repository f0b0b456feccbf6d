import BenchHarness
import Foundation

// modelstore-sync-bench: the sync engine's initial sync and incremental rounds, SQLite to SQLite and
// SQLite to PostgreSQL side by side in one run, against the goals of issue 42. Each benchmark runs
// in a child process of its own, so its peak resident size is its own.
//
//   scripts/postgres.sh run -- swift run -c release --package-path Benchmarks/PostgreSQLBenchmarks \
//       modelstore-sync-bench [--sizes 10000,100000] [--systems sqlite-to-sqlite,sqlite-to-postgres]
//       [--workloads initial-pull,...] [--changes 1000] [--min-reps 3] [--max-reps 20] [--json]
// (--help says what each does).

let arguments = Array(CommandLine.arguments.dropFirst())
let options: SyncOptions
do {
    options = try SyncOptions(arguments: arguments)
} catch {
    FileHandle.standardError.write(Data("modelstore-sync-bench: \(error)\n\(SyncOptions.usage)\n".utf8))
    exit(64)
}
if options.help {
    print(SyncOptions.usage)
    exit(0)
}

let changes = options.changes
let smoke = options.isSmoke
let policy = RepetitionPolicy(
    minimum: options.minimumRepetitions ?? (smoke ? 1 : 3),
    maximum: options.maximumRepetitions ?? (smoke ? 2 : 20), timeBudget: 2)

#if DEBUG
    if options.child == nil && !smoke {
        FileHandle.standardError.write(
            Data("modelstore-sync-bench: numbers come from a release build only (swift run -c release …)\n".utf8))
        exit(2)
    }
#endif

if let child = options.child {
    let done = DispatchSemaphore(value: 0)
    let line = ResultLine()
    let workloadName = child.workload
    let systemName = child.system
    let n = child.n
    Task.detached {
        var result = BenchmarkResult(workload: workloadName, system: systemName, n: n, status: .failed("not run"))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "modelstore-sync-bench-\(ProcessInfo.processInfo.processIdentifier)")
        do {
            guard let workload = SyncWorkload(rawValue: workloadName), let system = SyncSystem(rawValue: systemName)
            else { throw WrongResult("unknown workload '\(workloadName)' or system '\(systemName)'") }
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let trial = SyncTrial(workload: workload, system: system, n: n, changes: changes, directory: directory)
            let measured = try await trial.measure(policy)
            result.timing = TimingSummary(seconds: measured.samples)
            result.timedPeakResidentBytes = measured.timedPeak
            result.timedStartResidentBytes = measured.timedPeak - measured.timedPeakGrowth
            result.status = .measured
        } catch {
            result.status = .failed(String(describing: error))
        }
        try? FileManager.default.removeItem(at: directory)
        do { try await SyncSystem.removeLeftovers() } catch {
            let message = "modelstore-sync-bench: namespaces left on the server: \(error)\n"
            FileHandle.standardError.write(Data(message.utf8))
        }
        result.peakResidentBytes = ProcessMemory.peakResidentBytes()
        line.set((try? ChildProcess.resultLine(result)) ?? "")
        done.signal()
    }
    done.wait()
    print(line.get())
    exit(0)
}

let sizes = options.sizes
let systems = options.systems
let workloads = options.workloads
let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
var results: [BenchmarkResult] = []
for workload in workloads {
    for n in sizes {
        for system in systems {
            var childArguments = ["--child", workload, system, "\(n)", "--changes", "\(min(changes, n))"]
            childArguments += ["--min-reps", "\(policy.minimum)", "--max-reps", "\(policy.maximum)"]
            let result = ChildProcess.run(
                executable: executable, arguments: childArguments, timeout: 1800, workload: workload, system: system,
                n: n)
            results.append(result)
            if options.json { print(result.jsonLine) }
            FileHandle.standardError.write(Data("\(workload) \(system) \(n): \(result.status)\n".utf8))
        }
    }
}
print(SyncReport(results: results, changes: min(changes, sizes.min() ?? changes)).markdown)
let failed = results.filter { if case .failed = $0.status { true } else { false } }
exit(failed.isEmpty ? 0 : 1)

/// The child's one output line, handed from its task to the main thread.
final class ResultLine: @unchecked Sendable {
    // Safety: every access holds `lock`.
    private let lock = NSLock()
    private var line = ""
    func set(_ value: String) { lock.withLock { line = value } }
    func get() -> String { lock.withLock { line } }
}
