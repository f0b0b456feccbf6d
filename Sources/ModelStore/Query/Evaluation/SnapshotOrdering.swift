import Foundation

/// The order and window of a fetch's snapshots, as `SortDescriptor`, `fetchOffset` and `fetchLimit` give
/// them: what the context's snapshot stage runs, and what the adapter kit's `SnapshotEvaluator` offers
/// adapters.
package enum SnapshotOrdering {
    /// Sorts snapshots by the keys, breaking ties by identifier; with no keys, by identifier.
    ///
    /// Throws ``DataStoreError/invalidPredicate`` for a key that is not a stored attribute of the entity.
    package static func sort(
        _ snapshots: inout [DefaultSnapshot], by keys: [StoreSortKey], entity: Schema.Entity
    ) throws {
        let slots = try sortSlots(keys, entity: entity)
        snapshots.sort { lhs, rhs in
            for (key, slot) in zip(keys, slots) {
                let order = ValueSemantics.sortOrder(lhs.values[slot], rhs.values[slot], key.comparison)
                if order != .orderedSame { return key.ascending == (order == .orderedAscending) }
            }
            return lhs.persistentIdentifier < rhs.persistentIdentifier
        }
    }

    /// The slots of the sort keys' attributes; throws ``DataStoreError/invalidPredicate`` for a key
    /// that is not a stored attribute of the entity.
    package static func sortSlots(_ keys: [StoreSortKey], entity: Schema.Entity) throws -> [Int] {
        try keys.map { key -> Int in
            guard let slot = entity.slot(of: key.property), case .attribute = entity.properties[slot] else {
                throw DataStoreError(
                    .invalidPredicate,
                    "cannot sort by '\(key.property)': it is not a stored attribute of '\(entity.name)'",
                    remedy: "Sort by one of: \(entity.attributes.map { "'\($0.name)'" }.joined(separator: ", "))",
                    entityName: entity.name)
            }
            return slot
        }
    }

    /// Applies an offset and a limit.
    @inlinable
    package static func window<Element>(_ items: [Element], offset: Int, limit: Int?) -> [Element] {
        let start = min(max(offset, 0), items.count)
        let end = limit.map { min(start + max($0, 0), items.count) } ?? items.count
        if start == 0 && end == items.count { return items }
        return Array(items[start..<end])
    }
}
