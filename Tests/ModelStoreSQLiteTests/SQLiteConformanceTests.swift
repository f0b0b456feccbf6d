import Foundation
import ModelStore
import ModelStoreConformance
import ModelStoreSQLite
import Testing

extension ConformanceAdapter {
    /// The SQLite store on a file in the case's directory, as an app would configure it.
    static let sqlite = ConformanceAdapter(
        name: "SQLiteStore",
        capabilities: [.durability, .erase, .externalStorage, .multiProcessAccess, .migrations, .customMigrationStages]
    ) { directory in
        SQLiteStoreConfiguration(url: directory.appendingPathComponent("store.sqlite"))
    }
}

/// The full conformance suite on `SQLiteStore`.
///
/// The store has every capability: batching, two-phase saves and history read from its type, the
/// rest declared. History is in the `modelstore_history` table, written in each save's transaction.
/// `.externalStorage` values of 16 KiB or more are files in `store.sqlite.external/` (`SQLiteExternalStorageTests` covers the folder).
/// Migrations, custom stages included, run through the core's `SchemaMigrationRunner`, inside the
/// open's transaction.
struct SQLiteConformanceTests {
    @Test(arguments: ConformanceSuite.cases(for: .sqlite))
    func conformance(_ testCase: ConformanceCase) throws {
        switch try testCase.run() {
        case .passed: break
        case .skipped(let reason): try Test.cancel(Comment(rawValue: reason))
        case .expectedFailure(let reason, let failure): withKnownIssue(Comment(rawValue: reason)) { throw failure }
        }
    }
}
