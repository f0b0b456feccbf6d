import BenchHarness
import Foundation

/// Runs every selected benchmark in its own child process and prints the report.
enum Parent {
    struct Job {
        let workload: String
        let system: String
        let n: Int
    }

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
            let jobs = jobs(options)
            let started = Date()
            for (index, job) in jobs.enumerated() {
                let result: BenchmarkResult
                if let system = Systems.named(job.system), let workload = Workload(rawValue: job.workload),
                    let reason = system.notApplicable(workload)
                {
                    result = BenchmarkResult(
                        workload: job.workload, system: job.system, n: job.n, status: .notApplicable(reason))
                } else {
                    result = ChildProcess.run(
                        executable: executable,
                        arguments: options.childArguments(workload: job.workload, system: job.system, n: job.n),
                        timeout: options.childTimeout, workload: job.workload, system: job.system, n: job.n)
                }
                if let file = options.saveFile { append(result, to: file) }
                progress(index + 1, of: jobs.count, result, since: started)
                results.append(result)
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

    private static func append(_ result: BenchmarkResult, to file: String) {
        guard let line = try? ChildProcess.resultLine(result) else { return }
        if !FileManager.default.fileExists(atPath: file) {
            _ = FileManager.default.createFile(atPath: file, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: file) else { return }
        handle.seekToEndOfFile()
        handle.write(Data((line + "\n").utf8))
        try? handle.close()
    }

    private static func progress(_ done: Int, of total: Int, _ result: BenchmarkResult, since started: Date) {
        let outcome =
            switch result.status {
            case .measured: result.timing.map { "\(Report.seconds($0.median)) median, \($0.count) reps" } ?? ""
            case .notApplicable: "n/a"
            case .failed(let reason): "FAILED: \(reason)"
            }
        let line =
            "[\(done)/\(total) \(Int(Date().timeIntervalSince(started)))s] \(result.workload) \(result.system) "
            + "\(Report.size(result.n)): \(outcome)\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}
