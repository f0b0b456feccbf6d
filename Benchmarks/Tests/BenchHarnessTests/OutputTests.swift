import Foundation
import Testing

@testable import BenchHarness

struct BenchmarkResultTests {
    private func measured(median: Double, p90: Double) -> BenchmarkResult {
        var result = BenchmarkResult(workload: "fetch-scan", system: "inmemory", n: 10_000, status: .measured)
        result.timing = TimingSummary(seconds: [median, median, p90])
        result.peakResidentBytes = 1_048_576
        return result
    }

    @Test func jsonLineHasTheIssueKeysInOrder() throws {
        let line = measured(median: 0.25, p90: 0.5).jsonLine
        #expect(
            line
                == #"{"workload":"fetch-scan","system":"inmemory","n":10000,"median_s":0.25,"p90_s":0.5,"peak_rss_bytes":1048576}"#
        )
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object.count == 6)
    }

    @Test func jsonLineOfANotApplicableBenchmarkHasNullTimesAndTheReason() throws {
        let result = BenchmarkResult(
            workload: "open", system: "inmemory", n: 10, status: .notApplicable("nothing \"on\" disk"))
        let line = result.jsonLine
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["median_s"] is NSNull)
        #expect(object["peak_rss_bytes"] is NSNull)
        #expect(object["note"] as? String == "n/a: nothing \"on\" disk")
    }

    @Test func childResultLinesRoundTrip() throws {
        var result = measured(median: 0.001, p90: 0.002)
        result.baselineResidentBytes = 1_000
        result.rawDataBytes = 500
        result.path = "a | path"
        let line = try ChildProcess.resultLine(result)
        #expect(ChildProcess.parse(output: "noise\n" + line + "\nmore noise\n") == result)
        #expect(ChildProcess.parse(output: "no result here") == nil)
    }

    @Test func theTimedPeakFollowsTheIssueKeysAndRoundTrips() throws {
        var result = measured(median: 0.25, p90: 0.5)
        result.timedStartResidentBytes = 40_000_000
        result.timedPeakResidentBytes = 41_000_000
        #expect(result.timedPeakGrowthBytes == 1_000_000)
        #expect(
            result.jsonLine.hasSuffix(
                #""peak_rss_bytes":1048576,"timed_peak_rss_bytes":41000000,"timed_start_rss_bytes":40000000}"#))
        #expect(ChildProcess.parse(output: try ChildProcess.resultLine(result)) == result)
    }

    @Test func peakGrowthIsPeakMinusBaseline() {
        var result = measured(median: 1, p90: 1)
        result.baselineResidentBytes = 1_000_000
        #expect(result.peakGrowthBytes == 48_576)
    }
}

struct ChildProcessTests {
    @Test func aChildThatPrintsNoResultIsReportedAsFailed() {
        let result = ChildProcess.run(
            executable: "/bin/echo", arguments: ["hello"], timeout: 30,
            workload: "insert", system: "inmemory", n: 1)
        guard case .failed(let reason) = result.status else {
            Issue.record("expected a failure, got \(result.status)")
            return
        }
        #expect(reason.contains("without a measurement"))
    }

    @Test func aChildThatOutlivesTheTimeoutIsStoppedAndReported() {
        let result = ChildProcess.run(
            executable: "/bin/sleep", arguments: ["30"], timeout: 0.3,
            workload: "insert", system: "inmemory", n: 1)
        guard case .failed(let reason) = result.status else {
            Issue.record("expected a failure, got \(result.status)")
            return
        }
        #expect(reason.contains("timed out"))
    }

    @Test func aChildsResultLineIsParsedFromItsOutput() throws {
        let result = BenchmarkResult(workload: "insert", system: "grdb-memory", n: 7, status: .notApplicable("why"))
        let line = try ChildProcess.resultLine(result)
        let echoed = ChildProcess.run(
            executable: "/bin/echo", arguments: [line], timeout: 30,
            workload: "insert", system: "grdb-memory", n: 7)
        #expect(echoed == result)
    }
}

struct ReportTests {
    @Test func formatsTimesBytesSizesAndFactors() {
        #expect(Report.seconds(1.5) == "1.5 s")
        #expect(Report.seconds(1012.4) == "1012 s")
        #expect(Report.seconds(0.0123) == "12.3 ms")
        #expect(Report.seconds(0.000_045_6) == "45.6 µs")
        #expect(Report.seconds(0.000_000_2) == "200 ns")
        #expect(Report.bytes(512) == "512 B")
        #expect(Report.bytes(3 * 1_048_576) == "3.0 MiB")
        #expect(Report.size(10_000) == "10k")
        #expect(Report.size(1_000_000) == "1M")
        #expect(Report.size(1_500) == "1500")
        #expect(Report.factor(0.4567) == "0.457×")
        #expect(Report.factor(250) == "250×")
    }

    @Test func ordersRowsByWorkloadSizeAndCatalogSystem() {
        let rows = [
            BenchmarkResult(workload: "open", system: "grdb-file", n: 10, status: .measured),
            BenchmarkResult(workload: "insert", system: "array-baseline", n: 10, status: .measured),
            BenchmarkResult(workload: "insert", system: "inmemory-batch", n: 10, status: .measured),
            BenchmarkResult(workload: "insert", system: "inmemory", n: 10, status: .measured),
            BenchmarkResult(workload: "insert", system: "inmemory", n: 5, status: .measured),
        ]
        let order = Report.sorted(rows).map { "\($0.workload) \($0.system) \($0.n)" }
        #expect(
            order == [
                "insert inmemory 5", "insert inmemory 10", "insert inmemory-batch 10", "insert array-baseline 10",
                "open grdb-file 10",
            ])
    }

    @Test func ratiosUseTheGRDBSystemOfTheSameDurabilityClass() {
        #expect(Catalog.grdbPeer(of: "inmemory") == "grdb-memory")
        #expect(Catalog.grdbPeer(of: "inmemory-batch") == "grdb-memory")
        #expect(Catalog.grdbPeer(of: "appendlog-none") == "grdb-file")
        #expect(Catalog.grdbPeer(of: "appendlog") == "grdb-file-sync")
        #expect(Catalog.grdbPeer(of: "jsonfile") == "grdb-file-sync")
        #expect(Catalog.grdbPeer(of: "grdb-memory-batch") == nil)
    }
}
