import Foundation
import ModelStore
import ModelStoreAdapterKit

/// Migration through the adapter kit's `SchemaMigrationRunner`: the durable store records its schema
/// version in its file, and opening it with a plan runs the stages from that version before the open
/// reads the file, with the migration mutants.
extension MutantStore: DataStoreMigrationPreviewing {
    static func previewMigration(
        _ configuration: MutantStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?
    ) throws -> MigrationReport {
        guard let schema = configuration.schema, let file = configuration.file else {
            throw DataStoreError(
                .invalidConfiguration, "the mutant store '\(configuration.name)' has no schema or no file",
                remedy: "Preview through ModelContainer.previewMigration with a durable configuration")
        }
        let storage = MutantMigrationStorage(configuration: configuration, file: file)
        let runner = SchemaMigrationRunner(schema: schema, plan: mutated(migrationPlan, configuration.mutation))
        if configuration.mutation == .migrationDryRunWrites {
            return try runner.migrate(storage) ?? runner.preview(storage)
        }
        return try runner.preview(storage)
    }

    /// Runs the plan's stages from the file's recorded version; call it before the open reads the file.
    static func migrate(
        _ configuration: MutantStoreConfiguration, schema: Schema, plan: (any SchemaMigrationPlan.Type)?
    ) throws {
        guard let file = configuration.file, configuration.mutation != .migrationPlanIgnored else { return }
        let storage = MutantMigrationStorage(configuration: configuration, file: file)
        do {
            try SchemaMigrationRunner(schema: schema, plan: mutated(plan, configuration.mutation)).migrate(storage)
        } catch {
            switch configuration.mutation {
            case .migrationFailureOpensAnyway: return
            case .migrationFailureLeavesPartialState:
                try? storage.stamp(schema.version)
                throw error
            default: throw error
            }
        }
    }

    /// The plan the mutant runs in place of the app's.
    private static func mutated(
        _ plan: (any SchemaMigrationPlan.Type)?, _ mutation: Mutation?
    ) -> (any SchemaMigrationPlan.Type)? {
        guard let plan else { return nil }
        func wrap<Plan: SchemaMigrationPlan>(_: Plan.Type) -> any SchemaMigrationPlan.Type {
            switch mutation {
            case .migrationDropsDidMigrate: DidMigrateDropped<Plan>.self
            case .migrationDropsWillMigrate: WillMigrateDropped<Plan>.self
            default: Plan.self
            }
        }
        return wrap(plan)
    }
}

/// A plan whose custom stages lose their `didMigrate`.
private enum DidMigrateDropped<Plan: SchemaMigrationPlan>: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { Plan.schemas }
    static var stages: [MigrationStage] {
        Plan.stages.map { stage in
            guard case .custom(let from, let to, let will, _) = stage else { return stage }
            return .custom(fromVersion: from, toVersion: to, willMigrate: will, didMigrate: nil)
        }
    }
}

/// A plan whose custom stages lose their `willMigrate`.
private enum WillMigrateDropped<Plan: SchemaMigrationPlan>: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { Plan.schemas }
    static var stages: [MigrationStage] {
        Plan.stages.map { stage in
            guard case .custom(let from, let to, _, let did) = stage else { return stage }
            return .custom(fromVersion: from, toVersion: to, willMigrate: nil, didMigrate: did)
        }
    }
}

/// How ``SchemaMigrationRunner`` reads and commits the mutant store's file.
struct MutantMigrationStorage: SchemaMigrationStorage {
    /// What the runner needs of the file without a schema: the identifier, version and history.
    private struct Header: Decodable {
        var identifier: String
        var schemaVersion: Schema.Version?
        var history: [StoreHistoryRecord]?
        var lastTransaction: Int64?
        var expiredThrough: Int64?
    }

    let configuration: MutantStoreConfiguration
    let file: URL

    private func header() throws -> Header? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        do {
            return try JSONDecoder().decode(Header.self, from: Data(contentsOf: file))
        } catch {
            throw DataStoreError(
                .corrupted, "\(storeDescription) cannot be read to migrate it",
                remedy: "Restore the file from a backup", underlyingError: ErrorText(error))
        }
    }

    var storeDescription: String { "the mutant store '\(file.lastPathComponent)'" }
    var storeIdentifier: String { (try? header()?.identifier) ?? "" }
    var storedVersion: Schema.Version? {
        get throws { try header().map { $0.schemaVersion ?? Schema.Version(1, 0, 0) } }
    }

    /// Records `version` in the file without migrating its data (the partial state of a failed
    /// migration, for the mutant that leaves one).
    func stamp(_ version: Schema.Version) throws {
        let data = try Data(contentsOf: file)
        guard var object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else { return }
        object["schemaVersion"] = try JSONSerialization.jsonObject(with: JSONEncoder().encode(version))
        try JSONSerialization.data(withJSONObject: object).write(to: file, options: .atomic)
    }

    func read(as schema: Schema) throws -> MigrationData {
        do {
            let image = try MutantStore.decode(Data(contentsOf: file), schema: schema)
            let snapshots = try MutantStore.readingExternalValuesIn(image.snapshots, from: configuration)
            return MigrationData(schema: schema, snapshots: snapshots, nextPrimaryKey: image.nextKey)
        } catch let error as DataStoreError {
            throw error
        } catch {
            throw DataStoreError(
                .corrupted, "\(storeDescription) cannot be read as version '\(schema.version)'",
                remedy: "Restore the file from a backup", underlyingError: ErrorText(error))
        }
    }

    func commit(_ data: MigrationData) throws {
        let header = try header()
        var data = data
        if configuration.mutation == .migrationLosesRenamedValues {
            for index in data.snapshots.indices {
                for attribute in data.snapshots[index].entity.attributes where attribute.originalName != nil {
                    data.snapshots[index].values[attribute.slot] = attribute.defaultValue
                }
            }
        }
        do {
            let image = MutantStore.Image(
                identifier: header?.identifier ?? "", nextKey: data.nextPrimaryKey,
                snapshots: try MutantStore.movingExternalValuesOut(data.snapshots, configuration: configuration),
                schemaVersion: configuration.mutation == .migrationVersionNotRecorded
                    ? header?.schemaVersion : data.schema.version,
                history: header?.history, lastTransaction: header?.lastTransaction,
                expiredThrough: header?.expiredThrough)
            try JSONEncoder().encode(image).write(to: file, options: .atomic)
        } catch {
            throw DataStoreError(
                .io, "\(storeDescription) could not be written with the migrated data",
                remedy: "Check that the folder is writable and the disk has room", underlyingError: ErrorText(error))
        }
    }
}
