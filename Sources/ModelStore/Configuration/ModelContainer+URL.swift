import Foundation

extension ModelContainer {
    /// A container for these model types whose store is named by a URL, such as `json:trips.json`.
    ///
    /// The URL is opened as given, unless `environmentOverride` names an environment variable
    /// that is set: then its value is the URL. Pass ``StoreRegistry/environmentVariable``
    /// (`MODELSTORE_URL`) for the container whose store users may swap, such as the app's main
    /// store; other containers stay where the code puts them. With `ModelStoreAdapters` imported,
    /// `ModelContainer(for:url:)` does the same with the built-in schemes registered in
    /// ``StoreRegistry/shared``.
    ///
    /// - Parameters:
    ///   - types: The model types (and the types their relationships reach).
    ///   - url: The store's URL; see ``StoreURL`` for the grammar.
    ///   - environmentOverride: An environment variable whose value, when set, replaces `url`.
    ///   - registry: Where the URL's scheme is looked up.
    ///   - migrationPlan: The migration plan passed to the store.
    /// - Throws: ``DataStoreError/Code/invalidConfiguration`` for a bad URL, naming it and listing
    ///   the registered schemes; then whatever creating the container throws.
    public convenience init(
        for types: any PersistentModel.Type..., url: String, environmentOverride: String? = nil,
        registry: StoreRegistry, migrationPlan: (any SchemaMigrationPlan.Type)? = nil
    ) throws {
        try self.init(
            for: Schema.shared(for: types), url: url, environmentOverride: environmentOverride, registry: registry,
            migrationPlan: migrationPlan)
    }

    /// A container for a schema whose store is named by a URL, which the environment variable
    /// `environmentOverride` replaces when it is named and set.
    ///
    /// It works like the form that takes model types.
    public convenience init(
        for schema: Schema, url: String, environmentOverride: String? = nil, registry: StoreRegistry,
        migrationPlan: (any SchemaMigrationPlan.Type)? = nil
    ) throws {
        let configuration = try registry.configuration(for: url, overriddenBy: environmentOverride)
        try self.init(for: schema, migrationPlan: migrationPlan, configurations: [configuration])
    }
}
