import Foundation
import ModelStore
import ModelStoreAdapterKit

/// Fetching, counting and listing identifiers, with the query mutants.
extension MutantStore {
    // MARK: Fetching

    enum Purpose { case fetch, count, identifiers }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<
        T, DefaultSnapshot
    > {
        DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: try rows(request, for: .fetch))
    }

    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        let count = try rows(request, for: .count).count
        return has(.countOffByOne) && count > 0 ? count + 1 : count
    }

    func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier] {
        let ids = try rows(request, for: .identifiers).map(\.persistentIdentifier)
        return has(.identifiersReversed) ? ids.reversed() : ids
    }

    private func rows<T: PersistentModel>(_ request: DataStoreFetchRequest<T>, for purpose: Purpose) throws
        -> [DefaultSnapshot]
    {
        let entityName = Schema.entityName(for: T.self)
        var query = request.query ?? StoreQuery(entityName: entityName)
        if has(.refusesDeclaredTextFilters), let kinds = query.filter?.kinds,
            !kinds.isDisjoint(with: [.textContains, .textPrefix])
        {
            throw DataStoreError.preferInMemoryFilter
        }
        if has(.refusesDeclaredToOneTraversal), query.filter?.kinds.contains(.toOneTraversal) == true {
            throw DataStoreError.preferInMemoryFilter
        }
        if has(.refusesDeclaredSorts), !query.sort.isEmpty { throw DataStoreError.preferInMemorySort }
        let exactFilter = query.filter
        if has(.ignoresFilter) || (has(.countIgnoresFilter) && purpose == .count) { query.filter = nil }
        query.filter = query.filter.map(mutatedFilter)
        if has(.approximatesUnasked), let filter = query.filter {
            // Text conditions approximated by ignoring them, whether or not the query allows it.
            query.filter = StoreFilter.conjunction(
                filter.conjuncts.filter { $0.kinds.isDisjoint(with: [.textContains, .textPrefix]) })
        }
        switch mutation {
        case .ignoresSort: query.sort = []
        case .identifiersIgnoreSort where purpose == .identifiers: query.sort = []
        case .ignoresSortDirection:
            query.sort = query.sort.map { StoreSortKey(property: $0.property, comparison: $0.comparison) }
        case .sortsOnlyByFirstKey: query.sort = Array(query.sort.prefix(1))
        case .caseInsensitiveSort:
            query.sort = query.sort.map {
                StoreSortKey(property: $0.property, ascending: $0.ascending, comparison: .caseInsensitive)
            }
        default: break
        }
        var offset = query.offset
        var limit = query.limit
        query.offset = 0
        query.limit = nil
        var rows = try locked(writing: false) { try $0.table.fetch(query) }
        if has(.fetchServesValuesBeforeLastSave) {
            let previous = try locked(writing: false) { $0.previous }
            rows = rows.map { previous[$0.persistentIdentifier] ?? $0 }
        }
        if has(.inexactOrderingReturnsSubset), let kinds = exactFilter?.kinds,
            !kinds.isDisjoint(with: [.ordering, .range]),
            !rows.isEmpty
        {
            rows.removeLast()
        }
        if let first = query.sort.first {
            if has(.nilsSortLast) && first.ascending {
                rows = rows.filter { $0[first.property] != .null } + rows.filter { $0[first.property] == .null }
            }
            if has(.reversesTies) { rows = Self.reversingTies(rows, by: query.sort.map(\.property)) }
        }
        if has(.unsortedInWriteOrder), query.sort.isEmpty {
            // As a heap table without ORDER BY: the rows the last save updated come last.
            let updated = try locked(writing: false) { $0.previous }
            rows =
                rows.filter { updated[$0.persistentIdentifier] == nil }
                + rows.filter {
                    updated[$0.persistentIdentifier] != nil
                }
        }
        if has(.mixesInOtherEntity), let other = schema.entities.first(where: { $0.name != entityName }) {
            rows += state.withLock { $0.table.snapshots(of: other.name) }
        }
        if has(.returnsFirstTwice), purpose == .fetch, let first = rows.first { rows.append(first) }
        switch mutation {
        case .ignoresOffset: offset = 0
        case .ignoresLimit: limit = nil
        case .limitOffByOne: limit = limit.map { $0 + 1 }
        case .countIgnoresWindow where purpose == .count: (offset, limit) = (0, nil)
        case .identifiersIgnoreWindow where purpose == .identifiers: (offset, limit) = (0, nil)
        default: break
        }
        return Array(rows.dropFirst(offset).prefix(limit ?? .max))
    }

    /// The filter as the mutant runs it.
    private func mutatedFilter(_ filter: StoreFilter) -> StoreFilter {
        func insensitive(_ pattern: String) -> StoreTextOperation {
            .matchesRegex("(?i)" + pattern)
        }
        switch (mutation, filter) {
        case (.caseInsensitiveEquality, .compare(let path, .equal, .string(let string))):
            return .text(path, insensitive("^" + NSRegularExpression.escapedPattern(for: string) + "$"))
        case (.containsCaseInsensitive, .text(let path, .contains(let string))) where !string.isEmpty:
            return .text(path, insensitive(NSRegularExpression.escapedPattern(for: string)))
        case (.prefixCaseInsensitive, .text(let path, .hasPrefix(let string))) where !string.isEmpty:
            return .text(path, insensitive("^" + NSRegularExpression.escapedPattern(for: string)))
        case (.sqlNullNotEqual, .compare(let path, .notEqual, let value)) where value != .null:
            return .and([filter, .not(.compare(path, .equal, .null))])
        case (.rangeAlwaysIncludesUpper, .range(let path, var range)):
            range.includesUpper = true
            return .range(path, range)
        case (.membershipIgnored, .isIn): return .constant(true)
        case (.membershipNeverMatchesNil, .isIn(let path, let values)):
            // As SQL's `x IN (NULL, …)`, which is never true for a NULL `x`.
            return .isIn(path, values.filter { $0 != .null })
        case (.unsignedComparedAsSigned, .compare(let path, let op, .uint(let number)))
        where number > UInt64(Int64.max):
            return .compare(path, op, .int(Int64(bitPattern: number)))
        case (.identifierFilterIgnored, .identifiers): return .constant(true)
        case (.nilRelationshipMatchesEverything, .compare(let path, let op, let value)) where !path.isDirect:
            let first = StorePath([path.components[0]])
            return .or([.compare(path, op, value), .compare(first, .equal, .null)])
        case (.negationDropped, .not(let inner)): return mutatedFilter(inner)
        case (.disjunctionAsConjunction, .or(let items)): return .and(items.map(mutatedFilter))
        case (_, .and(let items)): return .and(items.map(mutatedFilter))
        case (_, .or(let items)): return .or(items.map(mutatedFilter))
        case (_, .not(let inner)): return .not(mutatedFilter(inner))
        default: return filter
        }
    }

    /// Reverses each run of snapshots whose sort keys are all equal.
    static func reversingTies(_ snapshots: [DefaultSnapshot], by properties: [String]) -> [DefaultSnapshot] {
        var result: [DefaultSnapshot] = []
        var run: [DefaultSnapshot] = []
        for snapshot in snapshots {
            if let last = run.last, properties.contains(where: { last[$0] != snapshot[$0] }) {
                result += run.reversed()
                run = []
            }
            run.append(snapshot)
        }
        return result + run.reversed()
    }

}
