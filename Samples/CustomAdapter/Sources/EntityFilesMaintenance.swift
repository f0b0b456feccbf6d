import Foundation
import ModelStore
import ModelStoreTooling

/// What the entity-files store offers tools such as `modelstore`: its schema, its files, counts
/// read from the manifest's files without opening the store, and a check that every file the
/// manifest names is there and parses. Repair, compaction and sealing keep their defaults (the
/// store does not support them).
///
/// The store records no schema of its own, so the app that registers the scheme passes the one its
/// models make:
///
/// ```swift
/// let schema = try Schema([Shelf.self, Book.self, Author.self])
/// StoreRegistry.shared.register(.entityFiles.maintained(by: EntityFilesMaintenance(schema: schema)))
/// ```
public struct EntityFilesMaintenance: DataStoreMaintenance {
    /// The schema the app's models make.
    public let schema: Schema.Description

    /// The maintenance of stores written with `schema`.
    public init(schema: Schema) {
        self.schema = schema.storedDescription
    }

    /// The schema the app gave, once the directory holds a store; throws `notFound` otherwise.
    public func storedSchema(_ request: StoreMaintenanceRequest) throws -> Schema.Description {
        _ = try manifest(request)
        return schema
    }

    /// The entities and their counts, read from the files the manifest names (no lock, no writes).
    public func inspect(_ request: StoreMaintenanceRequest) throws -> StoreInspection? {
        let manifest = try manifest(request)
        var entities: [StoreEntityCount] = []
        for entity in schema.entities {
            let count = try manifest.files[entity.name].map { try records(in: request.location, file: $0).count }
            entities.append(StoreEntityCount(name: entity.name, modelCount: count ?? 0))
        }
        return StoreInspection(
            storeIdentifier: manifest.storeIdentifier, schemaVersion: schema.version, entities: entities)
    }

    /// Checks that the manifest reads and that every file it names is there and holds a JSON array.
    public func verify(_ request: StoreMaintenanceRequest) throws -> StoreVerification {
        let manifest: EntityFilesDirectory.Manifest
        do {
            manifest = try self.manifest(request)
        } catch let error as DataStoreError where error.code == .corrupted {
            return StoreVerification(
                problems: [StoreProblem(file: EntityFilesDirectory.manifestName, offset: nil, reason: error.message)],
                remedy: error.remedy, isComplete: true)
        }
        var problems: [StoreProblem] = []
        var entities: [StoreEntityCount] = []
        for entity in schema.entities {
            guard let file = manifest.files[entity.name] else {
                entities.append(StoreEntityCount(name: entity.name, modelCount: 0))
                continue
            }
            do {
                let count = try records(in: request.location, file: file).count
                entities.append(StoreEntityCount(name: entity.name, modelCount: count))
            } catch {
                problems.append(StoreProblem(file: file, offset: nil, reason: "\(error)"))
            }
        }
        return StoreVerification(
            problems: problems, entities: entities, remedy: "Restore the directory from a backup",
            schemaVersion: schema.version, isComplete: true)
    }

    /// The directory's manifest; throws `notFound` when it has none.
    private func manifest(_ request: StoreMaintenanceRequest) throws -> EntityFilesDirectory.Manifest {
        let directory = EntityFilesDirectory(url: request.location, schema: try Schema(schema))
        guard let manifest = try directory.readManifest() else {
            throw DataStoreError(
                .notFound, "'\(request.location.path)' holds no entity-files store: it has no manifest",
                remedy: "Check the path")
        }
        return manifest
    }

    /// The records of one entity file, which must hold a JSON array.
    private func records(in directory: URL, file: String) throws -> [Any] {
        let data = try Data(contentsOf: directory.appendingPathComponent(file))
        guard let records = try JSONSerialization.jsonObject(with: data) as? [Any] else {
            throw DataStoreError(.corrupted, "'\(file)' does not hold a JSON array", remedy: "Restore it from a backup")
        }
        return records
    }
}
