import Foundation
import ModelStore
import ModelStoreAdapterKit

extension JSONFileStore {
    /// Refuses a save that touches a model another process changed or deleted since this store read the file.
    ///
    /// - Parameters:
    ///   - loaded: the table this store had before it reloaded the file (what the save was based on).
    ///   - current: the reloaded table.
    static func checkConflicts(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, loaded: SnapshotTable, current: SnapshotTable,
        paths: Paths
    ) throws {
        let deleted = Set(request.deleted.map(\.persistentIdentifier))
        for id in request.updated.map(\.persistentIdentifier) + request.deleted.map(\.persistentIdentifier) {
            let before = loaded.snapshot(for: id)
            let now = current.snapshot(for: id)
            if now == nil && deleted.contains(id) { continue }  // deleted on both sides
            if let before, let now, before.values.isIdentical(to: now.values) { continue }
            throw DataStoreError(
                .conflict,
                "cannot save \(id): another process \(now == nil ? "deleted" : "changed") it after this store read "
                    + "'\(paths.document)'",
                remedy: "Fetch it again (the store has read the other process's changes) and retry the save",
                entityName: id.entityName)
        }
    }

    /// Keeps the file free of relationships to models that don't exist: clears every reference to
    /// a model of this store that `next` doesn't have (a to-one becomes `nil`, a to-many loses the
    /// identifier), and returns the snapshots it changed, for the context to re-register.
    ///
    /// Such references are left behind when a model is deleted while a relationship without an
    /// inverse (or with a `.noAction` rule) still refers to it; they read `nil` either way, and
    /// clearing them means the file never holds one. A reference to a model the save does not
    /// insert (a temporary identifier) is a mistake and throws ``DataStoreError/notFound``.
    func clearDanglingReferences(
        in next: inout SnapshotTable, changed: [DefaultSnapshot], deleted: [PersistentIdentifier]
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        var repaired: [PersistentIdentifier: DefaultSnapshot] = [:]
        func repair(_ id: PersistentIdentifier, isMissing: (PersistentIdentifier) -> Bool) {
            guard var snapshot = repaired[id] ?? next.snapshot(for: id) else { return }
            var modified = false
            for relationship in snapshot.entity.relationships {
                switch snapshot.values[relationship.slot] {
                case .reference(let target) where isMissing(target):
                    snapshot.values[relationship.slot] = .null
                    modified = true
                case .references(let targets) where targets.contains(where: isMissing):
                    snapshot.values[relationship.slot] = .references(targets.filter { !isMissing($0) })
                    modified = true
                default:
                    break
                }
            }
            if modified { repaired[id] = snapshot }
        }
        let table = next
        let isMissing = { (target: PersistentIdentifier) in
            target.storeIdentifier == self.identifier && table.snapshot(for: target) == nil
        }
        for snapshot in changed where !snapshot.entity.relationships.isEmpty {
            var hasMissing = false
            for relationship in snapshot.entity.relationships {
                for target in snapshot.values[relationship.slot].referencedIdentifiers {
                    if !target.isTemporary {
                        hasMissing = hasMissing || isMissing(target)
                        continue
                    }
                    throw DataStoreError(
                        .notFound,
                        "\(snapshot.persistentIdentifier) refers through "
                            + "'\(snapshot.entity.name).\(relationship.name)' to a new model that the save does not "
                            + "insert",
                        remedy: "Insert the related model into the context before saving",
                        entityName: snapshot.entity.name,
                        propertyNames: [relationship.name])
                }
            }
            if hasMissing { repair(snapshot.persistentIdentifier, isMissing: isMissing) }
        }
        let gone = Set(deleted.filter { next.snapshot(for: $0) == nil })
        if !gone.isEmpty {
            let goneEntities = Set(gone.map(\.entityName))
            for entity in schema.entities
            where entity.relationships.contains(where: { goneEntities.contains($0.destination) }) {
                for snapshot in next.snapshots(of: entity.name) {
                    repair(snapshot.persistentIdentifier) { gone.contains($0) }
                }
            }
        }
        if !repaired.isEmpty { next.applyUpdate(Array(repaired.values)) }
        return repaired
    }
}

extension [StoreValue] {
    /// Whether two value lists hold the same stored values (``StoreValue/isIdentical(to:)``), so a
    /// stored NaN equals itself and `-0.0` differs from `0.0`.
    func isIdentical(to other: [StoreValue]) -> Bool {
        count == other.count && zip(self, other).allSatisfy { $0.isIdentical(to: $1) }
    }
}
