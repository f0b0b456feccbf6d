import Foundation
import ModelStore

extension JSONFileStore {
    /// Refuses a save that touches a model another process changed or deleted since this store read the file.
    ///
    /// - Parameters:
    ///   - loaded: the table this store had before it reloaded the file (what the save was based on).
    ///   - current: the reloaded table.
    static func checkConflicts(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, loaded: SnapshotTable, current: SnapshotTable, paths: Paths
    ) throws {
        let deleted = Set(request.deleted.map(\.persistentIdentifier))
        for id in request.updated.map(\.persistentIdentifier) + request.deleted.map(\.persistentIdentifier) {
            let before = loaded.snapshot(for: id)
            let now = current.snapshot(for: id)
            if now == nil && deleted.contains(id) { continue }  // deleted on both sides
            if let before, let now, before.values.isIdentical(to: now.values) { continue }
            throw DataStoreError(
                .conflict,
                "cannot save \(id): another process \(now == nil ? "deleted" : "changed") it after this store read '\(paths.document)'",
                remedy: "Fetch it again (the store has read the other process's changes) and retry the save",
                entityName: id.entityName)
        }
    }

    /// Refuses to store a relationship to a model that doesn't exist: from a changed snapshot, or
    /// to a deleted model from one that stays.
    func checkReferences(in next: SnapshotTable, changed: [DefaultSnapshot], deleted: [PersistentIdentifier]) throws {
        for snapshot in changed {
            for relationship in snapshot.entity.relationships {
                for id in snapshot.values[relationship.slot].referencedIdentifiers {
                    if id.isTemporary {
                        throw DataStoreError(
                            .notFound,
                            "\(snapshot.persistentIdentifier) refers through '\(snapshot.entity.name).\(relationship.name)' to a new model that the save does not insert",
                            remedy: "Insert the related model into the context before saving", entityName: snapshot.entity.name,
                            propertyNames: [relationship.name])
                    }
                    guard id.storeIdentifier == identifier, next.snapshot(for: id) == nil else { continue }
                    throw DataStoreError(
                        .notFound,
                        "\(snapshot.persistentIdentifier) refers through '\(snapshot.entity.name).\(relationship.name)' to \(id), which the store does not have",
                        remedy: "Remove the reference, or fetch the related model again; another context may have deleted it",
                        entityName: snapshot.entity.name, propertyNames: [relationship.name])
                }
            }
        }
        let gone = Set(deleted.filter { next.snapshot(for: $0) == nil })
        guard !gone.isEmpty else { return }
        let goneEntities = Set(gone.map(\.entityName))
        for entity in schema.entities {
            let relationships = entity.relationships.filter { goneEntities.contains($0.destination) }
            guard !relationships.isEmpty else { continue }
            for snapshot in next.snapshots(of: entity.name) {
                for relationship in relationships {
                    for id in snapshot.values[relationship.slot].referencedIdentifiers where gone.contains(id) {
                        throw DataStoreError(
                            .notFound,
                            "cannot delete \(id): \(snapshot.persistentIdentifier) still refers to it through '\(entity.name).\(relationship.name)'",
                            remedy: "Clear that relationship first, or give it an inverse so a .nullify or .cascade rule updates it",
                            entityName: entity.name, propertyNames: [relationship.name])
                    }
                }
            }
        }
    }
}

extension [StoreValue] {
    /// Whether two value lists hold the same values, comparing floating-point numbers by their bits
    /// (so that a stored NaN equals itself).
    func isIdentical(to other: [StoreValue]) -> Bool {
        count == other.count && zip(self, other).allSatisfy { $0.isIdentical(to: $1) }
    }
}

extension StoreValue {
    /// Whether two values are the same, comparing floating-point numbers by their bits.
    func isIdentical(to other: StoreValue) -> Bool {
        switch (self, other) {
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.date(let a), .date(let b)):
            a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.array(let a), .array(let b)): a.isIdentical(to: b)
        case (.dictionary(let a), .dictionary(let b)):
            a.count == b.count && a.allSatisfy { key, value in b[key].map { value.isIdentical(to: $0) } ?? false }
        default: self == other
        }
    }
}
