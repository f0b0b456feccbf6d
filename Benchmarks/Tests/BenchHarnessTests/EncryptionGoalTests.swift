import Testing

@testable import BenchHarness

/// The encryption goals: each encrypted store over its plaintext twin, writes within 1.1× and reads within 1.05×.
struct EncryptionGoalTests {
    private func result(_ workload: String, _ system: String, _ n: Int, _ median: Double) -> BenchmarkResult {
        BenchmarkResult(
            workload: workload, system: system, n: n, status: .measured, timing: TimingSummary(seconds: [median]))
    }

    private func row(_ results: [BenchmarkResult], _ workload: String, system: String) throws -> GoalResult {
        try #require(
            GoalEvaluator(results).evaluate().first {
                $0.goal.hasPrefix("encrypted at rest, \(workload) (") && $0.system == system
            })
    }

    @Test func twinsAreThePlaintextSystemsOfTheSameName() {
        #expect(Catalog.plaintextTwin(of: "sqlite-encrypted") == "sqlite")
        #expect(Catalog.plaintextTwin(of: "appendlog-none-encrypted") == "appendlog-none")
        #expect(Catalog.plaintextTwin(of: "jsonfile-encrypted-batch") == "jsonfile-batch")
        #expect(Catalog.plaintextTwin(of: "sqlite") == nil)
        #expect(Catalog.plaintextTwin(of: "grdb-file-encrypted") == nil, "not a system of the catalog")
    }

    /// A write at exactly 1.1× the plaintext time meets the goal; a little more misses it.
    @Test(arguments: [(1.10, GoalResult.Status.met), (1.11, .missed)])
    func aWriteMayTakeAtMostOnePointOneTimesThePlaintextTime(encrypted: Double, expected: GoalResult.Status) throws {
        let results = [
            result("update-one", "sqlite-encrypted", 10_000, encrypted), result("update-one", "sqlite", 10_000, 1.0),
        ]
        let goal = try row(results, "update-one", system: "sqlite-encrypted")
        #expect(goal.status == expected)
        #expect(goal.goal.contains("(a write): at most 1.1×"))
        #expect(goal.evidence.hasPrefix("vs sqlite at every N: 10k: "))
        #expect(goal.evidence.contains("(\(Report.factor(encrypted)))"))
    }

    /// A read at exactly 1.05× meets the goal; 1.06× (within the write factor) misses it.
    @Test(arguments: [(1.05, GoalResult.Status.met), (1.06, .missed)])
    func aReadMayTakeAtMostOnePointZeroFiveTimesThePlaintextTime(
        encrypted: Double, expected: GoalResult.Status
    ) throws {
        for workload in GoalEvaluator.encryptedReadWorkloads {
            let results = [
                result(workload, "appendlog-encrypted", 100_000, encrypted), result(workload, "appendlog", 100_000, 1),
            ]
            let goal = try row(results, workload, system: "appendlog-encrypted")
            #expect(goal.status == expected, "\(workload)")
            #expect(goal.goal.contains("(a read): at most 1.05×"))
        }
    }

    @Test func theGoalHoldsAtEveryNMeasuredTheUpdateReferenceSizeIncluded() throws {
        let results = [
            result("update-one", "appendlog-none-encrypted", 1_000, 0.0013),
            result("update-one", "appendlog-none", 1_000, 0.001),
            result("update-one", "appendlog-none-encrypted", 10_000, 0.001),
            result("update-one", "appendlog-none", 10_000, 0.001),
        ]
        let goal = try row(results, "update-one", system: "appendlog-none-encrypted")
        #expect(goal.status == .missed)
        #expect(goal.evidence.contains("1k: 1.3 ms vs 1 ms (1.3×) ✗"))
        #expect(goal.evidence.contains("10k: 1 ms vs 1 ms (1×)"))
    }

    @Test func theBatchInsertComparesWithThePlaintextBatchInsert() throws {
        let results = [
            result("insert", "jsonfile-encrypted-batch", 10_000, 1.0), result("insert", "jsonfile-batch", 10_000, 1.0),
            result("insert", "jsonfile", 10_000, 0.5), result("insert", "jsonfile-encrypted", 10_000, 0.5),
        ]
        let batch = try row(results, "insert", system: "jsonfile-encrypted-batch")
        #expect(batch.status == .met)
        #expect(batch.evidence.hasPrefix("vs jsonfile-batch at every N"))
        #expect(try row(results, "insert", system: "jsonfile-encrypted").status == .met)
    }

    @Test func aMissingOrFailedTwinIsNotMeasuredWithTheReason() throws {
        let alone = [result("fetch-unique", "sqlite-encrypted", 10_000, 0.001)]
        let missing = try row(alone, "fetch-unique", system: "sqlite-encrypted")
        #expect(missing.status == .notMeasured)
        #expect(missing.evidence.contains("fetch-unique/sqlite/10k was not run"))
        let failed = [
            BenchmarkResult(workload: "open", system: "sqlite-encrypted", n: 10_000, status: .failed("wrong count")),
            result("open", "sqlite", 10_000, 0.001),
        ]
        let broken = try row(failed, "open", system: "sqlite-encrypted")
        #expect(broken.status == .notMeasured)
        #expect(broken.evidence.contains("failed (wrong count)"))
        let neither = try row([result("open", "inmemory", 10_000, 1)], "delete-all", system: "sqlite-encrypted")
        #expect(neither.status == .notMeasured)
        #expect(neither.evidence == "neither delete-all/sqlite-encrypted nor delete-all/sqlite was run")
    }

    @Test func everyEncryptedSystemHasAGoalForEveryWorkloadThatSavesOpensOrFetches() {
        let goals = GoalEvaluator([result("insert", "inmemory", 10_000, 1)]).evaluate()
            .filter { $0.goal.hasPrefix("encrypted at rest") }
        let encrypted = ["jsonfile-encrypted", "appendlog-encrypted", "appendlog-none-encrypted", "sqlite-encrypted"]
        for system in encrypted {
            for workload in GoalEvaluator.encryptedWriteWorkloads + GoalEvaluator.encryptedReadWorkloads {
                #expect(
                    goals.contains { $0.system == system && $0.goal.hasPrefix("encrypted at rest, \(workload) (") },
                    "\(workload)/\(system)")
            }
            #expect(goals.contains { $0.system == system + Catalog.batchInsertSuffix })
        }
        #expect(goals.count == encrypted.count * 11)
    }
}
