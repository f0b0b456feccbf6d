import Foundation
import ModelStore

/// The crash test's models as the writer saves them: version 1.0.0.
enum CrashSchemaV1: VersionedSchema {
    static let versionIdentifier = Schema.Version(1, 0, 0)
    static var models: [any PersistentModel.Type] { [CrashAccount.self, CrashEntry.self, CrashMeta.self] }
}

/// Version 2.0.0, which the `migrate` command reaches: an entry's `note` is renamed `memo`
/// (`originalName`), and each account gains `entryCount`, which the custom stage fills in.
enum CrashSchemaV2: VersionedSchema {
    static let versionIdentifier = Schema.Version(2, 0, 0)
    static var models: [any PersistentModel.Type] { [CrashAccount.self, CrashEntry.self, CrashMeta.self] }

    /// An account, with the number of its entries.
    final class CrashAccount: PersistentModel {
        @Attribute(.unique) var key: Int = 0
        @Attribute var name: String = ""
        @Attribute var total: Int = 0
        @Attribute var entryCount: Int = -1
        @Relationship(deleteRule: .cascade, inverse: \CrashEntry.account) var entries: [CrashEntry] = []

        let persistentBackingData = BackingData()
        init() {}
    }

    /// An entry, its note now called `memo`.
    final class CrashEntry: PersistentModel {
        @Attribute(.unique) var key: Int = 0
        @Attribute var amount: Int = 0
        @Attribute(originalName: "note") var memo: String = ""
        @Relationship var account: CrashAccount?

        let persistentBackingData = BackingData()
        init() {}
    }

    /// The last transaction, unchanged.
    final class CrashMeta: PersistentModel {
        @Attribute(.unique) var key: Int = 0
        @Attribute var lastTransaction: Int = 0

        let persistentBackingData = BackingData()
        init() {}
    }
}

/// From 1.0.0 to 2.0.0: a custom stage whose `didMigrate` counts every account's entries, so a
/// migrated store shows at once whether the stage's changes were kept with the rest.
enum CrashMigrationPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [CrashSchemaV1.self, CrashSchemaV2.self] }
    static var stages: [MigrationStage] {
        [
            .custom(
                fromVersion: CrashSchemaV1.self, toVersion: CrashSchemaV2.self, willMigrate: nil,
                didMigrate: { context in
                    for account in try context.fetch(FetchDescriptor<CrashSchemaV2.CrashAccount>()) {
                        account.entryCount = account.entries.count
                    }
                    try context.save()
                })
        ]
    }
}

/// The `migrate` command: opens the store with version 2.0.0 and the plan, which migrates it
/// (the script kills it at a random instant), then exits.
func migrateCrashStore(url: String) throws {
    _ = try ModelContainer(
        for: Schema(versionedSchema: CrashSchemaV2.self), url: url, registry: .shared,
        migrationPlan: CrashMigrationPlan.self)
}

/// The version the store records, read without opening it.
func storedCrashSchemaVersion(url: String) throws -> Schema.Version {
    let storeURL = try StoreRegistry.shared.url(url)
    guard let read = StoreRegistry.shared.scheme(named: storeURL.scheme)?.readStoredSchema else {
        throw CrashTestError("the scheme of '\(url)' cannot read a stored schema")
    }
    return try read(storeURL).version
}
