import Foundation
import ModelStore
import ModelStoreConformance
import ModelStoreInMemory
import Testing

extension ConformanceAdapter {
    /// The reference in-memory adapter: everything but durability, migrations and
    /// multi-process access, and every predicate kind run natively.
    static let inMemory = ConformanceAdapter(
        name: "InMemoryStore",
        capabilities: [.erase]
    ) { _ in
        InMemoryStoreConfiguration()
    }
}

/// The full conformance suite on `InMemoryStore`.
struct InMemoryStoreConformanceTests {
    @Test(arguments: ConformanceSuite.cases(for: .inMemory))
    func conformance(_ testCase: ConformanceCase) throws {
        switch try testCase.run() {
        case .passed: break
        case .skipped(let reason): try Test.cancel(Comment(rawValue: reason))
        case .expectedFailure(let reason, let failure): withKnownIssue(Comment(rawValue: reason)) { throw failure }
        }
    }
}
