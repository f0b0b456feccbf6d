import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreConformance
import Testing

extension ConformanceAdapter {
    /// The append log, with its default group commit, as an app would configure it.
    static let appendLog = ConformanceAdapter(
        name: "AppendLogStore",
        capabilities: [.batching, .durability, .erase],
        nativeFilters: Set(ConformanceFilterKind.allCases),
        expectedFailures: [
            // Issue 12 (core data-loss bugs, the lead's): the log decides what changed with ==, so a change to a
            // canonically equivalent string or from 0.0 to -0.0 is not written and is gone after reopening.
            // Remove this line when issue 12 is fixed; the suite fails the run if it stays after that.
            "persistence.equivalentValueChangesSurviveReopen":
                "issue 12: changes between values equal by == (equivalent spellings, -0.0) are not written to the log"
        ]
    ) { directory in
        AppendLogStoreConfiguration(directory: directory.appendingPathComponent("store.log"))
    }
}

/// The full conformance suite on `AppendLogStore`.
///
/// Not declared: history (the suite's history cases wait for a core history protocol; the store's
/// own history API is tested in `AppendLogHistoryTests`), migrations (the store matches properties
/// by name and `originalName` but does not run a plan's custom stages), multi-process access (one
/// writer at a time, by design) and external storage.
struct AppendLogConformanceTests {
    @Test(arguments: ConformanceSuite.cases(for: .appendLog))
    func conformance(_ testCase: ConformanceCase) throws {
        switch try testCase.run() {
        case .passed: break
        case .skipped(let reason): try Test.cancel(Comment(rawValue: reason))
        case .expectedFailure(let reason, let failure): withKnownIssue(Comment(rawValue: reason)) { throw failure }
        }
    }
}
