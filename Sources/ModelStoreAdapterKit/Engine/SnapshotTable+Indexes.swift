import Foundation
import ModelStore
import Synchronization

extension SnapshotTable {
    /// An index that is built on first use, then kept incrementally: the ordered indexes and the
    /// hash indexes of declared indexes.
    ///
    /// Loads and large inserts then cost nothing for indexes no query uses. The box is a class so
    /// that a fetch, which reads a table it cannot change, can still build it. A box is shared only
    /// by copies of one table with the same rows (a table gives itself a box of its own before any
    /// change), so whichever copy builds it builds the same index.
    final class LazyIndex<Index: Sendable>: Sendable {
        /// The indexed properties, in key order, and their slots.
        let properties: [String]
        let slots: [Int]
        private let state: LockedValue<Index?>
        /// Whether `state` holds an index. Set under the lock; read without it by ``update(_:)``,
        /// which runs only on a box no other table shares (so no other thread can be building it).
        private let built: Atomic<Bool>

        init(properties: [String], slots: [Int], index: Index? = nil) {
            self.properties = properties
            self.slots = slots
            state = LockedValue(index)
            built = Atomic(index != nil)
        }

        /// The first indexed property, and its slot (an ordered index has only one).
        var property: String { properties[0] }
        var slot: Int { slots[0] }

        /// A box of its own with the same state.
        func copy() -> LazyIndex {
            LazyIndex(properties: properties, slots: slots, index: state.withLock { $0 })
        }

        /// A box for the same properties, not built.
        func emptied() -> LazyIndex { LazyIndex(properties: properties, slots: slots) }

        /// Whether the index has been built.
        var isBuilt: Bool { built.load(ordering: .acquiring) }

        /// The index, built by `build` if it has not been yet.
        func current(build: () -> Index) -> Index {
            state.withLock { index in
                if let index { return index }
                let made = build()
                index = made
                built.store(true, ordering: .releasing)
                return made
            }
        }

        /// Changes the index if it has been built; does nothing otherwise (without taking the lock).
        func update(_ body: (inout Index) -> Void) {
            guard isBuilt else { return }
            state.withLock { index in body(&index!) }
        }
    }

    /// An ordered index over one property, built on first use.
    typealias LazyOrderedIndex = LazyIndex<OrderedIndex>

    /// The rows in the order of one property's values (`nil` first), for ranges and sorted windows.
    ///
    /// New entries collect in an unsorted tail that is merged in once it grows; replaced and
    /// deleted rows leave stale entries behind, recognised by their generation and dropped on merge.
    /// `NaN`s, which have no place in an order, are kept apart.
    struct OrderedIndex: Sendable {
        struct Entry: Sendable {
            let value: StoreValue
            let position: Int
            let generation: UInt32
        }

        let property: String
        let slot: Int
        /// Entries ordered by value, then position.
        private(set) var sorted: [Entry] = []
        /// Entries not merged yet, unordered.
        private(set) var pending: [Entry] = []
        /// Entries whose value is a `NaN`.
        private(set) var notANumber: [Entry] = []
        /// How many entries went stale since the last merge.
        var superseded = 0

        init(property: String, slot: Int) {
            self.property = property
            self.slot = slot
        }

        /// Whether values of this type have an order the index can keep (decimals, whose `NaN`
        /// orders inconsistently, and non-comparable types do not).
        static func supports(_ type: AttributeType) -> Bool {
            switch type.unwrapped {
            case .integer, .double, .float, .string, .date, .uuid: true
            default: false
            }
        }

        static func precedes(_ a: Entry, _ b: Entry) -> Bool {
            // The kinds indexes mostly hold, compared directly: sorting a large index is mostly this.
            switch (a.value, b.value) {
            case (.string(let x), .string(let y)):
                if x == y { return a.position < b.position }
                return x < y
            case (.int(let x), .int(let y)):
                return x == y ? a.position < b.position : x < y
            case (.date(let x), .date(let y)):
                return x == y ? a.position < b.position : x < y
            default:
                break
            }
            switch ValueSemantics.sortOrder(a.value, b.value, .binary) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: return a.position < b.position
            }
        }

        /// Entries in index order (``precedes(_:_:)``). Entries of one kind are sorted by their
        /// typed values, so comparisons don't go through `StoreValue`; this is most of the cost
        /// of indexing a large load.
        static func sorted(_ entries: [Entry]) -> [Entry] {
            guard entries.count > 32, let first = entries.first else { return entries.sorted(by: precedes) }
            let typed: [Entry]? =
                switch first.value {
                case .string: sorted(entries) { if case .string(let key) = $0 { key } else { nil } }
                case .int: sorted(entries) { if case .int(let key) = $0 { key } else { nil } }
                case .date: sorted(entries) { if case .date(let key) = $0 { key } else { nil } }
                default: nil
                }
            return typed ?? entries.sorted(by: precedes)
        }

        /// Entries ordered by the typed key `key` reads from each value, then by position; `nil` if
        /// some value has no such key (values of mixed kinds).
        private static func sorted<Key: Comparable>(_ entries: [Entry], key: (StoreValue) -> Key?) -> [Entry]? {
            let keys = entries.compactMap { key($0.value) }
            guard keys.count == entries.count else { return nil }
            var order = Array(entries.indices)
            keys.withUnsafeBufferPointer { keys in
                order.sort { i, j in
                    keys[i] < keys[j] || (!(keys[j] < keys[i]) && entries[i].position < entries[j].position)
                }
            }
            return order.map { entries[$0] }
        }

        var needsMerge: Bool {
            pending.count > max(256, min(sorted.count / 16, 8192)) || superseded > max(1024, sorted.count / 4)
        }

        mutating func add(_ value: StoreValue, position: Int, generation: UInt32) {
            let entry = Entry(value: value, position: position, generation: generation)
            if case .double(let number) = value, number.isNaN {
                notANumber.append(entry)
            } else {
                pending.append(entry)
            }
        }

        mutating func reset() {
            sorted.removeAll(keepingCapacity: true)
            pending.removeAll(keepingCapacity: true)
            notANumber.removeAll(keepingCapacity: true)
            superseded = 0
        }

        /// Sorts the tail into the ordered entries, dropping stale entries.
        mutating func merge(isCurrent: (Entry) -> Bool) {
            let tail = Self.sorted(pending.filter(isCurrent))
            var merged: [Entry] = []
            merged.reserveCapacity(sorted.count + tail.count)
            var i = 0
            var j = 0
            while i < sorted.count || j < tail.count {
                if j == tail.count || (i < sorted.count && Self.precedes(sorted[i], tail[j])) {
                    if isCurrent(sorted[i]) { merged.append(sorted[i]) }
                    i += 1
                } else {
                    merged.append(tail[j])
                    j += 1
                }
            }
            sorted = merged
            pending.removeAll(keepingCapacity: true)
            notANumber.removeAll { !isCurrent($0) }
            superseded = 0
        }

        /// Whether any current row holds a `NaN` (the index then cannot give a sort order).
        func hasNotANumber(isCurrent: (Entry) -> Bool) -> Bool { notANumber.contains(where: isCurrent) }

        /// The first position in ``sorted`` whose value is not before `value` (or, `inclusive: false`,
        /// is after it).
        func boundary(_ value: StoreValue, after inclusive: Bool) -> Int {
            sorted.partitioningIndex { entry in
                let order = ValueSemantics.sortOrder(entry.value, value, .binary)
                return inclusive ? order != .orderedAscending : order == .orderedDescending
            }
        }

        /// The first position in ``sorted`` past the `nil`s.
        var firstNonNull: Int { sorted.partitioningIndex { !$0.value.isNull } }

        /// The entries whose values lie between the bounds (inclusive), `nil`s excluded: a superset
        /// of the rows a range condition selects. Pending entries are included unsorted.
        func candidates(lower: StoreValue?, upper: StoreValue?) -> (sorted: ArraySlice<Entry>, pending: [Entry]) {
            let start = lower.map { boundary($0, after: true) } ?? firstNonNull
            let end = upper.map { boundary($0, after: false) } ?? sorted.count
            let slice = start < end ? sorted[start..<end] : sorted[start..<start]
            let tail = pending.filter { entry in
                guard !entry.value.isNull else { return false }
                if let lower, ValueSemantics.sortOrder(entry.value, lower, .binary) == .orderedAscending {
                    return false
                }
                if let upper, ValueSemantics.sortOrder(entry.value, upper, .binary) == .orderedDescending {
                    return false
                }
                return true
            }
            return (slice, tail)
        }
    }
}

/// The values of an index's properties in one row. Most indexes cover one property, so the first
/// value is held inline and only compound keys allocate.
struct IndexKey: Hashable, Sendable {
    let first: StoreValue
    let rest: [StoreValue]

    /// A key from its first value and the rest, in the index's property order.
    init(first: StoreValue, rest: [StoreValue]) {
        self.first = first
        self.rest = rest
    }

    /// A key from its values, in the index's property order. `values` is not empty.
    init(_ values: [StoreValue]) {
        first = values[0]
        rest = values.count > 1 ? Array(values.dropFirst()) : []
    }

    /// The key a row's values give an index over these slots.
    @inline(__always)
    init(slots: [Int], of values: [StoreValue]) {
        first = values[slots[0]]
        rest = slots.count > 1 ? slots.dropFirst().map { values[$0] } : []
    }

    /// The values, in the index's property order.
    var values: [StoreValue] { [first] + rest }

    /// The value of the index's `i`th property.
    @inline(__always)
    subscript(i: Int) -> StoreValue { i == 0 ? first : rest[i - 1] }

    /// How many values the key holds.
    var count: Int { 1 + rest.count }

    /// Whether any value is `nil`.
    var containsNull: Bool { first.isNull || rest.contains(where: \.isNull) }

    /// Hashes the payloads of the kinds a key usually holds directly, without the case and
    /// without the synthesized hash's generic copy of the value; equal keys hold the same case
    /// with equal payloads, so they still hash alike. The rest only when there is one.
    func hash(into hasher: inout Hasher) {
        Self.hashPayload(first, into: &hasher)
        if !rest.isEmpty {
            for value in rest { Self.hashPayload(value, into: &hasher) }
        }
    }

    /// Hashes one value of a key as ``hash(into:)`` does (the unique indexes hash keys this way too).
    @inline(__always)
    static func hashPayload(_ value: StoreValue, into hasher: inout Hasher) {
        switch value {
        case .string(let string): hasher.combine(string)
        case .int(let int): hasher.combine(int)
        case .double(let double): hasher.combine(double)
        case .date(let date): hasher.combine(date)
        case .uuid(let uuid): hasher.combine(uuid)
        default: hasher.combine(value)
        }
    }
}

extension Array where Element: BinaryInteger {
    /// Inserts a position into ascending positions; appending, the usual case, costs nothing extra.
    @inline(__always)
    mutating func insertAscending(_ position: Element) {
        if let last, last > position {
            insert(position, at: partitioningIndex { $0 > position })
        } else {
            append(position)
        }
    }
}
