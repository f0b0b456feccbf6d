import Foundation
import ModelStoreConformance
import Testing

/// The suite never traps on a store's wrong answer: every case of every mutant runs to a verdict.
///
/// A trap would end the whole test process instead of failing one case, so this runs each mutant
/// through *every* case, not only until the first failure. It takes minutes, so it runs only from
/// `scripts/mutation-test.sh --every-case` (which sets `MODELSTORE_EVERY_CASE=1`).
struct MutantsNeverTrapTheSuite {
    static let enabled = ProcessInfo.processInfo.environment["MODELSTORE_EVERY_CASE"] == "1"

    @Test(.enabled(if: enabled, "runs from scripts/mutation-test.sh --every-case"))
    func everyCaseOfEveryMutantEndsInAVerdict() {
        var lines: [String] = []
        for mutation in MutationTests.selected {
            let adapter = MutationTests.adapter(mutation, durable: mutation.isDurable, shared: mutation.isShared)
            let cases = ConformanceSuite.cases(for: adapter)
            let failing = cases.filter { MutationTests.failure(of: $0) != nil }.count
            #expect(failing > 0, "no case fails the mutant '\(mutation)'")
            lines.append("  \(mutation): \(failing) of \(cases.count) cases fail")
        }
        print("every case of every mutant ran to a verdict, none trapped:\n" + lines.joined(separator: "\n"))
    }
}
