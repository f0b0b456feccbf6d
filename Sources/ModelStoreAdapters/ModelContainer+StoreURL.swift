import Foundation
import ModelStore

extension ModelContainer {
    /// A container for these model types whose store is named by a URL: `memory:`,
    /// `json:PATH`, `log:DIR`, or a scheme an adapter registered in `StoreRegistry.shared`.
    ///
    /// ```swift
    /// let container = try ModelContainer(for: Trip.self, url: "json:trips.json")
    /// ```
    ///
    /// The URL is opened as given. Name an environment variable in `environmentOverride` to let
    /// it replace the URL: with `environmentOverride: StoreRegistry.environmentVariable`, the same
    /// binary switches backend with no code change: `MODELSTORE_URL=memory: swift run trips`.
    ///
    /// - Throws: `DataStoreError` with the code `invalidConfiguration` for a bad URL, naming it and
    ///   listing the registered schemes; then whatever opening the store throws.
    public convenience init(
        for types: any PersistentModel.Type..., url: String, environmentOverride: String? = nil,
        migrationPlan: (any SchemaMigrationPlan.Type)? = nil
    ) throws {
        try self.init(
            for: Schema(types), url: url, environmentOverride: environmentOverride, migrationPlan: migrationPlan)
    }

    /// A container for a schema whose store is named by a URL, which the environment variable
    /// `environmentOverride` replaces when it is named and set.
    public convenience init(
        for schema: Schema, url: String, environmentOverride: String? = nil,
        migrationPlan: (any SchemaMigrationPlan.Type)? = nil
    ) throws {
        StoreRegistry.shared.registerBuiltInSchemes()
        try self.init(
            for: schema, url: url, environmentOverride: environmentOverride, registry: .shared,
            migrationPlan: migrationPlan)
    }
}
