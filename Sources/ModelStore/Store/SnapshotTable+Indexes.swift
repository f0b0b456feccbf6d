import Foundation

extension SnapshotTable {
    /// The rows of one entity, in identifier order, with their indexes.
    ///
    /// Indexes refer to rows by position. Positions follow identifier order (the table re-sorts
    /// and re-indexes itself if a row arrives out of order), so an index's positions, sorted, are
    /// already in the order fetches return.
    struct EntityTable: Sendable {
        let entity: Schema.Entity
        /// Rows in identifier order; `nil` where a row was deleted.
        private(set) var rows: [DefaultSnapshot?] = []
        /// How often each row was replaced: an ordered index entry is current only if its generation matches.
        private(set) var generations: [UInt32] = []
        private(set) var positions: [PersistentIdentifier: Int] = [:]
        private var deletedRows = 0
        /// For each uniqueness constraint, the owner of each combination of values.
        private(set) var uniqueIndexes: [[IndexKey: PersistentIdentifier]]
        /// For each uniqueness constraint, the slots of its properties.
        let uniqueSlots: [[Int]]
        /// One hash index per declared index (``Schema/Entity/indices``).
        private(set) var hashIndexes: [HashIndex]
        /// One ordered index per property that starts a declared index or a uniqueness constraint,
        /// each built on first use (see ``LazyOrderedIndex``).
        private(set) var orderedIndexes: [LazyOrderedIndex]
        /// Typed copies of the numeric and date attributes, for scans (see ``ScalarColumn``).
        private(set) var scalarColumns: [ScalarColumn]
        private var isSorted = true
        /// The identifier of the last row appended.
        private var lastAppended: PersistentIdentifier?

        init(entity: Schema.Entity) {
            self.entity = entity
            uniqueIndexes = entity.uniquenessConstraints.map { _ in [:] }
            uniqueSlots = entity.uniquenessConstraints.map { names in names.map { entity.slot(of: $0)! } }
            hashIndexes = entity.indices.compactMap { names in
                let slots = names.compactMap(entity.slot(of:))
                return slots.count == names.count ? HashIndex(properties: names, slots: slots) : nil
            }
            var ordered: [LazyOrderedIndex] = []
            for names in entity.indices + entity.uniquenessConstraints {
                guard let name = names.first, !ordered.contains(where: { $0.property == name }),
                    let attribute = entity.attribute(named: name), OrderedIndex.supports(attribute.valueType)
                else { continue }
                ordered.append(LazyOrderedIndex(property: name, slot: attribute.slot))
            }
            orderedIndexes = ordered
            scalarColumns = entity.attributes.compactMap(ScalarColumn.init(attribute:))
        }

        var count: Int { positions.count }

        func row(at position: Int) -> DefaultSnapshot? { rows[position] }

        func snapshot(for id: PersistentIdentifier) -> DefaultSnapshot? {
            positions[id].flatMap { rows[$0] }
        }

        /// Whether `identifiers` name every row of the table, each once.
        func isEveryRow(_ identifiers: [PersistentIdentifier]) -> Bool {
            guard identifiers.count == count, count > 0 else { return false }
            // The usual caller, a delete of every model, lists them as fetches return them: in row
            // order. Comparing in step costs no hashing; any other order is checked by lookups below.
            var next = 0
            for case let row? in rows {
                guard row.persistentIdentifier == identifiers[next] else { break }
                next += 1
            }
            if next == identifiers.count { return true }
            var seen = [Bool](repeating: false, count: rows.count)
            for id in identifiers {
                guard let position = positions[id], !seen[position] else { return false }
                seen[position] = true
            }
            return true
        }

        /// Every row, in identifier order.
        var liveRows: [DefaultSnapshot] { rows.compactMap { $0 } }

        /// Whether an ordered index entry still describes its row.
        func isCurrent(_ entry: OrderedIndex.Entry) -> Bool {
            rows[entry.position] != nil && generations[entry.position] == entry.generation
        }

        /// The values `snapshot` claims under a uniqueness constraint; `nil` if any is `nil` (a
        /// `nil` never conflicts).
        func uniqueKey(_ constraint: Int, of snapshot: DefaultSnapshot) -> IndexKey? {
            let key = IndexKey(slots: uniqueSlots[constraint], of: snapshot.values)
            return key.containsNull ? nil : key
        }

        /// Makes room for `count` more rows, so a large batch grows each table once.
        mutating func reserveCapacity(adding count: Int) {
            guard count > 16 else { return }
            rows.reserveCapacity(rows.count + count)
            generations.reserveCapacity(rows.count + count)
            for column in scalarColumns.indices { scalarColumns[column].reserveCapacity(rows.count + count) }
            positions.reserveCapacity(positions.count + count)
            for constraint in uniqueIndexes.indices {
                uniqueIndexes[constraint].reserveCapacity(uniqueIndexes[constraint].count + count)
            }
        }

        // MARK: Changes

        /// Inserts a row read from disk, checking what a save would have: a new identifier and
        /// unclaimed unique values. Returns the problem instead of inserting when there is one.
        /// On a problem the table is left part-changed: a failed load discards it.
        mutating func insertLoaded(_ snapshot: DefaultSnapshot) -> LoadProblem? {
            let id = snapshot.persistentIdentifier
            let position = rows.count
            if positions.updateValue(position, forKey: id) != nil { return .duplicateIdentifier }
            for constraint in uniqueIndexes.indices {
                guard let key = uniqueKey(constraint, of: snapshot) else { continue }
                if let owner = uniqueIndexes[constraint].updateValue(id, forKey: key), owner != id {
                    return .duplicateUniqueValue(constraint: constraint)
                }
            }
            appendRow(snapshot)
            return nil
        }

        /// Why a row read from disk cannot be loaded.
        enum LoadProblem {
            case duplicateIdentifier
            case duplicateUniqueValue(constraint: Int)
        }

        mutating func insert(_ snapshot: DefaultSnapshot) {
            positions[snapshot.persistentIdentifier] = rows.count
            claimUniqueValues(of: snapshot)
            appendRow(snapshot)
        }

        /// Appends a row whose identifier and unique values are already recorded, and indexes its values.
        private mutating func appendRow(_ snapshot: DefaultSnapshot) {
            if let lastAppended, lastAppended >= snapshot.persistentIdentifier { isSorted = false }
            lastAppended = snapshot.persistentIdentifier
            let position = rows.count
            rows.append(snapshot)
            generations.append(0)
            for column in scalarColumns.indices { scalarColumns[column].append(snapshot.values) }
            indexValues(of: snapshot, at: position)
        }

        mutating func remove(_ id: PersistentIdentifier) {
            guard let position = positions.removeValue(forKey: id), let old = rows[position] else { return }
            unindex(old, at: position)
            rows[position] = nil
            deletedRows += 1
        }

        mutating func replace(_ snapshot: DefaultSnapshot) {
            guard let position = positions[snapshot.persistentIdentifier], let old = rows[position] else { return }
            unindex(old, at: position)
            rows[position] = snapshot
            generations[position] &+= 1
            for column in scalarColumns.indices { scalarColumns[column].set(snapshot.values, at: position) }
            claimUniqueValues(of: snapshot)
            indexValues(of: snapshot, at: position)
        }

        /// Restores the invariants after a batch of changes: identifier order, few deleted rows,
        /// and ordered indexes whose unsorted tails stay short.
        mutating func finishChanges() {
            if !isSorted || (deletedRows > 64 && deletedRows * 2 > rows.count) {
                compact()
                return
            }
            // The rows as `isCurrent` reads them, without a copy of the table (which would share its boxes).
            let (rows, generations) = (rows, generations)
            for index in orderedIndexes.indices {
                updateOrderedIndex(index) { ordered in
                    if ordered.needsMerge {
                        ordered.merge { rows[$0.position] != nil && generations[$0.position] == $0.generation }
                    }
                }
            }
        }

        /// Drops deleted rows, re-sorts by identifier and rebuilds every index.
        private mutating func compact() {
            var live = rows.compactMap { $0 }
            if !isSorted { live.sort { $0.persistentIdentifier < $1.persistentIdentifier } }
            rows = live
            generations = Array(repeating: 0, count: live.count)
            positions = Dictionary(uniqueKeysWithValues: live.enumerated().map { ($1.persistentIdentifier, $0) })
            deletedRows = 0
            isSorted = true
            lastAppended = live.last?.persistentIdentifier
            for index in hashIndexes.indices { hashIndexes[index].buckets.removeAll(keepingCapacity: true) }
            // Ordered indexes are dropped and built again on their next use.
            orderedIndexes = orderedIndexes.map { LazyOrderedIndex(property: $0.property, slot: $0.slot) }
            for column in scalarColumns.indices { scalarColumns[column].rebuild(from: live) }
            for (position, snapshot) in live.enumerated() { indexValues(of: snapshot, at: position) }
        }

        /// Records `snapshot` as the owner of its unique values.
        private mutating func claimUniqueValues(of snapshot: DefaultSnapshot) {
            for constraint in uniqueIndexes.indices {
                if let key = uniqueKey(constraint, of: snapshot) {
                    uniqueIndexes[constraint][key] = snapshot.persistentIdentifier
                }
            }
        }

        /// Adds a row's values to the hash and ordered indexes.
        private mutating func indexValues(of snapshot: DefaultSnapshot, at position: Int) {
            for index in hashIndexes.indices { hashIndexes[index].add(position, snapshot) }
            let generation = generations[position]
            for index in orderedIndexes.indices {
                updateOrderedIndex(index) { ordered in
                    ordered.add(snapshot.values[ordered.slot], position: position, generation: generation)
                }
            }
        }

        /// Changes a built ordered index incrementally; one not built yet stays so (it will read the rows as
        /// they are when it is built). The index gets a box of its own first, so copies of the table that
        /// share it (a store's copy kept for an abort, say) never see this table's changes.
        private mutating func updateOrderedIndex(_ index: Int, _ body: (inout OrderedIndex) -> Void) {
            if !isKnownUniquelyReferenced(&orderedIndexes[index]) {
                orderedIndexes[index] = orderedIndexes[index].copy()
            }
            orderedIndexes[index].update(body)
        }

        /// The ordered index at `index`, built from the rows now if this is its first use.
        func orderedIndex(_ index: Int) -> OrderedIndex {
            let box = orderedIndexes[index]
            return box.current {
                var ordered = OrderedIndex(property: box.property, slot: box.slot)
                for (position, row) in rows.enumerated() {
                    guard let row else { continue }
                    ordered.add(row.values[box.slot], position: position, generation: generations[position])
                }
                ordered.merge(isCurrent: isCurrent)
                return ordered
            }
        }

        private mutating func unindex(_ old: DefaultSnapshot, at position: Int) {
            for constraint in uniqueIndexes.indices {
                if let key = uniqueKey(constraint, of: old),
                    uniqueIndexes[constraint][key] == old.persistentIdentifier
                {
                    uniqueIndexes[constraint][key] = nil
                }
            }
            for index in hashIndexes.indices { hashIndexes[index].remove(position, old) }
            for index in orderedIndexes.indices { updateOrderedIndex(index) { $0.superseded += 1 } }
        }
    }

    /// An ordered index that is built on first use, then kept incrementally.
    ///
    /// Loads and large inserts then cost nothing for indexes no query ranges over or sorts by. The
    /// box is a class so that a fetch, which reads a table it cannot change, can still build it. A box
    /// is shared only by copies of one table with the same rows (a table gives itself a box of its own
    /// before any change), so whichever copy builds it builds the same index.
    final class LazyOrderedIndex: Sendable {
        let property: String
        let slot: Int
        private let state: LockedValue<OrderedIndex?>

        init(property: String, slot: Int, index: OrderedIndex? = nil) {
            self.property = property
            self.slot = slot
            state = LockedValue(index)
        }

        /// A box of its own with the same state.
        func copy() -> LazyOrderedIndex {
            LazyOrderedIndex(property: property, slot: slot, index: state.withLock { $0 })
        }

        /// Whether the index has been built.
        var isBuilt: Bool { state.withLock { $0 != nil } }

        /// The index, built by `build` if it has not been yet.
        func current(build: () -> OrderedIndex) -> OrderedIndex {
            state.withLock { index in
                if let index { return index }
                let built = build()
                index = built
                return built
            }
        }

        /// Changes the index if it has been built; does nothing otherwise.
        func update(_ body: (inout OrderedIndex) -> Void) {
            state.withLock { index in
                guard index != nil else { return }
                body(&index!)
            }
        }
    }

    /// The rows with each combination of values of an index's properties.
    struct HashIndex: Sendable {
        let properties: [String]
        let slots: [Int]
        /// Row positions by key, ascending.
        var buckets: [IndexKey: [Int]] = [:]

        func key(of snapshot: DefaultSnapshot) -> IndexKey { IndexKey(slots: slots, of: snapshot.values) }

        mutating func add(_ position: Int, _ snapshot: DefaultSnapshot) {
            // Mutates the bucket in place: one hash lookup, no copy.
            buckets[key(of: snapshot), default: []].insertAscending(position)
        }

        mutating func remove(_ position: Int, _ snapshot: DefaultSnapshot) {
            let key = key(of: snapshot)
            guard var bucket = buckets.removeValue(forKey: key) else { return }
            let index = bucket.partitioningIndex { $0 >= position }
            if index < bucket.count, bucket[index] == position { bucket.remove(at: index) }
            if !bucket.isEmpty { buckets[key] = bucket }
        }
    }

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
        /// typed values, so comparisons don't go through ``StoreValue``; this is most of the cost
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

    /// Whether any value is `nil`.
    var containsNull: Bool { first.isNull || rest.contains(where: \.isNull) }
}

extension Array where Element == Int {
    /// Inserts a position into ascending positions; appending, the usual case, costs nothing extra.
    @inline(__always)
    mutating func insertAscending(_ position: Int) {
        if let last, last > position {
            insert(position, at: partitioningIndex { $0 > position })
        } else {
            append(position)
        }
    }
}

extension RandomAccessCollection {
    /// The index of the first element for which `predicate` is true, in a collection where it is
    /// false for a prefix and true for the rest.
    func partitioningIndex(where predicate: (Element) throws -> Bool) rethrows -> Index {
        var low = startIndex
        var count = distance(from: startIndex, to: endIndex)
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if try predicate(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}
