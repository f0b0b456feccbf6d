import Foundation
import ModelStore

// Three versions of one entity, 'Gauge':
//   1.0.0  name (unique), reading
//   2.0.0  name, value (originalName: "reading"), unit = "kPa"          lightweight from 1.0.0
//   3.0.0  name, value, unit, isHigh                                     custom from 2.0.0: isHigh = value > 50

enum MigrationV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static var models: [any PersistentModel.Type] { [Gauge.self] }

    final class Gauge: PersistentModel {
        @Attribute(.unique) var name: String = ""
        @Attribute var reading: Int = 0
        let persistentBackingData = BackingData()
        init() {}
    }
}

enum MigrationV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var models: [any PersistentModel.Type] { [Gauge.self] }

    final class Gauge: PersistentModel {
        @Attribute(.unique) var name: String = ""
        @Attribute(originalName: "reading") var value: Int = 0
        @Attribute var unit: String = "kPa"
        let persistentBackingData = BackingData()
        init() {}
    }
}

enum MigrationV3: VersionedSchema {
    static let versionIdentifier = Schema.Version(3, 0, 0)
    static var models: [any PersistentModel.Type] { [Gauge.self] }

    final class Gauge: PersistentModel {
        @Attribute(.unique) var name: String = ""
        @Attribute var value: Int = 0
        @Attribute var unit: String = "kPa"
        @Attribute var isHigh: Bool = false
        let persistentBackingData = BackingData()
        init() {}
    }
}

/// What the custom stages saw, by the per-case prefix of the gauges' names.
enum MigrationLog {
    static let seen = LockedValue<[String: [String]]>([:])

    static func record(
        _ context: ModelContext, _ what: (ModelContext) throws -> (prefix: String, note: String)
    ) rethrows {
        let (prefix, note) = try what(context)
        seen.withLock { $0[prefix, default: []].append(note) }
    }

    static func prefix(of names: [String]) -> String { names.first.map { String($0.prefix(8)) } ?? "" }
}

enum LightweightPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [MigrationV1.self, MigrationV2.self] }
    static var stages: [MigrationStage] { [.lightweight(fromVersion: MigrationV1.self, toVersion: MigrationV2.self)] }
}

enum CustomPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [MigrationV1.self, MigrationV2.self, MigrationV3.self] }
    static var stages: [MigrationStage] {
        [
            .lightweight(fromVersion: MigrationV1.self, toVersion: MigrationV2.self),
            .custom(
                fromVersion: MigrationV2.self, toVersion: MigrationV3.self,
                willMigrate: { context in
                    try MigrationLog.record(context) { context in
                        let old = try context.fetch(FetchDescriptor<MigrationV2.Gauge>())
                        return (
                            MigrationLog.prefix(of: old.map(\.name)), "willMigrate saw \(old.count) version-2 gauges"
                        )
                    }
                },
                didMigrate: { context in
                    try MigrationLog.record(context) { context in
                        let new = try context.fetch(FetchDescriptor<MigrationV3.Gauge>())
                        for gauge in new { gauge.isHigh = gauge.value > 50 }
                        try context.save()
                        return (
                            MigrationLog.prefix(of: new.map(\.name)), "didMigrate saw \(new.count) version-3 gauges"
                        )
                    }
                }),
        ]
    }
}

enum FailingPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [MigrationV1.self, MigrationV2.self, MigrationV3.self] }
    static var stages: [MigrationStage] {
        [
            .lightweight(fromVersion: MigrationV1.self, toVersion: MigrationV2.self),
            .custom(
                fromVersion: MigrationV2.self, toVersion: MigrationV3.self, willMigrate: nil,
                didMigrate: { _ in
                    throw DataStoreError(
                        .invalidValue, "the conformance suite's failing migration stage fails on purpose")
                }),
        ]
    }
}

/// Schema migrations on open.
enum MigrationCases {
    static func openGauges(
        _ env: CaseEnvironment, _ version: any VersionedSchema.Type, plan: (any SchemaMigrationPlan.Type)?,
        what: String? = nil
    ) throws -> ModelContainer {
        let schema = Schema(version.models, version: version.versionIdentifier)
        let configuration = try env.configuration()
        return try env.step(what ?? "opening the store at version \(version.versionIdentifier)") {
            try ModelContainer(for: schema, migrationPlan: plan, configurations: [configuration])
        }
    }

    /// Saves three version-1 gauges named with a per-case prefix; returns the prefix.
    static func seedVersion1(_ env: CaseEnvironment) throws -> String {
        let prefix = String(UUID().uuidString.prefix(8))
        let container = try openGauges(env, MigrationV1.self, plan: nil)
        let context = ModelContext(container)
        for (index, reading) in [10, 60, 90].enumerated() {
            let gauge = MigrationV1.Gauge()
            gauge.name = "\(prefix)-\(index)"
            gauge.reading = reading
            context.insert(gauge)
        }
        try env.step("saving three version-1 gauges") { try context.save() }
        return prefix
    }

    static let all: [CaseDefinition] = basics + atomicity + entities

    static let basics: [CaseDefinition] = [
        CaseDefinition(
            .migrations, "lightweightAddsAndRenames",
            "A lightweight stage keeps renamed attributes' values (originalName) and gives added ones their default.",
            requires: [.durability, .migrations]
        ) { env in
            let prefix = try seedVersion1(env)
            let container = try openGauges(
                env, MigrationV2.self, plan: LightweightPlan.self,
                what: "opening version-1 data at version 2.0.0 with a lightweight plan (a store that ignores the plan "
                    + "reads the old 'reading' as an unknown property)")
            let gauges = try env.step("fetching version-2 gauges") {
                try ModelContext(container).fetch(FetchDescriptor<MigrationV2.Gauge>(sortBy: [SortDescriptor(\.name)]))
            }
            try env.checkEqual(
                gauges.map(\.name), (0..<3).map { "\(prefix)-\($0)" }, "a lightweight migration lost models")
            try env.checkEqual(
                gauges.map(\.value), [10, 60, 90],
                "a lightweight migration did not carry 'reading' into 'value' (originalName: \"reading\")")
            try env.checkEqual(
                gauges.map(\.unit), ["kPa", "kPa", "kPa"],
                "a lightweight migration did not give the added 'unit' its declared default")
        },
        CaseDefinition(
            .migrations, "customStageSeesOldAndNewData",
            "A custom stage's willMigrate sees the old version's models and didMigrate the new version's.",
            requires: [.durability, .migrations, .customMigrationStages]
        ) { env in
            let prefix = try seedVersion1(env)
            let container = try openGauges(env, MigrationV3.self, plan: CustomPlan.self)
            let gauges = try env.step("fetching version-3 gauges") {
                try ModelContext(container).fetch(FetchDescriptor<MigrationV3.Gauge>(sortBy: [SortDescriptor(\.name)]))
            }
            try env.checkEqual(gauges.map(\.isHigh), [false, true, true], "didMigrate's changes were not stored")
            let seen = MigrationLog.seen.withLock { $0[prefix] ?? [] }
            try env.checkEqual(
                seen, ["willMigrate saw 3 version-2 gauges", "didMigrate saw 3 version-3 gauges"],
                "the custom stage's closures did not see the old and the new data")
        },
        CaseDefinition(
            .migrations, "failedMigrationChangesNothing",
            "When a stage throws, opening fails with a DataStoreError and the old data is intact.",
            requires: [.durability, .migrations, .customMigrationStages]
        ) { env in
            let prefix = try seedVersion1(env)
            try env.expectError(
                [.invalidValue, .corrupted, .invalidSchema, .invalidConfiguration, .migrationFailed],
                "opening with a migration plan whose last stage throws",
                ifItSucceeds: "a store opened although a migration stage threw: failed migration ignored"
            ) {
                _ = try openGauges(env, MigrationV3.self, plan: FailingPlan.self)
            }
            let container = try openGauges(env, MigrationV1.self, plan: nil)
            let gauges = try env.step("fetching version-1 gauges after the failed migration") {
                try ModelContext(container).fetch(FetchDescriptor<MigrationV1.Gauge>(sortBy: [SortDescriptor(\.name)]))
            }
            try env.checkEqual(gauges.map(\.reading), [10, 60, 90], "a failed migration changed the stored data")
            try env.checkEqual(gauges.map(\.name), (0..<3).map { "\(prefix)-\($0)" }, "a failed migration lost models")
        },
        CaseDefinition(
            .migrations, "migratedStoreIsNotMigratedAgain",
            "Reopening a store already at the current version runs no stage.",
            requires: [.durability, .migrations, .customMigrationStages]
        ) { env in
            let prefix = try seedVersion1(env)
            _ = try openGauges(env, MigrationV3.self, plan: CustomPlan.self)
            _ = try openGauges(
                env, MigrationV3.self, plan: CustomPlan.self,
                what: "reopening the store migrated to 3.0.0 (a store that did not record the version it migrated to "
                    + "runs the stages again, reading version-3 data as version 1.0.0)")
            let seen = MigrationLog.seen.withLock { $0[prefix] ?? [] }
            try env.checkEqual(seen.count, 2, "reopening a store at the current version ran its custom stage again")
        },
        CaseDefinition(
            .migrations, "unsupportedCustomStageIsRefused",
            "A store that does not run custom stages refuses a plan that has one, instead of skipping it, and "
                + "changes nothing.",
            requires: [.durability, .migrations]
        ) { env in
            if env.capabilities.contains(.customMigrationStages) {
                throw CaseNotApplicable(reason: "the adapter runs custom migration stages")
            }
            let prefix = try seedVersion1(env)
            try env.expectError(
                [.unsupportedFeature], "opening with a plan whose stage from 2.0.0 to 3.0.0 is custom",
                ifItSucceeds: "a store that runs no custom migration stages opened with a plan that has one, without "
                    + "an error: the custom stage was silently skipped"
            ) {
                _ = try openGauges(env, MigrationV3.self, plan: CustomPlan.self)
            }
            let container = try openGauges(env, MigrationV1.self, plan: nil)
            let gauges = try env.step("fetching version-1 gauges after the refused migration") {
                try ModelContext(container).fetch(FetchDescriptor<MigrationV1.Gauge>(sortBy: [SortDescriptor(\.name)]))
            }
            try env.checkEqual(gauges.map(\.reading), [10, 60, 90], "a refused migration changed the stored data")
            try env.checkEqual(gauges.map(\.name), (0..<3).map { "\(prefix)-\($0)" }, "a refused migration lost models")
        },
    ]
}
