import BenchHarness
import Foundation
import Testing

/// The loop both benchmark tools run their lists with: rounds over the whole list, results saved as
/// they arrive, and one combined result a job.
struct RoundRunnerTests {
    let jobs = [
        BenchmarkJob(workload: "fetch-unique", system: "sqlite", n: 10_000),
        BenchmarkJob(workload: "fetch-unique", system: "sqlite-raw", n: 10_000),
    ]

    /// A measurement whose one sample is `seconds`.
    func measured(_ job: BenchmarkJob, _ seconds: Double) -> BenchmarkResult {
        BenchmarkResult(
            workload: job.workload, system: job.system, n: job.n, status: .measured,
            timing: TimingSummary(seconds: [seconds]))
    }

    /// A path for a results file of one test, in the temporary directory.
    static func resultsFile() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("round-runner-\(UUID().uuidString).jsonl").path
    }

    @Test func eachRoundIsAPassOverTheWholeListAndEachJobGetsTheMedianOfItsRounds() throws {
        var calls: [String] = []
        var lines: [String] = []
        var finished: [BenchmarkResult] = []
        // Round by round, the jobs take these times.
        let times: [[Double]] = [[3, 30], [1, 10], [2, 20]]
        var runner = RoundRunner(rounds: 3, saveFile: nil)
        runner.progress = { lines.append($0) }
        let results = runner.run(jobs) { job in
            let round = calls.count / 2
            calls.append(job.system)
            return measured(job, times[round][calls.count % 2 == 1 ? 0 : 1])
        } finished: {
            finished.append($0)
        }
        #expect(calls == ["sqlite", "sqlite-raw", "sqlite", "sqlite-raw", "sqlite", "sqlite-raw"])
        #expect(results.map(\.system) == ["sqlite", "sqlite-raw"])
        #expect(results.map { $0.timing?.median } == [2, 20])
        #expect(results.map(\.roundMedians) == [[3, 1, 2], [30, 10, 20]])
        #expect(finished == results, "each job's final result, as the last round reaches it")
        #expect(lines.count == 6)
        #expect(lines[0].hasPrefix("[1/6 ") && lines[0].contains("fetch-unique sqlite 10k: 3 s median"), "\(lines[0])")
        #expect(lines[5].hasPrefix("[6/6 ") && lines[5].contains("sqlite-raw"), "\(lines[5])")
    }

    @Test func theResultsFileHoldsEveryRoundAndThenTheCombinedResultWhichReadingBackKeeps() throws {
        let file = Self.resultsFile()
        defer { try? FileManager.default.removeItem(atPath: file) }
        var runner = RoundRunner(rounds: 2, saveFile: file)
        runner.progress = { _ in }
        var round = 0.0
        let results = runner.run(Array(jobs.prefix(1))) { job in
            round += 1
            return measured(job, round)
        }
        let saved = ChildProcess.parseAll(try String(contentsOfFile: file, encoding: .utf8))
        #expect(saved.map { $0.timing?.median } == [1, 2, 1.5], "two rounds, then their combination")
        #expect(saved.last == results.first)
        // Read back as `--from` does, the latest line of a benchmark wins: the combined one.
        var latest: [String: BenchmarkResult] = [:]
        for result in saved { latest["\(result.workload)|\(result.system)|\(result.n)"] = result }
        #expect(latest.count == 1 && latest.values.first?.roundMedians == [1, 2])
    }

    @Test func oneRoundSavesEachResultOnceAsItWasMeasured() throws {
        let file = Self.resultsFile()
        defer { try? FileManager.default.removeItem(atPath: file) }
        var runner = RoundRunner(rounds: 1, saveFile: file)
        runner.progress = { _ in }
        var failing = measured(jobs[1], 1)
        failing.status = .failed("wrong result")
        let results = runner.run(jobs) { job in job.system == "sqlite" ? measured(job, 4) : failing }
        let saved = ChildProcess.parseAll(try String(contentsOfFile: file, encoding: .utf8))
        #expect(saved == results)
        #expect(results[1].status == .failed("wrong result"))
        #expect(results[0].roundMedians == nil)
    }
}
