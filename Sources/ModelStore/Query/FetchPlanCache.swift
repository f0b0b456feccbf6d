import Foundation

/// The fetch plans a container keeps per descriptor shape, so that repeated fetches with one
/// predicate shape skip translating the predicate and asking the store again.
///
/// A plan is kept only for a ``DataStoreQuerying`` store, a context without unsaved changes that
/// take part, no `propertiesToFetch`, and a predicate with a ``PredicateShape`` whose constants
/// each become exactly one operand of the translated filters (and every operand comes from one
/// constant): then a later predicate of that shape translates into the same filters with its own
/// constants in their places, which is what a kept plan produces. Anything else is planned anew.
final class FetchPlanCache: Sendable {
    /// The most plans kept; past it, new shapes are planned on every fetch.
    static let limit = 256

    private let plans = LockedValue<[Key: Entry]>([:])

    /// How many plans are kept.
    var count: Int { plans.withLock { $0.count } }

    /// What a plan depends on besides the predicate's constants.
    struct Key: Hashable, @unchecked Sendable {
        // Safety: every part is immutable once the key is made: the predicate's shape is changed
        // only by its own initializer, and key paths and sort descriptors are never mutated after
        // they are made, so sharing them between threads is safe.
        let model: ObjectIdentifier
        /// The predicate's shape, which also holds this fetch's constants (``PredicateShape/operands``).
        let predicate: PredicateShape?
        /// The descriptor's sort, `nil` when it has none.
        let sort: SortShape?
        let hasLimit: Bool
        let hasOffset: Bool
        /// The parts' hash, mixed once when the key is made: the dictionary hashes this one number.
        private let hashCode: Int

        init(model: ObjectIdentifier, predicate: PredicateShape?, sort: SortShape?, hasLimit: Bool, hasOffset: Bool) {
            self.model = model
            self.predicate = predicate
            self.sort = sort
            self.hasLimit = hasLimit
            self.hasOffset = hasOffset
            // Cheap mixing is enough: the dictionary hashes the result with its own seeded hasher.
            var code = Int(bitPattern: UInt(bitPattern: model))
            code = code &* 31 &+ (predicate?.hashCode ?? 0)
            code = code &* 31 &+ (sort?.hashCode ?? 0)
            hashCode = code &* 4 &+ (hasLimit ? 2 : 0) &+ (hasOffset ? 1 : 0)
        }

        /// Equal when the parts are; the sorts are compared last, only when everything else is
        /// equal (so both are sorts of one model type).
        static func == (lhs: Key, rhs: Key) -> Bool {
            guard lhs.hashCode == rhs.hashCode, lhs.model == rhs.model, lhs.hasLimit == rhs.hasLimit,
                lhs.hasOffset == rhs.hasOffset, lhs.predicate == rhs.predicate
            else { return false }
            switch (lhs.sort, rhs.sort) {
            case (nil, nil): return true
            case (let left?, let right?): return left.isEqual(to: right)
            default: return false
            }
        }

        func hash(into hasher: inout Hasher) { hasher.combine(hashCode) }
    }

    /// A descriptor's sort as a key part, compared as `[SortDescriptor<T>]` (exactly as
    /// `SortDescriptor`'s `==` does) but hashed only by what `==` also compares and costs little to
    /// read: how many descriptors there are and each one's `order`. Hashing a `SortDescriptor`
    /// itself (its key path and comparator) would cost more than the rest of a fetch's plan look-up.
    class SortShape: @unchecked Sendable {
        // Safety: immutable after init; its subclass holds only sort descriptors, which are Sendable.
        let hashCode: Int

        init(hashCode: Int) { self.hashCode = hashCode }

        /// Whether the sorts are equal; `other` MUST be a sort of the same model type.
        func isEqual(to other: SortShape) -> Bool { false }

        /// The shape of a descriptor's sort, or `nil` when it has none.
        static func of<T>(_ descriptors: [SortDescriptor<T>]) -> SortShape? {
            if descriptors.count == 0 { return nil }
            var hasher = Hasher()
            hasher.combine(descriptors.count)
            for index in 0..<descriptors.count { hasher.combine(descriptors[index].order == .forward) }
            return TypedSortShape(descriptors, hashCode: hasher.finalize())
        }
    }

    /// The sort of one model type.
    private final class TypedSortShape<T>: SortShape, @unchecked Sendable {
        // Safety: immutable; `SortDescriptor` is Sendable.
        let descriptors: [SortDescriptor<T>]

        init(_ descriptors: [SortDescriptor<T>], hashCode: Int) {
            self.descriptors = descriptors
            super.init(hashCode: hashCode)
        }

        override func isEqual(to other: SortShape) -> Bool {
            // The key compares the model types first: `other` is a sort of `T` too.
            hashCode == other.hashCode && descriptors == unsafeDowncast(other, to: TypedSortShape<T>.self).descriptors
        }
    }

    /// A kept plan: where each conjunct goes, and how its filter is made from the constants.
    ///
    /// A class, so that a look-up hands back one reference rather than a copy of every list.
    final class Entry: Sendable {
        /// Per top-level conjunct of the predicate: its filter's shape (without its operands) and
        /// the index in ``PredicateShape/operands`` of each operand; `nil` for a conjunct without a filter.
        let conjuncts: [(skeleton: StoreFilterShape, sources: [Int])?]
        let pushed: [Int]
        let onSnapshots: [Int]
        let sort: [StoreSortKey]
        let snapshotSort: [StoreSortKey]?
        let filtersModels: Bool
        let sortsModels: Bool
        let windowsInMemory: Bool
        let pushesWindow: Bool
        /// Whether the pushed query lets the store return a superset for its inexact conditions.
        let allowsInexactMatches: Bool
        let placements: [ConjunctPlacement]

        init(
            conjuncts: [(skeleton: StoreFilterShape, sources: [Int])?], pushed: [Int], onSnapshots: [Int],
            sort: [StoreSortKey], snapshotSort: [StoreSortKey]?, filtersModels: Bool, sortsModels: Bool,
            windowsInMemory: Bool, pushesWindow: Bool, allowsInexactMatches: Bool, placements: [ConjunctPlacement]
        ) {
            self.conjuncts = conjuncts
            self.pushed = pushed
            self.onSnapshots = onSnapshots
            self.sort = sort
            self.snapshotSort = snapshotSort
            self.filtersModels = filtersModels
            self.sortsModels = sortsModels
            self.windowsInMemory = windowsInMemory
            self.pushesWindow = pushesWindow
            self.allowsInexactMatches = allowsInexactMatches
            self.placements = placements
        }
    }

    /// The key of a fetch, or `nil` when its plan is not kept.
    static func key<T>(_ descriptor: FetchDescriptor<T>) -> Key? {
        // `count`, not `isEmpty`: the generic `isEmpty` looks up the array type's metadata on every call.
        guard descriptor.propertiesToFetch.count == 0 else { return nil }
        var shape: PredicateShape?
        if let predicate = descriptor.predicate {
            guard let predicateShape = PredicateShape(predicate) else { return nil }
            shape = predicateShape
        }
        return Key(
            model: ObjectIdentifier(T.self), predicate: shape, sort: SortShape.of(descriptor.sortBy),
            hasLimit: descriptor.fetchLimit != nil, hasOffset: (descriptor.fetchOffset ?? 0) > 0)
    }

    /// The kept plan for a key, made for this descriptor's constants and window.
    func plan<T>(_ key: Key, descriptor: FetchDescriptor<T>, entity: Schema.Entity) -> FetchPlan<T>? {
        guard let entry = plans.withLock({ $0[key] }),
            let filters = Self.rebuild(entry, operands: key.predicate?.operands ?? [])
        else { return nil }
        var query = StoreQuery(entityName: entity.name, filter: filters.pushed)
        query.sort = entry.sort
        query.allowsInexactMatches = entry.allowsInexactMatches
        if entry.pushesWindow {
            query.offset = descriptor.fetchOffset ?? 0
            query.limit = descriptor.fetchLimit
        }
        return FetchPlan(
            entity: entity, isQuerying: true, query: query, storeDescriptor: descriptor,
            snapshotFilter: filters.onSnapshots,
            snapshotSort: entry.snapshotSort, filtersModels: entry.filtersModels, sortsModels: entry.sortsModels,
            windowsInMemory: entry.windowsInMemory, placements: entry.placements, translation: nil)
    }

    /// Keeps a plan the planner made, when its filters come from the predicate's constants one to one.
    func keep<T>(_ plan: FetchPlan<T>, key: Key) {
        guard plan.isQuerying, let query = plan.query, query.propertiesToFetch == nil else { return }
        let conjuncts = plan.translation?.conjuncts ?? []
        let operands = key.predicate?.operands ?? []
        var used = Array(repeating: false, count: operands.count)
        var kept: [(skeleton: StoreFilterShape, sources: [Int])?] = []
        for conjunct in conjuncts {
            guard let filter = conjunct.filter else {
                kept.append(nil)
                continue
            }
            guard let filterShape = StoreFilterShape(filter) else { return }
            var sources: [Int] = []
            for operand in filterShape.operands {
                // Exactly one constant gives the operand, and no other operand took it.
                let matches = operands.indices.filter { operands[$0] == operand }
                guard matches.count == 1, !used[matches[0]] else { return }
                used[matches[0]] = true
                sources.append(matches[0])
            }
            kept.append((filterShape, sources))
        }
        // Every constant is an operand: none was folded into the filters' structure.
        guard !used.contains(false) else { return }
        var pushed: [Int] = []
        var onSnapshots: [Int] = []
        for placement in plan.placements {
            switch placement.place {
            case .store: pushed.append(placement.index)
            case .storeInexact:
                pushed.append(placement.index)
                // Re-checked on snapshots, unless it reads through relationships (then on models).
                if conjuncts[placement.index].filter?.traversesRelationships == false {
                    onSnapshots.append(placement.index)
                }
            case .snapshots: onSnapshots.append(placement.index)
            case .models: break
            }
        }
        let entry = Entry(
            conjuncts: kept, pushed: pushed, onSnapshots: onSnapshots, sort: query.sort,
            snapshotSort: plan.snapshotSort, filtersModels: plan.filtersModels, sortsModels: plan.sortsModels,
            windowsInMemory: plan.windowsInMemory, pushesWindow: query.limit != nil || query.offset > 0,
            allowsInexactMatches: query.allowsInexactMatches, placements: plan.placements)
        // The entry must give back the plan it was made from.
        guard let rebuilt = Self.rebuild(entry, operands: operands), rebuilt.pushed == query.filter,
            rebuilt.onSnapshots == plan.snapshotFilter
        else { return }
        plans.withLock { plans in
            if plans.count < Self.limit { plans[key] = entry }
        }
    }

    /// The pushed and snapshot filters an entry makes from constants.
    private static func rebuild(
        _ entry: Entry, operands: [StoreValue?]
    ) -> (pushed: StoreFilter?, onSnapshots: StoreFilter?)? {
        var filters: [StoreFilter?] = []
        filters.reserveCapacity(entry.conjuncts.count)
        for conjunct in entry.conjuncts {
            guard let conjunct else {
                filters.append(nil)
                continue
            }
            guard let filter = conjunct.skeleton.filter(picking: conjunct.sources, from: operands) else { return nil }
            filters.append(filter)
        }
        return (conjunction(of: entry.pushed, in: filters), conjunction(of: entry.onSnapshots, in: filters))
    }

    /// ``StoreFilter/conjunction(_:)`` of the filters at `indices`, without building a list for
    /// none, or for one that the conjunction returns as it is (neither a conjunction nor a constant).
    private static func conjunction(of indices: [Int], in filters: [StoreFilter?]) -> StoreFilter? {
        if indices.isEmpty { return nil }
        if indices.count == 1, let only = filters[indices[0]] {
            switch only {
            case .and, .constant: break
            default: return only
            }
        }
        return StoreFilter.conjunction(indices.compactMap { filters[$0] })
    }
}
