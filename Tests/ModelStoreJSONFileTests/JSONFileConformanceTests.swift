import Foundation
import ModelStore
import ModelStoreConformance
import ModelStoreJSONFile
import Testing

extension ConformanceAdapter {
    /// The JSON file store, as an app would configure it (with a backup).
    static let jsonFile = ConformanceAdapter(
        name: "JSONFileStore",
        capabilities: [
            .durability, .erase, .externalStorage, .multiProcessAccess, .migrations, .customMigrationStages,
        ],
        expectedFailures: [
            "multiProcess.secondStoreSeesSaves": JSONFileConformanceTests.readsItsFileOnce,
            "multiProcess.everyKindOfChangeIsSeen": JSONFileConformanceTests.readsItsFileOnce,
        ]
    ) { directory in
        JSONFileStoreConfiguration(url: directory.appendingPathComponent("store.json"))
    }
}

/// The full conformance suite on `JSONFileStore`.
///
/// Every capability an adapter declares is declared; batching and history are read from the store,
/// which is not `DataStoreTwoPhaseSaving`. Migrations, custom stages included, run through the
/// core's `SchemaMigrationRunner`; history is kept in the file, bounded by `historyLimit`.
struct JSONFileConformanceTests {
    /// Why a second store does not see another's saves until it saves or reloads.
    static let readsItsFileOnce =
        "by design a JSON file store reads its file once and serves every fetch from memory; it takes in "
        + "another store's saves when it saves (reload-and-apply) or when reloadIfChanged() is called"

    @Test(arguments: ConformanceSuite.cases(for: .jsonFile))
    func conformance(_ testCase: ConformanceCase) throws {
        switch try testCase.run() {
        case .passed: break
        case .skipped(let reason): try Test.cancel(Comment(rawValue: reason))
        case .expectedFailure(let reason, let failure): withKnownIssue(Comment(rawValue: reason)) { throw failure }
        }
    }
}
