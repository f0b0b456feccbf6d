import BenchHarness
import Foundation

/// Runs every selected benchmark in its own child process and prints the report.
enum Parent {
    /// One benchmark to run.
    typealias Job = BenchmarkJob

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
        var runs: [String] = []
        for file in options.fromFiles {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                FileHandle.standardError.write(Data("modelstore-bench: cannot read '\(file)'\n".utf8))
                return 66
            }
            for described in Page.runDescriptions(in: text) where !runs.contains(described) { runs.append(described) }
            for result in ChildProcess.parseAll(text) {
                let key = "\(result.workload)|\(result.system)|\(result.n)"
                if latest.updateValue(result, forKey: key) == nil { order.append(key) }
            }
        }
        let results = order.compactMap { latest[$0] }
        if let page = options.pageFile {
            let described =
                runs.isEmpty
                ? "Results from \(options.fromFiles.joined(separator: ", ")) (the runs were not described)."
                : runs.joined(separator: "\n\n")
            return writePage(results, run: described, to: page)
        }
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

        let runner = RoundRunner(rounds: options.rounds, saveFile: options.saveFile)
        let results = runner.run(jobs(options)) { job in
            if let system = Registry.system(named: job.system), let workload = Workload(rawValue: job.workload),
                let reason = system.notApplicable(workload)
            {
                return BenchmarkResult(
                    workload: job.workload, system: job.system, n: job.n, status: .notApplicable(reason))
            }
            return ChildProcess.run(
                executable: executable,
                arguments: options.childArguments(
                    workload: job.workload, system: job.system, n: job.n, scratch: scratch),
                timeout: options.childTimeout, workload: job.workload, system: job.system, n: job.n)
        } finished: { result in
            if options.json { FileHandle.standardOutput.write(Data((result.jsonLine + "\n").utf8)) }
        }
        let run = Environment.describe(command: CommandLine.arguments.dropFirst().joined(separator: " "))
        if let saveFile = options.saveFile { ResultsFile.appendLine(runLine(run), to: saveFile) }
        if !options.json {
            print(run)
            print(Report.markdown(results))
        }
        if let page = options.pageFile {
            let status = writePage(results, run: run, to: page)
            if status != 0 { return status }
        }
        return results.contains { if case .failed = $0.status { true } else { false } } ? 1 : 0
    }

    /// Writes the page's generated part, its charts, and the run's results (to draw it again with
    /// `--from`); returns the exit status.
    static func writePage(_ results: [BenchmarkResult], run: String, to page: String) -> Int32 {
        let pageURL = URL(fileURLWithPath: page)
        let folder = pageURL.deletingLastPathComponent().appendingPathComponent(Page.folder)
        do {
            let text = try String(contentsOf: pageURL, encoding: .utf8)
            let updated = try Page.replacingSection(in: text, with: Page.section(results, run: run))
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for old in try FileManager.default.contentsOfDirectory(atPath: folder.path) where old.hasSuffix(".svg") {
                try FileManager.default.removeItem(at: folder.appendingPathComponent(old))
            }
            for chart in Page.charts(results) {
                try Data(chart.svg.utf8).write(to: folder.appendingPathComponent(chart.file))
            }
            var saved = run.components(separatedBy: "\n\n").filter { !$0.isEmpty }.map(runLine)
            saved += try Report.sorted(results).map(ChildProcess.resultLine)
            try Data((saved.joined(separator: "\n") + "\n").utf8).write(
                to: folder.appendingPathComponent(Page.resultsFile))
            try Data(updated.utf8).write(to: pageURL)
        } catch {
            FileHandle.standardError.write(Data("modelstore-bench: cannot write the page '\(page)': \(error)\n".utf8))
            return 73
        }
        FileHandle.standardError.write(Data("modelstore-bench: wrote \(page) and \(folder.path)/\n".utf8))
        return 0
    }

    /// The line of a results file that describes a run (the machine, the command, the load).
    private static func runLine(_ run: String) -> String {
        Page.runPrefix + String(decoding: (try? JSONEncoder().encode(run)) ?? Data("\"\"".utf8), as: UTF8.self)
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
            Run: \(date), \(BuildKind.description), command `modelstore-bench \(command)`.

            """
    }
}
