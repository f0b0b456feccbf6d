import Foundation

/// What a migration changed, or, for a dry run, would change: the stages it runs and, per entity,
/// the rows it touches and the attributes it adds, removes and renames.
///
/// ```swift
/// let reports = try ModelContainer.previewMigration(
///     for: Schema(versionedSchema: TripsSchemaV2.self), migrationPlan: TripsMigrationPlan.self,
///     configurations: [.jsonFile(at: url)])
/// print(reports[0])
/// ```
public struct MigrationReport: Sendable, Hashable, CustomStringConvertible {
    /// The store, as its messages name it (for example `the JSON store '/path/trips.json'`).
    public var store: String
    /// The schema version the store recorded before the migration.
    public var fromVersion: Schema.Version
    /// The schema version the store holds after it.
    public var toVersion: Schema.Version
    /// The stages run, in order, as `lightweight 1.0.0 -> 2.0.0` or `custom 2.0.0 -> 3.0.0`.
    public var stages: [String]
    /// The entities the migration changes, in the new schema's order, then the removed ones.
    public var entities: [EntityMigrationReport]
    /// Whether this report comes from a dry run, which wrote nothing.
    public var isDryRun: Bool

    /// Creates a report.
    public init(
        store: String, fromVersion: Schema.Version, toVersion: Schema.Version, stages: [String],
        entities: [EntityMigrationReport], isDryRun: Bool
    ) {
        self.store = store
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.stages = stages
        self.entities = entities
        self.isDryRun = isDryRun
    }

    /// The report for one entity, if the migration changes it.
    public func entity(named name: String) -> EntityMigrationReport? { entities.first { $0.entityName == name } }

    /// A few lines for people: the versions, the stages, then one line per entity.
    public var description: String {
        var lines = [
            "\(isDryRun ? "would migrate" : "migrated") \(store) from \(fromVersion) to \(toVersion)",
            "stages: " + (stages.isEmpty ? "none" : stages.joined(separator: ", ")),
        ]
        lines += entities.map { "  " + $0.description }
        return lines.joined(separator: "\n")
    }
}

/// What a migration changes in one entity.
public struct EntityMigrationReport: Sendable, Hashable, CustomStringConvertible {
    /// The entity's name (its new name; a removed entity's old name).
    public var entityName: String
    /// How many stored models the migration inserts, changes or deletes in this entity.
    public var rowsTouched: Int
    /// Stored properties added, each taking its default value in every stored model.
    public var attributesAdded: [String]
    /// Stored properties removed, with their values.
    public var attributesRemoved: [String]
    /// Stored properties renamed through `originalName`, as `old -> new`, keeping their values.
    public var attributesRenamed: [String]
    /// Whether the entity is new in the migrated schema.
    public var isAdded: Bool
    /// Whether the entity is gone from the migrated schema, with its models.
    public var isRemoved: Bool

    /// Creates an entity report.
    public init(
        entityName: String, rowsTouched: Int = 0, attributesAdded: [String] = [], attributesRemoved: [String] = [],
        attributesRenamed: [String] = [], isAdded: Bool = false, isRemoved: Bool = false
    ) {
        self.entityName = entityName
        self.rowsTouched = rowsTouched
        self.attributesAdded = attributesAdded
        self.attributesRemoved = attributesRemoved
        self.attributesRenamed = attributesRenamed
        self.isAdded = isAdded
        self.isRemoved = isRemoved
    }

    /// Whether the entity's stored shape changes (so every stored model of it is rewritten).
    public var changesShape: Bool {
        isAdded || isRemoved || !attributesAdded.isEmpty || !attributesRemoved.isEmpty || !attributesRenamed.isEmpty
    }

    /// `Entity: n rows; added a, b; removed c; renamed d -> e`.
    public var description: String {
        var parts = ["\(entityName): \(rowsTouched) row\(rowsTouched == 1 ? "" : "s") touched"]
        if isAdded { parts.append("entity added") }
        if isRemoved { parts.append("entity removed") }
        if !attributesAdded.isEmpty { parts.append("added " + attributesAdded.joined(separator: ", ")) }
        if !attributesRemoved.isEmpty { parts.append("removed " + attributesRemoved.joined(separator: ", ")) }
        if !attributesRenamed.isEmpty { parts.append("renamed " + attributesRenamed.joined(separator: ", ")) }
        return parts.joined(separator: "; ")
    }
}
