import Foundation
import ModelStore
import ModelStoreConformance
import ModelStorePostgreSQL
import Testing

extension ConformanceAdapter {
    /// The PostgreSQL store on the test server, one namespace per case directory.
    static let postgreSQL = ConformanceAdapter(
        name: "PostgreSQLStore",
        capabilities: [.durability, .erase, .multiProcessAccess, .migrations, .customMigrationStages],
        expectedFailures: [
            "persistence.corruptFilesFailOpenUntouched":
                "the store keeps its data on the server, not in files in the case's directory, so there is no "
                + "file to damage; PostgreSQLStoreTests checks that a namespace holding another program's tables "
                + "fails the open and is left untouched"
        ]
    ) { directory in
        try PostgreSQLServer.configuration(namespace: PostgreSQLServer.namespace(for: directory))
    }
}

/// The full conformance suite on `PostgreSQLStore`, against the real server.
///
/// Not declared: external storage (large values live in the database).
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLConformanceTests {
    @Test(arguments: ConformanceSuite.cases(for: .postgreSQL))
    func conformance(_ testCase: ConformanceCase) throws {
        switch try testCase.run() {
        case .passed: break
        case .skipped(let reason): try Test.cancel(Comment(rawValue: reason))
        case .expectedFailure(let reason, let failure): withKnownIssue(Comment(rawValue: reason)) { throw failure }
        }
    }
}
