import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreConformance
import ModelStoreTestSupport
import Testing

@testable import ModelStoreJSONFile

/// Migrations of a JSON file: a crash at each step of the migration's commit, a failed stage, and a dry run.
struct JSONFileMigrationTests {
    typealias Fixtures = MigrationFixtures

    static func configuration(_ directory: TemporaryDirectory) -> JSONFileStoreConfiguration {
        JSONFileStoreConfiguration(url: directory.file())
    }

    static func subject(_ directory: TemporaryDirectory) -> Fixtures.Subject {
        Fixtures.Subject(
            configuration: configuration(directory), directory: directory.url,
            storedVersion: { try JSONFileStore.storedSchema(at: directory.file()).version })
    }

    @Test(arguments: SaveStep.allCases)
    func aCrashDuringTheMigrationLeavesTheOldFileOrTheMigratedOne(after step: SaveStep) throws {
        let directory = try TemporaryDirectory()
        let path = Paths(directory.file()).document
        try Fixtures.verifyInterruptedMigration(
            Self.subject(directory), expecting: CrashTests.committedSteps.contains(step) ? .migrated : .old,
            arm: {
                JSONFileStore.migrationStepHooks.withLock { $0[path] = { if $0 == step { throw SimulatedCrash() } } }
            },
            disarm: { JSONFileStore.migrationStepHooks.withLock { _ = $0.removeValue(forKey: path) } })
    }

    @Test func aFailedStageLeavesEveryFileByteForByte() throws {
        let directory = try TemporaryDirectory()
        try Fixtures.verifyFailedStageChangesNothing(Self.subject(directory))
    }

    @Test func aDryRunReportsTheChangesAndWritesNothing() throws {
        let directory = try TemporaryDirectory()
        try Fixtures.verifyDryRun(Self.subject(directory))
    }

    @Test func aStoreAtTheCurrentVersionIsLeftAlone() throws {
        let directory = try TemporaryDirectory()
        try Fixtures.seed(Self.configuration(directory))
        _ = try Self.subject(directory).open(plan: Fixtures.Plan.self)
        let migrated = try Fixtures.files(in: directory.url)
        _ = try Self.subject(directory).open(plan: Fixtures.FailingPlan.self)
        #expect(try Fixtures.files(in: directory.url) == migrated)
    }
}
