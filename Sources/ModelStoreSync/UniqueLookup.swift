import Foundation
import ModelStore

/// The models of a store that already hold the unique values of a batch of new models, read with
/// one query per uniqueness constraint and chunk of values instead of one per new model.
struct UniqueLookup {
    /// The models found, by entity and constraint, keyed by their values of the constraint.
    private var found: [String: [[[StoreValue]: DefaultSnapshot]]] = [:]

    /// The models of `store` holding the unique values some of `models` (entity name and values by
    /// property name) have.
    static func load(_ models: [(entity: String, values: [String: StoreValue])], store: SyncStore) throws
        -> UniqueLookup
    {
        var lookup = UniqueLookup()
        for (entityName, group) in Dictionary(grouping: models, by: \.entity) {
            guard let entity = store.schema.entity(named: entityName), !entity.uniquenessConstraints.isEmpty else {
                continue
            }
            var byConstraint: [[[StoreValue]: DefaultSnapshot]] = []
            for constraint in entity.uniquenessConstraints {
                var matches: [[StoreValue]: DefaultSnapshot] = [:]
                let names = constraint.filter { entity.attribute(named: $0) != nil }
                if let first = names.first, names.count == constraint.count {
                    let wanted = Set(group.compactMap { $0.values[first] }).filter { $0 != .null }
                    for row in try store.fetch(entityName, where: first, in: Array(wanted)) {
                        matches[names.map { row[$0] ?? .null }] = row
                    }
                }
                byConstraint.append(matches)
            }
            lookup.found[entityName] = byConstraint
        }
        return lookup
    }

    /// A model that holds every value of one of `entity`'s uniqueness constraints that `values`
    /// holds; `nil` when there is none. A constraint whose values include a missing or `null` one
    /// never matches, as SQL's UNIQUE lets such rows be.
    func match(entity: Schema.Entity, values: [String: StoreValue]) -> DefaultSnapshot? {
        guard let byConstraint = found[entity.name] else { return nil }
        for (constraint, matches) in zip(entity.uniquenessConstraints, byConstraint) {
            let key = constraint.map { values[$0] ?? .null }
            guard !key.contains(.null), let row = matches[key] else { continue }
            return row
        }
        return nil
    }
}
