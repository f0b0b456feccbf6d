import Foundation
import ModelStore
import ModelStoreConformance
import Testing

/// The suite fails every deliberately broken adapter, with a message that names the bug's symptom.
struct BrokenAdapterTests {
    /// Runs every case; returns the failures.
    static func failures(of adapter: ConformanceAdapter) -> [ConformanceFailure] {
        ConformanceSuite.cases(for: adapter).compactMap { testCase in
            do {
                _ = try testCase.run()
                return nil
            } catch let failure as ConformanceFailure {
                return failure
            } catch {
                return ConformanceFailure(caseID: testCase.id, message: "run() threw a \(type(of: error)): \(error)")
            }
        }
    }

    @Test(arguments: Bug.allCases)
    func suiteFailsTheBrokenAdapter(_ bug: Bug) {
        let failures = Self.failures(of: bug.adapter)
        #expect(!failures.isEmpty, "the suite passed a store that \(bug)")
        let naming = failures.filter { $0.description.contains(bug.symptom) }
        #expect(
            !naming.isEmpty,
            """
            no failure names the symptom '\(bug.symptom)'; the failures were:
            \(failures.map(\.description).joined(separator: "\n"))
            """)
        #expect(failures.allSatisfy { $0.caseID.contains(".") }, "a failure does not name its case")
    }
}
