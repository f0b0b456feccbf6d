import Foundation
import ModelStore

/// Runs a `SchemaMigrationPlan` on a store's data, once, for every adapter: the stages in order
/// from the version the store recorded to the app's, then one atomic commit through the store's
/// ``SchemaMigrationStorage``.
///
/// How a migration runs:
///
/// 1. The stages are chosen once, as data (``stageNames(from:)`` lists them): starting at the
///    stored version, each next stage is the plan's stage whose `fromVersion` is the current version.
///    A stored version the plan does not list, or a store already at the app's version, runs no stage
///    (the store's own open matches properties by name, as without a plan).
/// 2. The store's models are read at the first stage's old schema, into memory.
/// 3. Per stage: a custom stage's `willMigrate` gets a `ModelContext` on the OLD version's models;
///    the lightweight rewrite moves the models to the new version (`LightweightMapping`); a
///    custom stage's `didMigrate` gets a context on the NEW version's models. Both contexts save into
///    an in-memory staging store over ``SnapshotTable`` that mints the store's own identifiers, so
///    their changes are part of the migration; a context left with changes is saved for the stage.
/// 4. The result is rewritten for the app's schema and handed to ``SchemaMigrationStorage/commit(_:)``
///    once. Nothing is written before that, so a stage that throws leaves the store exactly as it
///    was, and the error names the stage.
///
/// A dry run (``preview(_:)``) does steps 1–3 and reports instead of committing.
public struct SchemaMigrationRunner: Sendable {
    /// The schema the store opens with: where the migration ends.
    public let schema: Schema
    /// The plan, if the app gave one.
    public let plan: (any SchemaMigrationPlan.Type)?

    /// A runner towards `schema`.
    public init(schema: Schema, plan: (any SchemaMigrationPlan.Type)?) {
        self.schema = schema
        self.plan = plan
    }

    /// One stage, resolved: its two schemas and its closures.
    struct Step {
        let from: Schema
        let to: Schema
        let isCustom: Bool
        let willMigrate: (@Sendable (ModelContext) throws -> Void)?
        let didMigrate: (@Sendable (ModelContext) throws -> Void)?

        /// `from '1.0.0' to '2.0.0'`.
        var name: String { "from '\(from.version)' to '\(to.version)'" }
        /// `lightweight 1.0.0 -> 2.0.0`.
        var summary: String { "\(isCustom ? "custom" : "lightweight") \(from.version) -> \(to.version)" }
    }

    /// The stages that take a store from `stored` to the schema's version, in order.
    func steps(from stored: Schema.Version) -> [Step] {
        guard let plan, stored < schema.version else { return [] }
        var steps: [Step] = []
        var current = stored
        while current < schema.version {
            guard let stage = plan.stages.first(where: { $0.versions.from.versionIdentifier == current }) else { break }
            let (from, to) = stage.versions
            guard to.versionIdentifier > current, to.versionIdentifier <= schema.version else { break }
            let closures = stage.closures
            steps.append(
                Step(
                    from: Schema(versionedSchema: from), to: Schema(versionedSchema: to), isCustom: stage.isCustom,
                    willMigrate: closures.will, didMigrate: closures.did))
            current = to.versionIdentifier
        }
        return steps
    }

    /// For a store opened read-only: throws `DataStoreError.Code.readOnly` when the plan would
    /// migrate the stored data, since a read-only open may not write the migrated data back.
    /// Reads only what ``preview(_:)`` reads.
    public func requireNoMigration(_ storage: some SchemaMigrationStorage) throws {
        guard plan != nil, let stored = try storage.storedVersion else { return }
        let stages = stageNames(from: stored)
        guard !stages.isEmpty else { return }
        throw DataStoreError(
            .readOnly,
            "\(storage.storeDescription) is at schema version \(stored) and the migration plan would migrate it to "
                + "\(schema.version) (\(stages.joined(separator: ", "))), which a read-only open (allowsSave: false) "
                + "cannot write",
            remedy: "Open the store once with a configuration that allows saves, so that it migrates, then read-only")
    }

    /// The stages a store recorded at `stored` runs, as `lightweight 1.0.0 -> 2.0.0`; empty when none.
    public func stageNames(from stored: Schema.Version) -> [String] { steps(from: stored).map(\.summary) }

    /// Migrates the store if the plan has stages from its stored version, and commits the result
    /// atomically; returns what changed, or `nil` when there was nothing to run.
    ///
    /// Call it holding the store's lock, before the store reads its data for the open.
    @discardableResult
    public func migrate(_ storage: some SchemaMigrationStorage) throws -> MigrationReport? {
        guard let (data, report) = try run(storage, isDryRun: false) else { return nil }
        do {
            try storage.commit(data)
        } catch var error as DataStoreError {
            error.message = "migrating \(storage.storeDescription) to '\(schema.version)': \(error.message)"
            throw error
        }
        return report
    }

    /// Reports what ``migrate(_:)`` would change, writing nothing; a store with nothing to migrate
    /// gets a report with no stages.
    public func preview(_ storage: some SchemaMigrationStorage) throws -> MigrationReport {
        if let (_, report) = try run(storage, isDryRun: true) { return report }
        let stored = try storage.storedVersion ?? schema.version
        return MigrationReport(
            store: storage.storeDescription, fromVersion: stored, toVersion: stored, stages: [], entities: [],
            isDryRun: true)
    }

    private func run(
        _ storage: some SchemaMigrationStorage, isDryRun: Bool
    ) throws -> (MigrationData, MigrationReport)? {
        guard let stored = try storage.storedVersion else { return nil }
        let steps = steps(from: stored)
        guard let first = steps.first else { return nil }
        var data = try storage.read(as: first.from)
        var tally = MigrationTally()
        for step in steps {
            do {
                if let willMigrate = step.willMigrate {
                    data = try runCustom(willMigrate, on: data, storage: storage, tally: &tally)
                }
                data = try tally.rewrite(data, to: step.to, stageName: "stage " + step.name)
                if let didMigrate = step.didMigrate {
                    data = try runCustom(didMigrate, on: data, storage: storage, tally: &tally)
                } else {
                    _ = try MigrationStaging(data, storeIdentifier: storage.storeIdentifier)
                }
            } catch {
                throw Self.stageError(error, step: step, store: storage.storeDescription)
            }
        }
        do {
            data = try tally.rewrite(data, to: schema, stageName: "rewrite to the app's schema '\(schema.version)'")
        } catch var error as DataStoreError {
            error.message = "migrating \(storage.storeDescription): \(error.message)"
            throw error
        }
        let report = MigrationReport(
            store: storage.storeDescription, fromVersion: stored, toVersion: schema.version,
            stages: steps.map(\.summary), entities: tally.entityReports, isDryRun: isDryRun)
        return (data, report)
    }

    /// Runs a stage's closure with a context on `data`, saves what it left unsaved, and returns the result.
    private func runCustom(
        _ body: @Sendable (ModelContext) throws -> Void, on data: MigrationData,
        storage: some SchemaMigrationStorage, tally: inout MigrationTally
    ) throws -> MigrationData {
        let staging = try MigrationStaging(data, storeIdentifier: storage.storeIdentifier)
        let configuration = MigrationStagingConfiguration(schema: data.schema, staging: staging)
        let container = try ModelContainer(for: data.schema, configurations: [configuration])
        let context = ModelContext(container)
        try body(context)
        if context.hasChanges { try context.save() }
        tally.touched.formUnion(staging.touched.withLock { $0 })
        return staging.data
    }

    /// The stage's failure, naming the stage and the store; a `DataStoreError` keeps its code.
    static func stageError(_ error: any Error, step: Step, store: String) -> DataStoreError {
        let prefix = "the migration stage \(step.name) of \(store) failed, and the store is unchanged"
        guard var error = error as? DataStoreError else {
            return DataStoreError(
                .migrationFailed, "\(prefix): \(error)",
                remedy: "Fix the stage's willMigrate or didMigrate, then open the store again",
                underlyingError: SendableDescription(error))
        }
        error.message = "\(prefix): \(error.message)"
        return error
    }
}

/// A non-`Sendable` error's description, kept as the underlying error of a migration failure.
struct SendableDescription: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ error: any Error) { description = String(describing: error) }
}

/// What a migration has done so far, for its report.
struct MigrationTally {
    /// Models inserted, changed or deleted by custom stages or rewritten by lightweight ones.
    var touched: Set<PersistentIdentifier> = []
    /// Shape changes per entity, merged across stages, in the order first seen.
    private var shapes: [EntityMigrationReport] = []

    /// Rewrites `data` for `schema` (a lightweight stage), counting the models whose shape changes.
    mutating func rewrite(_ data: MigrationData, to schema: Schema, stageName: String) throws -> MigrationData {
        let mapping = LightweightMapping(from: data.schema, to: schema, stageName: stageName)
        let reshaped = Set(mapping.changes.map(\.entityName))
        touched.formUnion(data.snapshots.lazy.filter { reshaped.contains($0.entity.name) }.map(\.persistentIdentifier))
        for change in mapping.changes { merge(change) }
        return MigrationData(
            schema: schema, snapshots: try mapping.map(data.snapshots), nextPrimaryKey: data.nextPrimaryKey)
    }

    private mutating func merge(_ change: EntityMigrationReport) {
        guard let index = shapes.firstIndex(where: { $0.entityName == change.entityName }) else {
            shapes.append(change)
            return
        }
        shapes[index].attributesAdded += change.attributesAdded
        shapes[index].attributesRemoved += change.attributesRemoved
        shapes[index].attributesRenamed += change.attributesRenamed
        shapes[index].isAdded = shapes[index].isAdded || change.isAdded
        shapes[index].isRemoved = change.isRemoved
    }

    /// One report per entity that changed shape or had models touched.
    var entityReports: [EntityMigrationReport] {
        var counts: [String: Int] = [:]
        for id in touched { counts[id.entityName, default: 0] += 1 }
        var reports = shapes
        for index in reports.indices { reports[index].rowsTouched = counts[reports[index].entityName] ?? 0 }
        let named = Set(reports.map(\.entityName))
        for name in counts.keys.sorted() where !named.contains(name) {
            reports.append(EntityMigrationReport(entityName: name, rowsTouched: counts[name] ?? 0))
        }
        return reports
    }
}

extension MigrationStage {
    /// The stage's two versions.
    var versions: (from: any VersionedSchema.Type, to: any VersionedSchema.Type) {
        switch self {
        case .lightweight(let from, let to): (from, to)
        case .custom(let from, let to, _, _): (from, to)
        }
    }

    /// Whether the stage is custom.
    var isCustom: Bool {
        if case .custom = self { return true }
        return false
    }

    /// A custom stage's closures; none for a lightweight one.
    var closures: (will: (@Sendable (ModelContext) throws -> Void)?, did: (@Sendable (ModelContext) throws -> Void)?) {
        if case .custom(_, _, let will, let did) = self { return (will, did) }
        return (nil, nil)
    }
}
