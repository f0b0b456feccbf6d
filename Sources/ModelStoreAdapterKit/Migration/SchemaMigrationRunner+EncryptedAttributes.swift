import Foundation
import ModelStore

extension SchemaMigrationRunner {
    /// Seals (or opens) the stored values of attributes that gained (or lost) `@Attribute(.encrypted)`
    /// when a store opens without a migration stage from its recorded version: reads the models as the
    /// recorded schema `stored`, rewrites them for the app's schema (`LightweightMapping`), and commits
    /// them through `storage` in one atomic step. Returns `false`, reading and writing nothing, when no
    /// attribute's encryption changed.
    ///
    /// Call it holding the store's lock, where the store would otherwise match the recorded schema
    /// by name itself. Throws `DataStoreError.Code.invalidConfiguration` when the process has no
    /// attribute key, and leaves the store as it was on any error.
    @discardableResult
    public func migrateEncryptedAttributes(_ storage: some SchemaMigrationStorage, stored: Schema) throws -> Bool {
        guard let mapping = LightweightMapping.resealing(from: stored, to: schema) else { return false }
        do {
            let data = try storage.read(as: stored)
            try storage.commit(
                MigrationData(
                    schema: schema, snapshots: try mapping.map(data.snapshots), nextPrimaryKey: data.nextPrimaryKey))
        } catch var error as DataStoreError {
            error.message = "migrating \(storage.storeDescription): \(error.message)"
            throw error
        }
        return true
    }
}
