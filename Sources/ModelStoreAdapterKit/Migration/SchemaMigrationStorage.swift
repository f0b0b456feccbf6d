import Foundation
import ModelStore

/// A store's models at one schema version, as a migration moves them from stage to stage.
public struct MigrationData: Sendable {
    /// The schema the snapshots belong to.
    public var schema: Schema
    /// Every stored model of the schema's entities.
    public var snapshots: [DefaultSnapshot]
    /// The primary key the store mints next; a migration never hands out a key twice.
    public var nextPrimaryKey: Int64

    /// Creates migration data.
    public init(schema: Schema, snapshots: [DefaultSnapshot], nextPrimaryKey: Int64) {
        self.schema = schema
        self.snapshots = snapshots
        self.nextPrimaryKey = nextPrimaryKey
    }
}

/// The seam between ``SchemaMigrationRunner`` and a store: how the runner reads what the store
/// holds and how the store commits the migrated result.
///
/// The runner does everything else (choosing the stages, the lightweight rewrite, custom stages'
/// contexts, the dry run), so a store implements only these three things. Implementation requirements:
///
/// 1. ``storedVersion`` MUST be the schema version the store recorded when it last wrote, or `nil`
///    for a store that holds nothing yet (then there is nothing to migrate).
/// 2. ``read(as:)`` MUST return every stored model as a snapshot of the given schema, matching
///    entities and properties by name as the store's own open does, and MUST NOT write anything.
/// 3. ``commit(_:)`` MUST replace everything the store holds with the migrated data, record the
///    data's schema (and its version) as the stored one, and be atomic: when it throws, or the
///    process dies inside it, the store MUST hold either exactly what it held before or exactly the
///    migrated data, never a mix. File stores write the new state beside the old one and swap it
///    in with a durable rename; a database commits one transaction.
/// 4. A store MUST NOT call ``commit(_:)`` itself and MUST NOT write between ``read(as:)`` and the
///    runner's ``commit(_:)``: hold the store's lock across ``SchemaMigrationRunner/migrate(_:)``.
public protocol SchemaMigrationStorage {
    /// How the store's messages name it, for example `the JSON store '/path/trips.json'`.
    var storeDescription: String { get }
    /// The identifier the store's models carry.
    var storeIdentifier: String { get }
    /// The schema version the store recorded, or `nil` when it holds nothing yet.
    var storedVersion: Schema.Version? { get throws }
    /// Every stored model, read as models of `schema`; writes nothing.
    func read(as schema: Schema) throws -> MigrationData
    /// Replaces the store's contents with the migrated data, atomically.
    func commit(_ data: MigrationData) throws
}
