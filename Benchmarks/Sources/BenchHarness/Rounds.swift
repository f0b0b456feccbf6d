import Foundation

/// One benchmark of a run: a workload on a system at a size.
public struct BenchmarkJob: Sendable, Hashable {
    /// The workload's name (`fetch-unique`).
    public let workload: String
    /// The system's name (`sqlite`).
    public let system: String
    /// The number of models the benchmark's data set holds.
    public let n: Int

    /// A job of `workload` on `system` at size `n`.
    public init(workload: String, system: String, n: Int) {
        self.workload = workload
        self.system = system
        self.n = n
    }
}

/// Runs a list of benchmarks in one or more rounds (`--rounds`), the loop `modelstore-bench` and
/// `modelstore-pg-bench` share.
///
/// Each round is a pass over the whole list, so the runs of one benchmark are minutes apart and the
/// systems a goal compares alternate within each pass; each job's result is the median of its rounds'
/// medians (``BenchmarkResult/combiningRounds(_:)``). With a results file, every round's measurement
/// is appended as it arrives and, after the last round, the combined result, which replaces the
/// rounds' for `--from` (the latest result of a benchmark wins there); a run stopped early leaves its
/// last complete round.
public struct RoundRunner {
    /// How many passes over the list (at least 1).
    public var rounds: Int
    /// The file each result is appended to as it arrives (`--save`), if any.
    public var saveFile: String?
    /// Where the progress lines go (one a measurement); standard error unless replaced.
    public var progress: (String) -> Void = { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }

    /// A runner of `rounds` passes that appends its results to `saveFile`, if given.
    public init(rounds: Int, saveFile: String?) {
        precondition(rounds >= 1, "a run has at least one round")
        self.rounds = rounds
        self.saveFile = saveFile
    }

    /// Measures every job once a round, in list order, and returns one result a job, in the same order.
    ///
    /// `measure` runs one job (as a rule in a child process of its own) and returns its result;
    /// `finished` is called with each job's final result as it is known, during the last round.
    public func run(
        _ jobs: [BenchmarkJob], measure: (BenchmarkJob) -> BenchmarkResult,
        finished: (BenchmarkResult) -> Void = { _ in }
    ) -> [BenchmarkResult] {
        var measured = Array(repeating: [BenchmarkResult](), count: jobs.count)
        let started = Date()
        for round in 0..<rounds {
            let isLast = round == rounds - 1
            for (index, job) in jobs.enumerated() {
                let measurement = measure(job)
                measured[index].append(measurement)
                let result = isLast ? BenchmarkResult.combiningRounds(measured[index]) : nil
                if let saveFile {
                    ResultsFile.append(measurement, to: saveFile)
                    if let result, rounds > 1 { ResultsFile.append(result, to: saveFile) }
                }
                progress(
                    Self.progressLine(
                        round * jobs.count + index + 1, of: jobs.count * rounds, measurement, since: started))
                if let result { finished(result) }
            }
        }
        return measured.map(BenchmarkResult.combiningRounds)
    }

    /// `[done/total seconds] workload system size: outcome`, the line printed after each measurement.
    static func progressLine(_ done: Int, of total: Int, _ measurement: BenchmarkResult, since started: Date) -> String
    {
        let outcome =
            switch measurement.status {
            case .measured: measurement.timing.map { "\(Report.seconds($0.median)) median, \($0.count) reps" } ?? ""
            case .notApplicable: "n/a"
            case .failed(let reason): "FAILED: \(reason)"
            }
        return "[\(done)/\(total) \(Int(Date().timeIntervalSince(started)))s] \(measurement.workload) "
            + "\(measurement.system) \(Report.size(measurement.n)): \(outcome)"
    }
}

/// A results file (`--save`): one line a result (``ChildProcess/resultLine(_:)``), appended as results
/// arrive, which `--from` reads back.
public enum ResultsFile {
    /// Appends a result's line to `file`, creating the file if it is missing.
    public static func append(_ result: BenchmarkResult, to file: String) {
        guard let line = try? ChildProcess.resultLine(result) else { return }
        appendLine(line, to: file)
    }

    /// Appends a line to `file`, creating the file if it is missing.
    public static func appendLine(_ line: String, to file: String) {
        if !FileManager.default.fileExists(atPath: file) {
            _ = FileManager.default.createFile(atPath: file, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: file) else { return }
        handle.seekToEndOfFile()
        handle.write(Data((line + "\n").utf8))
        try? handle.close()
    }
}
