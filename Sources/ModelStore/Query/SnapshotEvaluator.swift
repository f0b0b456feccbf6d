import Foundation

/// Evaluates store-neutral filters and sorts directly on snapshots, without materialising models.
public struct SnapshotEvaluator: Sendable {
    private let filter: StoreFilter
    private let entity: Schema.Entity

    /// An evaluator for a filter over an entity; throws ``DataStoreError/invalidPredicate`` naming
    /// any property the entity does not store.
    public init(filter: StoreFilter, entity: Schema.Entity) throws {
        self.filter = filter
        self.entity = entity
        try Self.check(filter, entity)
    }

    private static func check(_ filter: StoreFilter, _ entity: Schema.Entity) throws {
        switch filter {
        case .constant, .identifiers: break
        case .equal(let name, _):
            if entity.slot(of: name) == nil {
                throw DataStoreError(.invalidPredicate, "'\(name)' is not a stored property of '\(entity.name)'",
                                     entityName: entity.name)
            }
        case .and(let items), .or(let items): try items.forEach { try check($0, entity) }
        case .not(let item): try check(item, entity)
        }
    }

    /// Whether the snapshot matches the filter.
    public func matches(_ snapshot: DefaultSnapshot) -> Bool { Self.evaluate(filter, snapshot) }

    private static func evaluate(_ filter: StoreFilter, _ snapshot: DefaultSnapshot) -> Bool {
        switch filter {
        case .constant(let value): value
        case .identifiers(let ids): ids.contains(snapshot.persistentIdentifier)
        case .equal(let name, let value): snapshot[name] == value
        case .and(let items): items.allSatisfy { evaluate($0, snapshot) }
        case .or(let items): items.contains { evaluate($0, snapshot) }
        case .not(let item): !evaluate(item, snapshot)
        }
    }

    /// Sorts snapshots by the keys, breaking ties by identifier.
    public static func sort(_ snapshots: inout [DefaultSnapshot], by keys: [StoreSortKey], entity: Schema.Entity) throws {
        let slots = try keys.map { key -> Int in
            guard let slot = entity.slot(of: key.property) else {
                throw DataStoreError(.invalidPredicate, "cannot sort by '\(key.property)': it is not a stored property of '\(entity.name)'",
                                     entityName: entity.name)
            }
            return slot
        }
        snapshots.sort { lhs, rhs in
            for (key, slot) in zip(keys, slots) {
                let order = compare(lhs.values[slot], rhs.values[slot], key.comparison)
                if order != .orderedSame { return key.ascending == (order == .orderedAscending) }
            }
            return lhs.persistentIdentifier < rhs.persistentIdentifier
        }
    }

    /// Compares two stored values under a string comparison kind.
    public static func compare(_ lhs: StoreValue, _ rhs: StoreValue, _ comparison: StoreSortKey.Comparison) -> ComparisonResult {
        if case .string(let a) = lhs, case .string(let b) = rhs {
            switch comparison {
            case .binary: return StoreValue.order(a, b)
            case .localizedStandard: return a.localizedStandardCompare(b)
            case .caseInsensitive: return a.caseInsensitiveCompare(b)
            }
        }
        return StoreValue.compare(lhs, rhs)
    }

    /// Applies an offset and a limit.
    public static func window<Element>(_ items: [Element], offset: Int, limit: Int?) -> [Element] {
        let start = min(max(offset, 0), items.count)
        let end = limit.map { min(start + max($0, 0), items.count) } ?? items.count
        if start == 0 && end == items.count { return items }
        return Array(items[start..<end])
    }
}
