import Foundation
import ModelStore

// Two versions of one entity, 'Badge', for the dedupe-then-add-unique pattern:
//   1.0.0  code, holder
//   2.0.0  code (unique), holder        custom from 1.0.0: willMigrate deletes all but the first of each code

enum BadgesV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static var models: [any PersistentModel.Type] { [Badge.self] }

    final class Badge: PersistentModel {
        @Attribute var code: String = ""
        @Attribute var holder: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }
}

enum BadgesV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var models: [any PersistentModel.Type] { [Badge.self] }

    final class Badge: PersistentModel {
        @Attribute(.unique) var code: String = ""
        @Attribute var holder: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }
}

/// Removes duplicate codes on the old version, then the new version adds `.unique`.
enum DedupePlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [BadgesV1.self, BadgesV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                fromVersion: BadgesV1.self, toVersion: BadgesV2.self,
                willMigrate: { context in
                    let badges = try context.fetch(
                        FetchDescriptor<BadgesV1.Badge>(sortBy: [SortDescriptor(\.code), SortDescriptor(\.holder)]))
                    var seen: Set<String> = []
                    for badge in badges where !seen.insert(badge.code).inserted { context.delete(badge) }
                    try context.save()
                }, didMigrate: nil)
        ]
    }
}

/// The same versions with a lightweight stage: adding `.unique` over stored duplicates must fail cleanly.
enum UndedupedPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [BadgesV1.self, BadgesV2.self] }
    static var stages: [MigrationStage] { [.lightweight(fromVersion: BadgesV1.self, toVersion: BadgesV2.self)] }
}

/// Migration cases about uniqueness and atomicity.
extension MigrationCases {
    /// Saves version-1 badges with duplicate codes: a, b, a, c, b (holders 0 to 4).
    static func seedBadges(_ env: CaseEnvironment) throws {
        let schema = Schema(versionedSchema: BadgesV1.self)
        let container = try env.step("opening the store at version 1.0.0") {
            try ModelContainer(for: schema, configurations: [try env.configuration()])
        }
        let context = ModelContext(container)
        for (index, code) in ["a", "b", "a", "c", "b"].enumerated() {
            let badge = BadgesV1.Badge()
            badge.code = code
            badge.holder = "holder-\(index)"
            context.insert(badge)
        }
        try env.step("saving five version-1 badges, two codes twice") { try context.save() }
    }

    static func openBadgesV2(
        _ env: CaseEnvironment, plan: any SchemaMigrationPlan.Type
    ) throws -> ModelContainer {
        let configuration = try env.configuration()
        return try ModelContainer(
            for: Schema(versionedSchema: BadgesV2.self), migrationPlan: plan, configurations: [configuration])
    }

    /// The store's files and their bytes (see ``MigrationFixtures/files(in:)``).
    static func storedFiles(_ env: CaseEnvironment) throws -> [String: Data] {
        try MigrationFixtures.files(in: try env.storeDirectory())
    }

    static let atomicity: [CaseDefinition] = [
        CaseDefinition(
            .migrations, "dedupeThenAddUnique",
            "A custom stage's willMigrate removes duplicates on the old version, and the new version's .unique holds.",
            requires: [.durability, .migrations, .customMigrationStages]
        ) { env in
            try seedBadges(env)
            let container = try env.step("opening at 2.0.0 with the dedupe plan") {
                try openBadgesV2(env, plan: DedupePlan.self)
            }
            let context = ModelContext(container)
            context.duplicateInsertPolicy = .error  // the store's own enforcement, not an upsert
            let badges = try env.step("fetching version-2 badges") {
                try context.fetch(FetchDescriptor<BadgesV2.Badge>(sortBy: [SortDescriptor(\.code)]))
            }
            try env.checkEqual(badges.map(\.code), ["a", "b", "c"], "willMigrate's deletions were not kept")
            try env.checkEqual(
                badges.map(\.holder), ["holder-0", "holder-1", "holder-3"], "the migration kept the wrong duplicates")
            let duplicate = BadgesV2.Badge()
            duplicate.code = "a"
            context.insert(duplicate)
            try env.expectError(
                [.uniqueConstraintViolation], "saving a second badge 'a' after the migration",
                ifItSucceeds: "the migrated store does not enforce the new version's .unique"
            ) { try context.save() }
        },
        CaseDefinition(
            .migrations, "uniqueOverDuplicatesFailsCleanly",
            "Adding .unique over stored duplicates without a dedupe stage fails to open, names the stage, and "
                + "leaves every file byte for byte as it was.",
            requires: [.durability, .migrations, .customMigrationStages]
        ) { env in
            try seedBadges(env)
            let before = try storedFiles(env)
            let error = try env.expectError(
                [.migrationFailed, .uniqueConstraintViolation, .corrupted],
                "opening at 2.0.0 with a lightweight stage over duplicate codes",
                ifItSucceeds: "a store opened with a new unique constraint that its stored models violate"
            ) { _ = try openBadgesV2(env, plan: UndedupedPlan.self) }
            try env.check(
                error.message.contains("1.0.0") && error.message.contains("2.0.0"),
                "the error does not name the failing stage's versions", expected: "'1.0.0' and '2.0.0'",
                found: error.message)
            try env.checkEqual(try storedFiles(env), before, "a failed migration changed the store's files")
        },
        CaseDefinition(
            .migrations, "failedStageChangesNoFile",
            "When a custom stage throws, every file of the store is byte for byte as before.",
            requires: [.durability, .migrations, .customMigrationStages]
        ) { env in
            _ = try seedVersion1(env)
            let before = try storedFiles(env)
            let error = try env.expectError(
                [.invalidValue], "opening with a plan whose stage from 2.0.0 to 3.0.0 throws",
                ifItSucceeds: "a store opened although a migration stage threw"
            ) { _ = try openGauges(env, MigrationV3.self, plan: FailingPlan.self) }
            try env.check(
                error.message.contains("'2.0.0' to '3.0.0'"), "the error does not name the failing stage",
                expected: "from '2.0.0' to '3.0.0'", found: error.message)
            try env.checkEqual(try storedFiles(env), before, "a failed migration changed the store's files")
        },
        CaseDefinition(
            .migrations, "dryRunReportsAndWritesNothing",
            "ModelContainer.previewMigration reports each entity's changes and writes nothing.",
            requires: [.durability, .migrations, .customMigrationStages]
        ) { env in
            let prefix = try seedVersion1(env)
            let before = try storedFiles(env)
            let configuration = try env.configuration()
            let reports = try env.step("previewing the migration to 3.0.0") {
                try ModelContainer.previewMigration(
                    for: Schema(versionedSchema: MigrationV3.self), migrationPlan: CustomPlan.self,
                    configurations: [configuration])
            }
            let report = try env.require(reports.first, "previewMigration returned no report")
            try env.checkEqual(report.isDryRun, true, "a preview's report does not say it is a dry run")
            try env.checkEqual(
                report.stages, ["lightweight 1.0.0 -> 2.0.0", "custom 2.0.0 -> 3.0.0"], "the preview ran other stages")
            let gauge = try env.require(report.entity(named: "Gauge"), "the report has no line for 'Gauge'")
            try env.checkEqual(gauge.rowsTouched, 3, "the report counts other rows than the three gauges")
            try env.checkEqual(gauge.attributesAdded, ["unit", "isHigh"], "the report's added attributes are wrong")
            try env.checkEqual(gauge.attributesRenamed, ["reading -> value"], "the report's renames are wrong")
            try env.checkEqual(try storedFiles(env), before, "a dry run changed the store's files")
            let container = try openGauges(env, MigrationV1.self, plan: nil)
            let gauges = try ModelContext(container).fetch(FetchDescriptor<MigrationV1.Gauge>())
            try env.checkEqual(gauges.count, 3, "after a dry run the store does not hold its version-1 gauges")
            MigrationLog.seen.withLock { $0[prefix] = nil }
        },
    ]
}
