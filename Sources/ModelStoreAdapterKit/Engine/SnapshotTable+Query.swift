import Foundation
import ModelStore

extension SnapshotTable {
    /// The snapshots a query selects, filtered, sorted (ties by identifier), offset and limited.
    ///
    /// Runs every `StoreFilter` (over the table's columns where it can, through
    /// ``SnapshotEvaluator`` for paths into other rows) and uses an index when one applies (see
    /// ``accessPath(for:)``). Throws `DataStoreError.notFound` for an unknown entity and
    /// `DataStoreError.invalidPredicate` for a filter or sort that names a property the entity
    /// does not store.
    public func fetch(_ query: StoreQuery) throws -> [DefaultSnapshot] {
        try withEntityTable(query.entityName) { table in
            try table.rows(query, compile: compiler(for: table.entity)).map { table.snapshot(at: $0) }
        }
    }

    /// The identifiers of the models ``fetch(_:)`` returns, in the same order, without building
    /// their snapshots.
    public func fetchIdentifiers(_ query: StoreQuery) throws -> [PersistentIdentifier] {
        try withEntityTable(query.entityName) { table in
            try table.rows(query, compile: compiler(for: table.entity)).map { table.ids[$0] }
        }
    }

    /// How many models ``fetch(_:)`` returns, without building their snapshots.
    public func fetchCount(_ query: StoreQuery) throws -> Int {
        try withEntityTable(query.entityName) { table in
            if query.filter == nil, query.offset <= 0, query.limit == nil { return table.count }
            return try table.rows(query, compile: compiler(for: table.entity)).count
        }
    }

    /// How ``fetch(_:)`` would find the rows of a query: a scan, or which index.
    public func accessPath(for query: StoreQuery) -> StoreAccessPath {
        guard let table = tables[query.entityName] else { return StoreAccessPath(kind: .scan) }
        return table.plan(query).path
    }

    /// Runs `body` on the table of an entity, read in place (a copy of the table would retain each of
    /// its columns and indexes).
    private func withEntityTable<Result>(
        _ name: String, _ body: (borrowing EntityTable) throws -> Result
    ) throws -> Result {
        guard let index = tables.index(forKey: name) else {
            throw DataStoreError(
                .notFound, "the store has no entity '\(name)'",
                remedy: "Add the model type to the container's schema")
        }
        return try body(tables.values[index])
    }

    /// Compiles filters over an entity's snapshots, resolving relationships inside the table.
    private func compiler(for entity: Schema.Entity) -> (StoreFilter) throws -> SnapshotEvaluator {
        let table = self
        let schema = schema
        return { filter in
            try SnapshotEvaluator(filter: filter, entity: entity, schema: schema) { table.snapshot(for: $0) }
        }
    }
}

extension SnapshotTable.EntityTable {
    /// How rows are found for a query.
    struct Access {
        enum Method {
            /// Read every row.
            case scan
            /// Read these rows, in identifier order (the filter still applies).
            case positions([Int])
            /// Walk an ordered index in sort order until the window is full.
            case sortedWindow(Int)
        }
        let method: Method
        let path: StoreAccessPath
    }

    /// The cheapest way to reach the rows a query selects, judged from its top-level conjuncts.
    func plan(_ query: StoreQuery) -> Access {
        let conjuncts = query.filter?.conjuncts ?? []
        if let lookup = lookup(conjuncts) { return lookup }
        var best: (positions: [Int], path: StoreAccessPath)?
        for (index, bounds) in rangeBounds(conjuncts) {
            let (slice, tail) = orderedIndex(index).candidates(lower: bounds.lower, upper: bounds.upper)
            let estimate = slice.count + tail.count
            guard estimate * 2 < count, estimate < (best?.positions.count ?? .max) else { continue }
            let found = (slice.filter(isCurrent) + tail.filter(isCurrent)).map(\.position).sorted()
            best = (
                found,
                StoreAccessPath(
                    kind: .orderedIndexRange, properties: [orderedIndexes[index].property], estimatedRows: found.count)
            )
        }
        if let sortIndex = sortedWindowIndex(query) {
            let wanted = query.offset + (query.limit ?? 0)
            if best == nil || best!.positions.count > wanted * 4 {
                return Access(
                    method: .sortedWindow(sortIndex),
                    path: StoreAccessPath(
                        kind: .orderedIndexSort, properties: [orderedIndexes[sortIndex].property]))
            }
        }
        if let best { return Access(method: .positions(best.positions), path: best.path) }
        return Access(method: .scan, path: StoreAccessPath(kind: .scan, estimatedRows: count))
    }

    // MARK: Lookups

    /// Identifiers, unique keys and hash indexes: rows found by equality or membership.
    private func lookup(_ conjuncts: [StoreFilter]) -> Access? {
        var smallest: Set<PersistentIdentifier>?
        for case .identifiers(let ids) in conjuncts where ids.count < (smallest?.count ?? .max) { smallest = ids }
        if let smallest {
            let found = smallest.compactMap { row(of: $0) }.sorted()
            return Access(
                method: .positions(found), path: StoreAccessPath(kind: .identifiers, estimatedRows: found.count))
        }
        // The equality and membership conditions on the entity's own properties, the first of each
        // per property: a query has few, so lists, not dictionaries of property names.
        var equal: [(property: String, value: StoreValue)] = []
        var members: [(property: String, values: [StoreValue])] = []
        for conjunct in conjuncts {
            switch conjunct {
            case .compare(let path, .equal, let value) where path.isDirect && isIndexable(value, for: path.property):
                if !equal.contains(where: { $0.property == path.property }) { equal.append((path.property, value)) }
            case .isIn(let path, let values)
            where path.isDirect && values.allSatisfy({ isIndexable($0, for: path.property) }):
                if !members.contains(where: { $0.property == path.property }) {
                    members.append((path.property, values))
                }
            default:
                break
            }
        }
        if equal.isEmpty && members.isEmpty { return nil }
        for (constraint, names) in entity.uniquenessConstraints.enumerated() {
            // A unique index holds no key with a `nil` in it.
            guard let keys = Self.keys(names, equal: equal, members: members),
                !keys.contains(where: { $0.contains(where: \.isNull) })
            else { continue }
            // One key (an equality on each property) owns at most one row; several may share rows.
            let found =
                keys.count == 1
                ? uniqueOwner(constraint, count: keys[0].count) { keys[0][$0] }.map { [Int($0)] } ?? []
                : Set(keys.compactMap { key in uniqueOwner(constraint, count: key.count) { key[$0] }.map(Int.init) })
                    .sorted()
            return Access(
                method: .positions(found),
                path: StoreAccessPath(
                    kind: .uniqueIndex, properties: names, estimatedRows: found.count))
        }
        for position in hashIndexes.indices {
            guard let keys = Self.keys(hashIndexes[position].properties, equal: equal, members: members) else {
                continue
            }
            let index = hashIndex(position)
            // A bucket is kept in ascending order, and keys share no rows only when there is one.
            let found =
                keys.count == 1
                ? (index.buckets[IndexKey(keys[0])] ?? []).map(Int.init)
                : Set(keys.flatMap { index.buckets[IndexKey($0)] ?? [] }).sorted().map(Int.init)
            return Access(
                method: .positions(found),
                path: StoreAccessPath(
                    kind: .hashIndex, properties: index.properties, estimatedRows: found.count))
        }
        return nil
    }

    /// The index keys equality and membership conditions pin down for these properties, if they all are.
    private static func keys(
        _ names: [String], equal: [(property: String, value: StoreValue)],
        members: [(property: String, values: [StoreValue])]
    ) -> [[StoreValue]]? {
        var keys: [[StoreValue]] = [[]]
        for name in names {
            if let value = equal.first(where: { $0.property == name })?.value {
                keys = keys.map { $0 + [value] }
            } else if let values = members.first(where: { $0.property == name })?.values {
                keys = keys.flatMap { key in values.map { key + [$0] } }
            } else {
                return nil
            }
            if keys.count > 64 { return nil }
        }
        return keys
    }

    /// Whether a value can be looked up in an index of a property: it is of the kind the property's
    /// codec stores (so hashing agrees with `==`), and not a decimal or a `NaN`.
    private func isIndexable(_ value: StoreValue, for property: String) -> Bool {
        guard let attribute = entity.attribute(named: property) else { return false }
        if value.isNull { return attribute.isOptional }
        if case .double(let number) = value, number.isNaN { return false }
        return Self.storedKind(of: attribute.valueType) == value.kindName
    }

    /// The `StoreValue` case an attribute type's codec produces, for the types indexes serve.
    static func storedKind(of type: AttributeType) -> String? {
        switch type.unwrapped {
        case .bool: "bool"
        case .integer(let bits, let signed): !signed && bits == 64 ? "uint" : "int"
        case .double, .float: "double"
        case .string: "string"
        case .date: "date"
        case .data: "data"
        case .uuid: "uuid"
        case .url: "url"
        case .enumeration(_, let raw): storedKind(of: raw)
        default: nil
        }
    }

    // MARK: Ordered indexes

    /// For each ordered index, the tightest bounds the range conditions on its property give.
    private func rangeBounds(_ conjuncts: [StoreFilter]) -> [(Int, (lower: StoreValue?, upper: StoreValue?))] {
        var result: [(Int, (lower: StoreValue?, upper: StoreValue?))] = []
        for (index, ordered) in orderedIndexes.enumerated() {
            var lower: StoreValue?
            var upper: StoreValue?
            func raise(_ value: StoreValue) {
                if lower == nil || ValueSemantics.sortOrder(value, lower!, .binary) == .orderedDescending {
                    lower = value
                }
            }
            func cap(_ value: StoreValue) {
                if upper == nil || ValueSemantics.sortOrder(value, upper!, .binary) == .orderedAscending {
                    upper = value
                }
            }
            for conjunct in conjuncts {
                switch conjunct {
                case .compare(let path, let op, let value)
                where path.isDirect && path.property == ordered.property && !value.isNull
                    && isIndexable(value, for: ordered.property):
                    switch op {
                    case .greater, .greaterOrEqual: raise(value)
                    case .less, .lessOrEqual: cap(value)
                    case .equal:
                        raise(value)
                        cap(value)
                    case .notEqual: break
                    }
                case .range(let path, let range) where path.isDirect && path.property == ordered.property:
                    if let low = range.lower, isIndexable(low, for: ordered.property) { raise(low) }
                    if let high = range.upper, isIndexable(high, for: ordered.property) { cap(high) }
                default:
                    break
                }
            }
            if lower != nil || upper != nil { result.append((index, (lower, upper))) }
        }
        return result
    }

    /// The ordered index that gives a limited query's first sort key, when its order is the sort's.
    private func sortedWindowIndex(_ query: StoreQuery) -> Int? {
        guard query.limit != nil, let first = query.sort.first, first.comparison == .binary,
            let index = orderedIndexes.firstIndex(where: { $0.property == first.property }),
            !orderedIndex(index).hasNotANumber(isCurrent: isCurrent)
        else { return nil }
        return index
    }

    /// A sorted, windowed fetch read from an ordered index: rows come in the first key's order
    /// (ties by identifier), whole groups of equal first keys are taken until the window is full,
    /// and those are sorted by every key.
    func sortedWindow(_ query: StoreQuery, index: Int, matches: RowTest?) throws -> [Int] {
        let ordered = orderedIndex(index)
        let ascending = query.sort[0].ascending
        let wanted = max(query.offset, 0) + max(query.limit ?? 0, 0)
        let tail = SnapshotTable.OrderedIndex.sorted(ordered.pending.filter(isCurrent))
        var taken: [Int] = []
        var lastValue: StoreValue?
        var walker = OrderedWalk(sorted: ordered.sorted, tail: tail, ascending: ascending)
        while let group = walker.nextGroup() {
            if taken.count >= wanted, let lastValue,
                ValueSemantics.sortOrder(group[0].value, lastValue, .binary) != .orderedSame
            {
                break
            }
            for entry in group where isCurrent(entry) && matches?(entry.position) ?? true {
                taken.append(entry.position)
                lastValue = entry.value
            }
            if taken.count >= wanted && query.sort.count == 1 { break }
        }
        try sort(&taken, by: query.sort)
        return SnapshotEvaluator.window(taken, offset: query.offset, limit: query.limit)
    }
}

/// Walks two sorted entry lists as one, by groups of equal values, in either direction; each group
/// lists its entries by position (identifier order).
private struct OrderedWalk {
    let sorted: [SnapshotTable.OrderedIndex.Entry]
    let tail: [SnapshotTable.OrderedIndex.Entry]
    let ascending: Bool
    private var i: Int
    private var j: Int

    init(sorted: [SnapshotTable.OrderedIndex.Entry], tail: [SnapshotTable.OrderedIndex.Entry], ascending: Bool) {
        self.sorted = sorted
        self.tail = tail
        self.ascending = ascending
        i = ascending ? 0 : sorted.count - 1
        j = ascending ? 0 : tail.count - 1
    }

    /// The next entry in walking order, and whether it comes from `sorted`.
    private func peek() -> (entry: SnapshotTable.OrderedIndex.Entry, fromSorted: Bool)? {
        let a = i >= 0 && i < sorted.count ? sorted[i] : nil
        let b = j >= 0 && j < tail.count ? tail[j] : nil
        guard let a else { return b.map { ($0, false) } }
        guard let b else { return (a, true) }
        return SnapshotTable.OrderedIndex.precedes(a, b) == ascending ? (a, true) : (b, false)
    }

    mutating func nextGroup() -> [SnapshotTable.OrderedIndex.Entry]? {
        guard let first = peek()?.entry else { return nil }
        var group: [SnapshotTable.OrderedIndex.Entry] = []
        while let (next, fromSorted) = peek(),
            ValueSemantics.sortOrder(next.value, first.value, .binary) == .orderedSame
        {
            group.append(next)
            if fromSorted { i += ascending ? 1 : -1 } else { j += ascending ? 1 : -1 }
        }
        return ascending ? group : group.reversed()
    }
}
