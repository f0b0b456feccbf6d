import Foundation

extension ModelContainer {
    /// A container for these model types whose store is named by a URL, such as `json:trips.json`.
    ///
    /// The environment variable `MODELSTORE_URL` (``StoreRegistry/environmentVariable``), when
    /// set, overrides `url`. With `ModelStoreAdapters` imported, `ModelContainer(for:url:)` does
    /// the same with the built-in schemes registered in ``StoreRegistry/shared``.
    ///
    /// - Parameters:
    ///   - types: The model types (and the types their relationships reach).
    ///   - url: The store's URL; see ``StoreURL`` for the grammar.
    ///   - registry: Where the URL's scheme is looked up.
    ///   - migrationPlan: The migration plan passed to the store.
    /// - Throws: ``DataStoreError/Code/invalidConfiguration`` for a bad URL, naming it and listing
    ///   the registered schemes; then whatever creating the container throws.
    public convenience init(
        for types: any PersistentModel.Type..., url: String, registry: StoreRegistry,
        migrationPlan: (any SchemaMigrationPlan.Type)? = nil
    ) throws {
        try self.init(for: Schema(types), url: url, registry: registry, migrationPlan: migrationPlan)
    }

    /// A container for a schema whose store is named by a URL; `MODELSTORE_URL` overrides `url`.
    ///
    /// It works like the form that takes model types.
    public convenience init(
        for schema: Schema, url: String, registry: StoreRegistry,
        migrationPlan: (any SchemaMigrationPlan.Type)? = nil
    ) throws {
        let configuration = try registry.configuration(for: url, environment: ProcessInfo.processInfo.environment)
        try self.init(for: schema, migrationPlan: migrationPlan, configurations: [configuration])
    }
}
