import Foundation

/// A store that can report what opening it with a migration plan would change, without changing it:
/// a dry run of the migration.
///
/// Implementation requirements:
///
/// 1. ``previewMigration(_:migrationPlan:)`` MUST NOT write anything: not the store's files, not
///    a lock file's contents, not a backup. A test compares the files byte for byte.
/// 2. It MUST report exactly what opening the store with the same plan would do: run the same
///    stages (custom ones included, on a copy in memory) and report the result. Stores that
///    migrate through `SchemaMigrationRunner` get this by calling its `preview`.
/// 3. It MUST throw what opening would throw when a stage fails, naming the stage.
public protocol DataStoreMigrationPreviewing: DataStore {
    /// What opening the store of `configuration` with `migrationPlan` would change; writes nothing.
    static func previewMigration(
        _ configuration: Configuration, migrationPlan: (any SchemaMigrationPlan.Type)?
    ) throws -> MigrationReport
}

extension ModelContainer {
    /// A dry run of opening a container: what each store's migration would change, without
    /// opening or changing any store.
    ///
    /// Returns one report per configuration, in order. Throws ``DataStoreError/unsupportedFeature``
    /// for a configuration whose store does not conform to ``DataStoreMigrationPreviewing``, and
    /// what opening would throw when a stage fails.
    public static func previewMigration(
        for schema: Schema, migrationPlan: (any SchemaMigrationPlan.Type)?,
        configurations: [any DataStoreConfiguration]
    ) throws -> [MigrationReport] {
        try schema.validate()
        return try configurations.map { configuration in
            func preview<C: DataStoreConfiguration>(_ configuration: C) throws -> MigrationReport {
                var configuration = configuration
                if configuration.schema == nil { configuration.schema = schema }
                try configuration.validate()
                guard let store = C.Store.self as? any DataStoreMigrationPreviewing.Type else {
                    throw DataStoreError(
                        .unsupportedFeature,
                        "the store of the configuration '\(configuration.name)' cannot preview a migration",
                        remedy:
                            "Preview only the configurations of stores that conform to DataStoreMigrationPreviewing")
                }
                func open<S: DataStoreMigrationPreviewing>(_: S.Type) throws -> MigrationReport {
                    // C.Store is S, so C is S.Configuration.
                    try S.previewMigration(configuration as! S.Configuration, migrationPlan: migrationPlan)
                }
                return try open(store)
            }
            return try preview(configuration)
        }
    }
}
