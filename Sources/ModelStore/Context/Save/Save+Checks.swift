import Foundation

// Save, step 4: relationship counts and uniqueness, checked before any store writes.
extension ModelContext {
    /// Checks the model counts of the relationships that limit them, in every snapshot of the lists
    /// (read in place: a save's lists are not joined into one, which copied every snapshot).
    func checkRelationshipCounts(_ lists: [DefaultSnapshot]...) throws {
        var last: Schema.Entity?
        var limits = false
        for snapshots in lists {
            for index in snapshots.indices {
                // Runs of snapshots share an entity: whether it limits a count is decided once per run.
                let entity = snapshots[index].entity
                if entity !== last {
                    last = entity
                    limits = entity.relationships.contains { $0.minimumModelCount > 0 || $0.maximumModelCount > 0 }
                }
                if limits { try checkRelationshipCounts(of: snapshots[index]) }
            }
        }
    }

    private func checkRelationshipCounts(of snapshot: DefaultSnapshot) throws {
        for relationship in snapshot.entity.relationships
        where relationship.minimumModelCount > 0 || relationship.maximumModelCount > 0 {
            let count = snapshot.values[relationship.slot].referencedIdentifiers.count
            let tooFew = relationship.minimumModelCount > 0 && count < relationship.minimumModelCount
            let tooMany = relationship.maximumModelCount > 0 && count > relationship.maximumModelCount
            if tooFew || tooMany {
                throw DataStoreError(
                    .relationshipCountViolation,
                    "\(snapshot.persistentIdentifier) has \(count) model(s) in '\(snapshot.entity.name).\(relationship.name)', outside \(relationship.minimumModelCount)...\(relationship.maximumModelCount == 0 ? "∞" : String(relationship.maximumModelCount))",
                    remedy: "Add or remove related models before saving",
                    entityName: snapshot.entity.name, propertyNames: [relationship.name])
            }
        }
    }

    /// Checks unique constraints for stores that don't enforce them natively, so every adapter
    /// rejects duplicates before anything is written.
    func checkUniqueness(inserted: [DefaultSnapshot], updated: [DefaultSnapshot], deleted: [DefaultSnapshot]) throws {
        var unenforced = Set<String>()
        var seen = Set<ObjectIdentifier>()
        var last: Schema.Entity?
        // Runs of snapshots share an entity: each run's is looked up once.
        for snapshot in [inserted, updated].joined() where snapshot.entity !== last {
            last = snapshot.entity
            guard seen.insert(ObjectIdentifier(snapshot.entity)).inserted else { continue }
            let entity = snapshot.entity
            guard !entity.uniquenessConstraints.isEmpty,
                try !container.channel(for: entity.name).enforcesUniqueness
            else { continue }
            unenforced.insert(entity.name)
        }
        // Stores that enforce uniqueness check it themselves, atomically with the write.
        guard !unenforced.isEmpty else { return }
        let vacated = Set(deleted.map(\.persistentIdentifier))
        let changing = Dictionary((inserted + updated).map { ($0.persistentIdentifier, $0) }, uniquingKeysWith: { $1 })
        for entityName in unenforced.sorted() {
            let channel = try container.channel(for: entityName)
            // The store's rows that this save keeps as they are, checked with the save's changes by the
            // same checker the stores use.
            let entity = try self.entity(named: entityName)
            let kept = try channel.storedSnapshots(of: entity, editingState: editingState).filter {
                !vacated.contains($0.persistentIdentifier) && changing[$0.persistentIdentifier] == nil
            }
            let claims = changing.values.filter { $0.entity.name == entityName }
                .sorted { $0.persistentIdentifier < $1.persistentIdentifier }
            try UniquenessCheck(entity: entity).check(claims: claims, kept: kept)
        }
    }
}
