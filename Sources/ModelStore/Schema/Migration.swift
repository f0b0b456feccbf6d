import Foundation

/// A version of an app's schema: its models and its version number. SwiftData's `VersionedSchema`.
public protocol VersionedSchema: SendableMetatype {
    /// The schema's version.
    static var versionIdentifier: Schema.Version { get }
    /// The model types of this version.
    static var models: [any PersistentModel.Type] { get }
}

/// The ordered schema versions of an app and the stages between them. SwiftData's `SchemaMigrationPlan`.
public protocol SchemaMigrationPlan: SendableMetatype {
    /// Every schema version, oldest first.
    static var schemas: [any VersionedSchema.Type] { get }
    /// The stages that move data from one version to the next.
    static var stages: [MigrationStage] { get }
}

/// One step of a migration plan. SwiftData's `MigrationStage`.
public enum MigrationStage: Sendable {
    /// A step the store performs by itself: added, removed and renamed (`originalName`) properties.
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    /// A step with code that runs before and after the store's own changes.
    case custom(
        fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
        willMigrate: (@Sendable (ModelContext) throws -> Void)?, didMigrate: (@Sendable (ModelContext) throws -> Void)?
    )
}

extension DataStoreError.Code {
    /// A migration stage failed: its closure threw something that is not a ``DataStoreError``, or
    /// the stored models do not fit the stage's new version (for example a new unique constraint
    /// that stored duplicates violate). The store is unchanged.
    public static let migrationFailed = DataStoreError.Code("migrationFailed")
}
