import BenchHarness
import Foundation

/// Runs every selected benchmark in its own child process and prints the report.
enum Parent {
    /// One benchmark to run.
    struct Job {
        let workload: String
        let system: String
        let n: Int
    }

    /// The benchmarks the options select, in report order.
    static func jobs(_ options: Options) -> [Job] {
        let workloads = options.workloads.isEmpty ? Catalog.workloads : options.workloads
        let batchVariants = Catalog.systems.filter(\.isModelStore).map { $0.name + Catalog.batchInsertSuffix }
        let allSystems = Catalog.systems.map(\.name) + batchVariants
        let systems = options.systems.isEmpty ? allSystems : options.systems
        var jobs: [Job] = []
        var sizes = options.sizes
        if !options.isSmoke && workloads.contains("update-one") && !sizes.contains(Catalog.updateReferenceSize) {
            sizes.insert(Catalog.updateReferenceSize, at: 0)
        }
        for n in sizes {
            for workload in workloads {
                if n == Catalog.updateReferenceSize && !options.sizes.contains(n) && workload != "update-one" {
                    continue
                }
                for system in systems {
                    if system.hasSuffix(Catalog.batchInsertSuffix) && workload != "insert" { continue }
                    jobs.append(Job(workload: workload, system: system, n: n))
                }
            }
        }
        return jobs
    }

    /// Prints the report of results saved by earlier runs; returns the exit status.
    static func report(_ options: Options) -> Int32 {
        var latest: [String: BenchmarkResult] = [:]
        var order: [String] = []
        for file in options.fromFiles {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                FileHandle.standardError.write(Data("modelstore-bench: cannot read '\(file)'\n".utf8))
                return 66
            }
            for result in ChildProcess.parseAll(text) {
                let key = "\(result.workload)|\(result.system)|\(result.n)"
                if latest.updateValue(result, forKey: key) == nil { order.append(key) }
            }
        }
        let results = order.compactMap { latest[$0] }
        if options.json {
            for result in Report.sorted(results) { print(result.jsonLine) }
        } else {
            print("Results from \(options.fromFiles.joined(separator: ", ")).\n")
            print(Report.markdown(results))
        }
        return 0
    }

    /// Runs the benchmarks; returns the process exit status (1 if any benchmark failed).
    static func run(_ options: Options) -> Int32 {
        if !options.fromFiles.isEmpty { return report(options) }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let scratch =
            options.scratchDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("modelstore-bench-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { if options.scratchDirectory == nil { try? FileManager.default.removeItem(atPath: scratch) } }

        let jobs = jobs(options)
        var results: [BenchmarkResult] = []
        let started = Date()
        for (index, job) in jobs.enumerated() {
            let measurement: BenchmarkResult
            if let system = Registry.system(named: job.system), let workload = Workload(rawValue: job.workload),
                let reason = system.notApplicable(workload)
            {
                measurement = BenchmarkResult(
                    workload: job.workload, system: job.system, n: job.n, status: .notApplicable(reason))
            } else {
                measurement = ChildProcess.run(
                    executable: executable,
                    arguments: options.childArguments(
                        workload: job.workload, system: job.system, n: job.n, scratch: scratch),
                    timeout: options.childTimeout, workload: job.workload, system: job.system, n: job.n)
            }
            results.append(measurement)
            if let saveFile = options.saveFile { append(measurement, to: saveFile) }
            progress(index + 1, of: jobs.count, measurement, since: started)
            if options.json { FileHandle.standardOutput.write(Data((measurement.jsonLine + "\n").utf8)) }
        }
        if !options.json {
            print(Environment.describe(command: CommandLine.arguments.dropFirst().joined(separator: " ")))
            print(Report.markdown(results))
        }
        return results.contains { if case .failed = $0.status { true } else { false } } ? 1 : 0
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

    private static func progress(_ done: Int, of total: Int, _ measurement: BenchmarkResult, since started: Date) {
        let outcome =
            switch measurement.status {
            case .measured: measurement.timing.map { "\(Report.seconds($0.median)) median, \($0.count) reps" } ?? ""
            case .notApplicable: "n/a"
            case .failed(let reason): "FAILED: \(reason)"
            }
        let line =
            "[\(done)/\(total) \(Int(Date().timeIntervalSince(started)))s] \(measurement.workload) "
            + "\(measurement.system) \(Report.size(measurement.n)): \(outcome)\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}

/// The machine and build a run happened on, for the report's header.
enum Environment {
    static func describe(command: String) -> String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "" }
            ?? "unknown CPU"
        let memory = ProcessInfo.processInfo.physicalMemory
        let load =
            (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?
            .split(separator: " ").prefix(3).joined(separator: " ") ?? "unknown"
        var date = ISO8601DateFormatter().string(from: Date())
        date = String(date.prefix(16)).replacingOccurrences(of: "T", with: " ") + " UTC"
        return """
            Machine: \(model), \(ProcessInfo.processInfo.activeProcessorCount) cores, \
            \(Report.bytes(Int(memory))) RAM, load average \(load) at the end of the run (shared machine).
            Run: \(date), release build, command `modelstore-bench \(command)`.

            """
    }
}
