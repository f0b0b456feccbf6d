import Foundation
import ModelStore

extension SnapshotTable {
    /// Throws `DataStoreError.Code.notFound` when one of `snapshots` refers to a new model by a
    /// temporary identifier: a prepared save has replaced every temporary identifier of a model it
    /// inserts, so one that is left names a model the save does not insert.
    ///
    /// It reads only the snapshots, so a store calls it before it applies a change.
    public static func checkReferencesArePermanent(_ snapshots: some Sequence<DefaultSnapshot>) throws {
        for snapshot in snapshots where !snapshot.entity.relationships.isEmpty {
            for relationship in snapshot.entity.relationships {
                for target in snapshot.values[relationship.slot].referencedIdentifiers where target.isTemporary {
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
        }
    }

    /// The models whose references to models of store `storeIdentifier` that the table does not
    /// have must be cleared, as they will be stored: a to-one becomes `nil`, a to-many loses the
    /// identifier. Nothing is changed; apply the result with ``applyUpdate(_:)``.
    ///
    /// Such references are left behind when a model is deleted while a relationship without an
    /// inverse (or with a `.noAction` rule) still refers to it; they read `nil` either way. Call it on
    /// the table after a change is applied, with the snapshots the change stored (`changed`, whose
    /// references are checked) and the models it deleted (`deleted`, whose referrers are found), once
    /// ``checkReferencesArePermanent(_:)`` has passed.
    public func danglingReferenceRepairs(
        changed: [DefaultSnapshot], deleted: [PersistentIdentifier], storeIdentifier: String
    ) -> [PersistentIdentifier: DefaultSnapshot] {
        var repaired: [PersistentIdentifier: DefaultSnapshot] = [:]
        func repair(_ id: PersistentIdentifier, isMissing: (PersistentIdentifier) -> Bool) {
            guard var snapshot = repaired[id] ?? snapshot(for: id) else { return }
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
        let isMissing = { (target: PersistentIdentifier) in
            target.storeIdentifier == storeIdentifier && self.snapshot(for: target) == nil
        }
        for snapshot in changed where !snapshot.entity.relationships.isEmpty {
            let hasMissing = snapshot.entity.relationships.contains { relationship in
                snapshot.values[relationship.slot].referencedIdentifiers.contains {
                    !$0.isTemporary && isMissing($0)
                }
            }
            if hasMissing { repair(snapshot.persistentIdentifier, isMissing: isMissing) }
        }
        let gone = Set(deleted.filter { snapshot(for: $0) == nil })
        if !gone.isEmpty {
            let goneEntities = Set(gone.map(\.entityName))
            for entity in schema.entities
            where entity.relationships.contains(where: { goneEntities.contains($0.destination) }) {
                for snapshot in snapshots(of: entity.name) {
                    repair(snapshot.persistentIdentifier) { gone.contains($0) }
                }
            }
        }
        return repaired
    }
}
