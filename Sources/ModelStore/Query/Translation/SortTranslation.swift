import Foundation

/// Translates `SortDescriptor`s into ``StoreSortKey``s that order stored values exactly as the
/// descriptors order models.
///
/// On Linux, `SortDescriptor(\.name)` compares strings with Swift's `<` (Foundation's default of
/// `.localizedStandard` exists only on Apple platforms), and a `String.StandardComparator` passed
/// explicitly can only be `.lexical`. A descriptor translates when its key path is a stored
/// attribute of a type whose order stored values reproduce (integers, floating point, `Decimal`,
/// `String`, `Date`, `UUID` and their optionals); enums (whose `Comparable` may be custom) and
/// anything else sort on models.
enum SortTranslation {
    private static let cache = LockedValue<[CacheKey: StoreSortKey?]>([:])

    /// A descriptor as a cache key.
    private struct CacheKey: Hashable, @unchecked Sendable {
        // Safety: it only ever holds a `SortDescriptor`, which is `Sendable`.
        let descriptor: AnyHashable
    }

    /// The keys for the descriptors, or `nil` if any of them must sort on models.
    static func keys<T: PersistentModel>(_ descriptors: [SortDescriptor<T>], entity: Schema.Entity) -> [StoreSortKey]? {
        var keys: [StoreSortKey] = []
        for descriptor in descriptors {
            guard let key = key(descriptor, entity: entity) else { return nil }
            keys.append(key)
        }
        return keys
    }

    private static func key<T: PersistentModel>(
        _ descriptor: SortDescriptor<T>, entity: Schema.Entity
    ) -> StoreSortKey? {
        let cacheKey = CacheKey(descriptor: AnyHashable(descriptor))
        if let cached = cache.withLock({ $0[cacheKey] }) { return cached }
        let key = translate(descriptor, entity: entity)
        cache.withLock { cache in
            if cache.count > 512 { cache.removeAll() }
            cache[cacheKey] = .some(key)
        }
        return key
    }

    private static func translate<T: PersistentModel>(
        _ descriptor: SortDescriptor<T>, entity: Schema.Entity
    ) -> StoreSortKey? {
        guard let keyPath = descriptor.keyPath, let name = entity.propertyName(for: keyPath),
            let attribute = entity.attribute(named: name), let (low, high) = probeValues(attribute.valueType)
        else { return nil }
        let comparison: StoreSortKey.Comparison
        switch descriptor.stringComparator {
        case nil: comparison = .binary
        case String.StandardComparator.lexical?: comparison = .lexical
        default: return nil
        }
        // The direction `compare` really applies (on Linux, setting `order` after creating a
        // descriptor does not change how it compares), found on two scratch models.
        guard let ascending = direction(descriptor, attribute: attribute, entity: entity, low: low, high: high) else {
            return nil
        }
        return StoreSortKey(property: name, ascending: ascending, comparison: comparison)
    }

    /// Two values of the attribute's type, the first ordered before the second.
    private static func probeValues(_ type: AttributeType) -> (StoreValue, StoreValue)? {
        switch type.unwrapped {
        case .integer: (.int(0), .int(1))
        case .double, .float: (.double(0), .double(1))
        case .decimal: (.decimal(0), .decimal(1))
        case .string: (.string("a"), .string("b"))
        case .date: (.date(Date(timeIntervalSinceReferenceDate: 0)), .date(Date(timeIntervalSinceReferenceDate: 1)))
        case .uuid:
            (
                .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))),
                .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)))
            )
        default: nil
        }
    }

    private static func direction<T: PersistentModel>(
        _ descriptor: SortDescriptor<T>, attribute: Schema.Attribute, entity: Schema.Entity,
        low: StoreValue, high: StoreValue
    ) -> Bool? {
        guard let first = scratch(T.self, entity: entity, slot: attribute.slot, value: low),
            let second = scratch(T.self, entity: entity, slot: attribute.slot, value: high)
        else { return nil }
        let ascending: Bool
        switch descriptor.compare(first, second) {
        case .orderedAscending: ascending = true
        case .orderedDescending: ascending = false
        case .orderedSame: return nil
        }
        if attribute.isOptional {
            // `nil` must come first ascending and last descending, as stored sorts place it.
            guard let none = scratch(T.self, entity: entity, slot: attribute.slot, value: .null) else { return nil }
            let expected: ComparisonResult = ascending ? .orderedAscending : .orderedDescending
            guard descriptor.compare(none, first) == expected else { return nil }
        }
        return ascending
    }

    /// An unregistered model with default values and one attribute set.
    private static func scratch<T: PersistentModel>(
        _ type: T.Type, entity: Schema.Entity, slot: Int, value: StoreValue
    ) -> T? {
        var values = entity.properties.map(\.initialValue)
        values[slot] = value
        let model = T()
        do {
            try (entity.layout(for: T.self) ?? entity.layout).apply(values, to: model)
        } catch {
            return nil
        }
        return model
    }
}
