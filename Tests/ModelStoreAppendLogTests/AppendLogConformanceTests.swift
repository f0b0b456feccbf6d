import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreConformance
import Testing

extension ConformanceAdapter {
    /// The append log, with its default group commit, as an app would configure it.
    static let appendLog = ConformanceAdapter(
        name: "AppendLogStore",
        capabilities: [.durability, .erase, .migrations, .customMigrationStages]
    ) { directory in
        AppendLogStoreConfiguration(directory: directory.appendingPathComponent("store.log"))
    }
}

/// The full conformance suite on `AppendLogStore`.
///
/// Not declared: multi-process access (one writer at a time, by design) and external storage. Migrations, custom stages included, run through the
/// core's `SchemaMigrationRunner`.
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
