import Foundation

/// What counts as a unique value, and the check a context runs for a store that does not enforce
/// uniqueness itself: the same rule, and the same error, as the stores that do.
///
/// A key is the values of a constraint's properties, in its order, compared as ``StoreValue``s; a key
/// with a `nil` claims nothing and conflicts with nothing (as in SQL).
package struct UniquenessCheck {
    /// The entity whose constraints are checked.
    let entity: Schema.Entity
    /// Each constraint's property slots, in the constraint's order.
    let slots: [[Int]]

    /// A check of `entity`'s uniqueness constraints.
    package init(entity: Schema.Entity) {
        self.entity = entity
        slots = entity.uniquenessConstraints.map { names in names.compactMap { entity.slot(of: $0) } }
    }

    /// The key `values` give constraint `constraint`, or `nil` when one of its values is `nil`.
    package func key(_ constraint: Int, of values: [StoreValue]) -> [StoreValue]? {
        var key: [StoreValue] = []
        key.reserveCapacity(slots[constraint].count)
        for slot in slots[constraint] {
            let value = slot < values.count ? values[slot] : .null
            if value.isNull { return nil }
            key.append(value)
        }
        return key
    }

    /// Throws ``DataStoreError/uniqueConstraintViolation(entityName:propertyNames:conflictingValues:file:line:)``
    /// when one of `claims` has a key that another claim, or one of `kept` (rows the save leaves as they
    /// are), already has.
    ///
    /// - Parameters:
    ///   - claims: The save's inserted and updated snapshots of the entity.
    ///   - kept: The stored snapshots of the entity that the save neither changes nor deletes.
    package func check(claims: [DefaultSnapshot], kept: [DefaultSnapshot]) throws {
        for constraint in slots.indices {
            var owners: [[StoreValue]: PersistentIdentifier] = [:]
            owners.reserveCapacity(claims.count + kept.count)
            for snapshot in kept {
                guard let key = key(constraint, of: snapshot.values) else { continue }
                owners[key] = snapshot.persistentIdentifier
            }
            for snapshot in claims {
                guard let key = key(constraint, of: snapshot.values) else { continue }
                let id = snapshot.persistentIdentifier
                if let owner = owners.updateValue(id, forKey: key), owner != id {
                    throw DataStoreError.uniqueConstraintViolation(
                        entityName: entity.name, propertyNames: entity.uniquenessConstraints[constraint],
                        conflictingValues: key)
                }
            }
        }
    }
}
