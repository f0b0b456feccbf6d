import BenchHarness
import Foundation

/// Runs every selected benchmark in its own child process and prints the report.
enum Parent {
    /// One benchmark to run.
    typealias Job = BenchmarkJob

    static func jobs(_ options: PGOptions) -> [Job] {
        let workloads = options.workloads.isEmpty ? Workload.allCases.map(\.rawValue) : options.workloads
        let systems = options.systems.isEmpty ? Systems.all.map(\.name) : options.systems
        return options.sizes.flatMap { n in
            workloads.flatMap { workload in systems.map { Job(workload: workload, system: $0, n: n) } }
        }
    }

    static func run(_ options: PGOptions, command: String) -> Int32 {
        var results: [BenchmarkResult] = []
        if !options.fromFiles.isEmpty {
            var latest: [String: BenchmarkResult] = [:]
            for file in options.fromFiles {
                guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                    FileHandle.standardError.write(Data("modelstore-pg-bench: cannot read '\(file)'\n".utf8))
                    return 66
                }
                for result in ChildProcess.parseAll(text) {
                    latest["\(result.workload)|\(result.system)|\(result.n)"] = result
                }
            }
            results = Array(latest.values)
        } else {
            let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
            let runner = RoundRunner(rounds: options.rounds, saveFile: options.saveFile)
            results = runner.run(jobs(options)) { job in
                if let system = Systems.named(job.system), let workload = Workload(rawValue: job.workload),
                    let reason = system.notApplicable(workload)
                {
                    return BenchmarkResult(
                        workload: job.workload, system: job.system, n: job.n, status: .notApplicable(reason))
                }
                return ChildProcess.run(
                    executable: executable,
                    arguments: options.childArguments(workload: job.workload, system: job.system, n: job.n),
                    timeout: options.childTimeout, workload: job.workload, system: job.system, n: job.n)
            }
        }
        if options.json {
            for result in PGReport.sorted(results) { print(result.jsonLine) }
        } else {
            print(PGReport.environment(command: command))
            print(PGReport.markdown(results))
        }
        let failed = results.filter { if case .failed = $0.status { true } else { false } }
        if !failed.isEmpty {
            FileHandle.standardError.write(Data("modelstore-pg-bench: \(failed.count) benchmark(s) failed\n".utf8))
            return 1
        }
        return 0
    }
}
