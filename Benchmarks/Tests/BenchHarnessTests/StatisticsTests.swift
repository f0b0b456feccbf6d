import Testing

@testable import BenchHarness

struct TimingSummaryTests {
    @Test func medianOfAnOddCountIsTheMiddleSample() throws {
        let summary = try #require(TimingSummary(seconds: [5, 1, 3]))
        #expect(summary.median == 3)
        #expect(summary.minimum == 1)
        #expect(summary.maximum == 5)
        #expect(summary.count == 3)
    }

    @Test func medianOfAnEvenCountIsTheMeanOfTheMiddlePair() throws {
        let summary = try #require(TimingSummary(seconds: [4, 1, 2, 3]))
        #expect(summary.median == 2.5)
    }

    @Test func p90UsesTheNearestRank() throws {
        let ten = try #require(TimingSummary(seconds: (1...10).map(Double.init)))
        #expect(ten.p90 == 9)
        let twenty = try #require(TimingSummary(seconds: (1...20).map(Double.init).reversed()))
        #expect(twenty.p90 == 18)
        let few = try #require(TimingSummary(seconds: [0.2, 0.1, 0.3]))
        #expect(few.p90 == 0.3)
    }

    @Test func noSamplesGiveNoSummary() {
        #expect(TimingSummary(seconds: []) == nil)
    }
}

struct RepetitionPolicyTests {
    @Test func runsTheMinimumThenStopsAtTheBudget() {
        let policy = RepetitionPolicy(minimum: 3, maximum: 10, timeBudget: 1)
        #expect(policy.wantsMore(after: []))
        #expect(policy.wantsMore(after: [0.6, 0.6]))
        #expect(!policy.wantsMore(after: [0.6, 0.6, 0.6]))
        #expect(policy.wantsMore(after: [0.1, 0.1, 0.1]))
    }

    @Test func neverExceedsTheMaximum() {
        let policy = RepetitionPolicy(minimum: 1, maximum: 4, timeBudget: 100)
        #expect(!policy.wantsMore(after: [0.001, 0.001, 0.001, 0.001]))
    }

    @Test func theWallBudgetEndsBenchmarksWithExpensiveSetUpAfterTheMinimum() {
        var policy = RepetitionPolicy(minimum: 3, maximum: 200, timeBudget: 2)
        policy.wallBudget = 60
        #expect(policy.wantsMore(after: [0.001, 0.001, 0.001], elapsed: 59))
        #expect(!policy.wantsMore(after: [0.001, 0.001, 0.001], elapsed: 61))
        #expect(policy.wantsMore(after: [0.001, 0.001], elapsed: 61))
    }

    @Test func theCapEndsSlowBenchmarksBeforeTheMinimumButAfterOneRepetition() {
        let policy = RepetitionPolicy(minimum: 5, maximum: 10, timeBudget: 1, timeCap: 30)
        #expect(policy.wantsMore(after: []))
        #expect(!policy.wantsMore(after: [40]))
        #expect(policy.wantsMore(after: [10, 10]))
        #expect(!policy.wantsMore(after: [10, 10, 10]))
    }
}

struct ProcessMemoryTests {
    @Test func parsesKilobyteFieldsWithTabsAndSpaces() {
        let status = "Name:\tbench\nVmHWM:\t  123456 kB\nVmRSS:\t    2148 kB\n"
        #expect(ProcessMemory.parseStatusField("VmHWM", in: status) == 123_456)
        #expect(ProcessMemory.parseStatusField("VmRSS", in: status) == 2_148)
        #expect(ProcessMemory.parseStatusField("VmSwap", in: status) == nil)
    }

    #if os(Linux)
        @Test func resettingThePeakBringsItBackBelowAnEarlierSpike() throws {
            // A 256 MiB spike, touched page by page, then freed.
            do {
                let spike = [UInt8](repeating: 1, count: 256 << 20)
                #expect(spike[spike.count - 1] == 1)
            }
            let before = ProcessMemory.peakResidentBytes()
            #expect(ProcessMemory.resetPeak())
            #expect(ProcessMemory.peakResidentBytes() < before - (128 << 20))
        }
    #endif

    @Test func thisProcessHasAPeakAtLeastAsLargeAsItsCurrentSize() throws {
        let current = try #require(ProcessMemory.currentResidentBytes())
        #expect(current > 0)
        #expect(ProcessMemory.peakResidentBytes() >= current)
    }
}

/// `--rounds`: one result from the same benchmark run in several child processes.
struct RoundsTests {
    private func round(_ samples: [Double], peak: Int) -> BenchmarkResult {
        var result = BenchmarkResult(
            workload: "fetch-indexed", system: "jsonfile", n: 10_000, status: .measured,
            timing: TimingSummary(seconds: samples))
        result.peakResidentBytes = peak
        return result
    }

    @Test func theMedianIsTheMedianOfTheRoundsMediansAndTheMemoryIsThatRounds() throws {
        let combined = BenchmarkResult.combiningRounds([
            round([3, 3.5, 2.5], peak: 30), round([1, 1.5, 0.5], peak: 10), round([2, 9, 0.1], peak: 20),
        ])
        let timing = try #require(combined.timing)
        #expect(timing.median == 2)
        #expect(timing.count == 9)
        #expect(timing.minimum == 0.1 && timing.maximum == 9)
        #expect(timing.p90 == 9, "the 90th percentile of the median round")
        #expect(combined.peakResidentBytes == 20)
        #expect(combined.roundMedians == [3, 1, 2], "in the order the rounds ran")
    }

    @Test func anEvenCountTakesTheMeanOfTheMiddlePairAndTheFasterRoundsMemory() throws {
        let combined = BenchmarkResult.combiningRounds([
            round([4], peak: 40), round([1], peak: 10), round([3], peak: 30), round([2], peak: 20),
        ])
        #expect(combined.timing?.median == 2.5)
        #expect(combined.peakResidentBytes == 20)
    }

    @Test func oneRoundIsReturnedAsItIs() {
        let only = round([1, 2, 3], peak: 5)
        #expect(BenchmarkResult.combiningRounds([only]) == only)
        #expect(only.roundMedians == nil)
    }

    @Test func aFailedRoundIsTheResult() {
        var failed = round([1], peak: 1)
        failed.status = .failed("wrong result")
        let combined = BenchmarkResult.combiningRounds([round([1], peak: 1), failed, round([2], peak: 2)])
        #expect(combined.status == .failed("wrong result"))
        #expect(combined.median == nil)
    }

    @Test func theRoundsSurviveTheSavedLineAndThePageSaysSo() throws {
        let combined = BenchmarkResult.combiningRounds([round([3], peak: 3), round([1], peak: 1), round([2], peak: 2)])
        let parsed = try #require(ChildProcess.parseAll(try ChildProcess.resultLine(combined)).first)
        #expect(parsed == combined)
        let page = Page.section([combined], run: "Run: one.")
        #expect(page.contains("1 of these benchmarks ran in 3 rounds"))
        #expect(!Page.section([round([1], peak: 1)], run: "Run: one.").contains("rounds (`--rounds`)"))
    }
}
