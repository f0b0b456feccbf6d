import CustomAdapterSample
import Foundation
import ModelStoreConformance
import Testing

extension ConformanceAdapter {
    /// The sample's store: durable and erasable, which is all an adapter declares. The suite reads
    /// the rest from the store: it conforms to none of `DataStoreBatching`, `DataStoreTwoPhaseSaving`
    /// and `HistoryProviding`, and is not a querying store (it filters nothing itself and sorts only
    /// by numbers and dates, asking the context for the rest).
    static let entityFiles = ConformanceAdapter(
        name: "EntityFilesStore",
        capabilities: [.durability, .erase]
    ) { directory in
        EntityFilesConfiguration(directory: directory)
    }
}

/// The whole conformance suite on the sample adapter: the one test a third-party adapter writes.
struct EntityFilesConformanceTests {
    @Test(arguments: ConformanceSuite.cases(for: .entityFiles))
    func conformance(_ testCase: ConformanceCase) throws {
        switch try testCase.run() {
        case .passed: break
        case .skipped(let reason): try Test.cancel(Comment(rawValue: reason))
        case .expectedFailure(let reason, let failure): withKnownIssue(Comment(rawValue: reason)) { throw failure }
        }
    }
}
