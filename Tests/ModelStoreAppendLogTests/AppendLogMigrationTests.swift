import Foundation
import ModelStore
import ModelStoreConformance
import ModelStoreTestSupport
import Testing

@testable import ModelStoreAppendLog

/// Migrations of an append log: a crash at each step of the migration's commit, a failed stage, and a dry run.
struct AppendLogMigrationTests {
    typealias Fixtures = MigrationFixtures

    /// Stops a migration's commit dead at a step, as a crash would: nothing is cleaned up.
    struct SimulatedCrash: Error {}

    static func configuration(_ directory: TemporaryDirectory) -> AppendLogStoreConfiguration {
        AppendLogStoreConfiguration(directory: directory.store)
    }

    static func subject(_ directory: TemporaryDirectory) -> Fixtures.Subject {
        Fixtures.Subject(
            configuration: configuration(directory), directory: directory.url,
            storedVersion: { try AppendLogStore.storedSchema(at: directory.store).version })
    }

    @Test(arguments: MigrationCommitStep.allCases)
    func aCrashDuringTheMigrationLeavesTheOldLogOrTheMigratedOne(after step: MigrationCommitStep) throws {
        let directory = try TemporaryDirectory()
        let path = directory.store.standardizedFileURL.path
        try Fixtures.verifyInterruptedMigration(
            Self.subject(directory), expecting: step == .wroteManifest ? .migrated : .old,
            arm: {
                AppendLogStore.migrationStepHooks.withLock { $0[path] = { if $0 == step { throw SimulatedCrash() } } }
            },
            disarm: { AppendLogStore.migrationStepHooks.withLock { _ = $0.removeValue(forKey: path) } })
    }

    @Test func aFailedStageLeavesEveryFileByteForByte() throws {
        let directory = try TemporaryDirectory()
        try Fixtures.verifyFailedStageChangesNothing(Self.subject(directory))
    }

    @Test func aDryRunReportsTheChangesAndWritesNothing() throws {
        let directory = try TemporaryDirectory()
        try Fixtures.verifyDryRun(Self.subject(directory))
    }

    @Test func aMigratedLogKeepsSavingAndReopening() throws {
        let directory = try TemporaryDirectory()
        try Fixtures.seed(Self.configuration(directory))
        do {
            let container = try Self.subject(directory).open(plan: Fixtures.Plan.self)
            let context = ModelContext(container)
            let note = Fixtures.V2.Note()
            note.heading = "four"
            note.body = "w x y z"
            note.words = 4
            context.insert(note)
            try context.save()
        }
        let container = try Self.subject(directory).open(plan: Fixtures.Plan.self)
        let notes = try ModelContext(container).fetch(
            FetchDescriptor<Fixtures.V2.Note>(sortBy: [SortDescriptor(\.heading)]))
        #expect(notes.map(\.heading) == ["four", "one", "three", "two"])
        #expect(notes.map(\.words) == [4, 3, 0, 2])
    }
}
