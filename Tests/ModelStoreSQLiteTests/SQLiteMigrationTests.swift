import Foundation
import ModelStore
import ModelStoreConformance
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// Migrations of an SQLite store: a failure at each step of the migration's commit inside the
/// open's transaction, a failed stage, and a dry run.
struct SQLiteMigrationTests {
    typealias Fixtures = MigrationFixtures

    /// Stops a migration's commit at a step.
    struct SimulatedFailure: Error {}

    static func configuration(_ directory: TemporaryDirectory) -> SQLiteStoreConfiguration {
        SQLiteStoreConfiguration(url: directory.file("store.sqlite"))
    }

    static func subject(_ directory: TemporaryDirectory) -> Fixtures.Subject {
        Fixtures.Subject(
            configuration: configuration(directory), directory: directory.url,
            storedVersion: { try SQLiteStore.storedSchema(at: directory.file("store.sqlite")).version })
    }

    @Test(arguments: SQLiteMigrationStorage.Step.allCases)
    func aFailureInsideTheCommitLeavesTheOldStore(after step: SQLiteMigrationStorage.Step) throws {
        let directory = try TemporaryDirectory()
        let path = Self.configuration(directory).path
        try Fixtures.verifyInterruptedMigration(
            Self.subject(directory), expecting: .old,
            arm: {
                SQLiteMigrationStorage.stepHooks.withLock { $0[path] = { if $0 == step { throw SimulatedFailure() } } }
            },
            disarm: { SQLiteMigrationStorage.stepHooks.withLock { _ = $0.removeValue(forKey: path) } })
    }

    @Test func aFailedStageLeavesEveryFileByteForByte() throws {
        let directory = try TemporaryDirectory()
        try Fixtures.verifyFailedStageChangesNothing(Self.subject(directory))
    }

    @Test func aDryRunReportsTheChangesAndWritesNothing() throws {
        let directory = try TemporaryDirectory()
        try Fixtures.verifyDryRun(Self.subject(directory))
    }
}
