import Foundation
import ModelStore

/// Two stores open on the same directory at once.
///
/// The suite runs inside one process, so it stands in for two processes with two independent
/// stores (two containers, each opening the directory through the adapter's factory): they share
/// no memory, only the files, which is what a second process would share.
enum MultiProcessCases {
    static let all: [CaseDefinition] = [
        CaseDefinition(
            .multiProcess, "secondStoreSeesSaves",
            "A store opened before another store on the same directory saved sees that save on its next fetch.",
            requires: [.multiProcessAccess, .durability]
        ) { env in
            let first = try env.openContainer()
            let second = try env.openContainer()
            try env.seed(first)
            let counts = try env.count(Specimen.self, in: second)
            try env.checkEqual(
                counts, Seed.make().specimens.count,
                "a second store on the same directory did not see the first store's save")
        },
        CaseDefinition(
            .multiProcess, "interleavedSavesLoseNothing",
            "Two stores saving in turns lose no save: each save is stored, or fails with conflict or locked.",
            requires: [.multiProcessAccess, .durability]
        ) { env in
            let stores = [try env.openContainer(), try env.openContainer()]
            let contexts = stores.map { env.freshContext($0) }
            var saved: [Int] = []
            for sequence in 1...20 {
                let context = contexts[sequence % 2]
                let entry = LogEntry()
                entry.sequence = sequence
                context.insert(entry)
                do {
                    try context.save()
                    saved.append(sequence)
                } catch let error as DataStoreError where error.code == .conflict || error.code == .locked {
                    context.rollback()
                } catch {
                    throw env.failure(
                        "a save from one of two stores on the same directory failed with an unexpected error",
                        found: "\(error)")
                }
            }
            try env.check(
                saved.count >= 10, "most saves from two stores taking turns failed", found: "\(saved.count) of 20 saved"
            )
            env.releaseContexts()
            let stored = try env.session { container in
                try env.all(LogEntry.self, in: container, by: \.label).map(\.sequence).sorted()
            }
            try env.checkEqual(
                stored, saved,
                "two stores saving in turns on the same directory lost saves: a save that "
                    + "succeeded is not stored")
        },
        CaseDefinition(
            .multiProcess, "uniquenessAcrossStores",
            "A unique value saved through one store cannot be saved again through another.",
            requires: [.multiProcessAccess, .durability]
        ) { env in
            let first = try env.openContainer()
            let second = try env.openContainer()
            let later = env.freshContext(second)
            _ = try env.step("fetching through the second store") { try later.fetch(FetchDescriptor<Specimen>()) }
            let context = env.freshContext(first)
            context.insert(Seed.makeSpecimen(0))
            try env.step("saving 'S01' through the first store") { try context.save() }
            later.insert(Seed.makeSpecimen(1, code: "S01"))
            try env.expectError(
                [.uniqueConstraintViolation, .conflict], "saving another 'S01' through the second store",
                ifItSucceeds: "a second store on the same directory saved a duplicate 'S01': unique constraint "
                    + "not enforced across stores"
            ) { try later.save() }
        },
        CaseDefinition(
            .multiProcess, "migrationIsSeen",
            "A migration made through one store (a plan's custom stage included) is seen by a second store opened "
                + "on the same files at the new version while the first is open, which neither migrates again nor "
                + "asks for the plan, and a save through the second is stored at the new version.",
            requires: [.multiProcessAccess, .durability, .migrations, .customMigrationStages]
        ) { env in
            let configuration = try env.configuration()
            try env.step("saving notes at schema version 1.0.0") { try MigrationFixtures.seed(configuration) }
            let newSchema = Schema(versionedSchema: MigrationFixtures.V2.self)
            let migrating = try env.step("opening the store at 2.0.0 with the plan, which migrates it") {
                try ModelContainer(
                    for: newSchema, migrationPlan: MigrationFixtures.Plan.self, configurations: [configuration])
            }
            let second = try env.step("opening a second store on the same files at 2.0.0, with no plan") {
                try ModelContainer(for: newSchema, configurations: [try env.configuration()])
            }
            func notes(in container: ModelContainer) throws -> [String] {
                try ModelContext(container).fetch(
                    FetchDescriptor<MigrationFixtures.V2.Note>(sortBy: [SortDescriptor(\.heading)])
                ).map { "\($0.heading):\($0.words)" }
            }
            let expected = MigrationFixtures.seededNotes.sorted { $0.0 < $1.0 }.map {
                "\($0.0):\($0.1.split(separator: " ").count)"
            }
            try env.checkEqual(
                try env.step("fetching the notes through the migrating store") { try notes(in: migrating) }, expected,
                "the store that migrated does not hold the migrated notes (headings and word counts)")
            try env.checkEqual(
                try env.step("fetching the notes through the second store") { try notes(in: second) }, expected,
                "a second store on the same files did not see the migration the first store made")
            let context = ModelContext(second)
            let note = MigrationFixtures.V2.Note()
            note.heading = "zeta"
            note.words = 9
            context.insert(note)
            try env.step("saving a note at 2.0.0 through the second store") { try context.save() }
            env.releaseContexts()
            let reopened = try env.step("reopening the store at 2.0.0 with the plan") {
                try ModelContainer(
                    for: newSchema, migrationPlan: MigrationFixtures.Plan.self, configurations: [configuration])
            }
            try env.checkEqual(
                try notes(in: reopened), expected + ["zeta:9"],
                "after a second store saved at the new version, reopening with the plan did not find the migrated "
                    + "notes and the new one (the migration ran again, or the save was lost)")
        },
    ]
}
