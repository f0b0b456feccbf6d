import Foundation
import ModelStore

extension SnapshotTable {
    /// The rows of one entity: a column of typed values per property (``Column``), the rows'
    /// identifiers (``RowIdentifiers``), and indexes that hold row numbers.
    ///
    /// Rows are numbered in identifier order: minted keys only grow, so saves append, and a row that
    /// arrives out of order (a load, or a save that brings its own identifiers) makes the table
    /// re-sort itself when the change ends. A lookup by identifier is a binary search of the keys,
    /// and any index's row numbers, sorted, are already in the order fetches return. A deleted row
    /// stays, marked deleted and emptied, until deleted rows are half the table; then the table
    /// compacts. Snapshots exist only at the boundary: ``snapshot(at:)`` builds one for a row a
    /// query returns or a caller asks for.
    struct EntityTable: Sendable {
        let entity: Schema.Entity
        /// One column per property, in slot order.
        private(set) var columns: [Column]
        private(set) var ids: RowIdentifiers
        /// Rows deleted since the last compaction.
        private(set) var deleted = RowBits()
        /// How often each row was replaced: an ordered index entry is current only if its generation matches.
        private(set) var generations: [UInt32] = []
        /// For each uniqueness constraint, the row that owns each combination of values.
        private(set) var uniqueIndexes: [UniqueIndex]
        /// For each uniqueness constraint, the slots of its properties.
        let uniqueSlots: [[Int]]
        /// One hash index per declared index (`Schema.Entity.indices`), each built on first use.
        private(set) var hashIndexes: [LazyIndex<HashIndex>]
        /// One ordered index per property that starts a declared index or a uniqueness constraint,
        /// each built on first use (see ``LazyOrderedIndex``).
        private(set) var orderedIndexes: [LazyOrderedIndex]
        /// Whether rows are in identifier order (always, outside a change that appended out of order).
        private var isSorted = true
        /// The first row a load appended without claiming its unique values; `nil` when every row's
        /// are claimed (always, outside a load).
        private var firstUnclaimedRow: Int?

        init(entity: Schema.Entity) {
            self.entity = entity
            columns = entity.properties.map(Column.init(property:))
            ids = RowIdentifiers(entityName: entity.name)
            uniqueIndexes = entity.uniquenessConstraints.map { _ in UniqueIndex() }
            uniqueSlots = entity.uniquenessConstraints.map { names in names.map { entity.slot(of: $0)! } }
            hashIndexes = entity.indices.compactMap { names in
                let slots = names.compactMap(entity.slot(of:))
                return slots.count == names.count ? LazyIndex(properties: names, slots: slots) : nil
            }
            var ordered: [LazyOrderedIndex] = []
            for names in entity.indices + entity.uniquenessConstraints {
                guard let name = names.first, !ordered.contains(where: { $0.property == name }),
                    let attribute = entity.attribute(named: name), OrderedIndex.supports(attribute.valueType)
                else { continue }
                ordered.append(LazyOrderedIndex(properties: [name], slots: [attribute.slot]))
            }
            orderedIndexes = ordered
        }

        /// How many rows are stored, deleted ones included: row numbers run below it.
        var rowCount: Int { ids.count }

        /// How many models the table holds.
        var count: Int { ids.count - deleted.count }

        @inline(__always)
        func isLive(_ row: Int) -> Bool { deleted.isEmpty || !deleted.contains(row) }

        /// The live row whose identifier is `id`.
        func row(of id: PersistentIdentifier) -> Int? {
            guard let row = ids.row(of: id), isLive(row) else { return nil }
            return row
        }

        /// The snapshot of a row: the one place rows become snapshots.
        func snapshot(at row: Int) -> DefaultSnapshot {
            // Reserved, then appended: `Array(unsafeUninitializedCapacity:)` and `Array(repeating:count:)`
            // allocate through the standard library's unspecialized buffer initializer, which looks the
            // storage's generic metadata up at run time on every call.
            var values: [StoreValue] = []
            values.reserveCapacity(columns.count)
            for column in columns { values.append(column.value(at: row)) }
            return DefaultSnapshot(persistentIdentifier: ids[row], entity: entity, values: values)
        }

        func snapshot(for id: PersistentIdentifier) -> DefaultSnapshot? { row(of: id).map(snapshot(at:)) }

        /// The value of a row's property.
        @inline(__always)
        func value(_ slot: Int, at row: Int) -> StoreValue { columns[slot].value(at: row) }

        /// Every live row, in identifier order.
        var liveRows: [DefaultSnapshot] {
            var result: [DefaultSnapshot] = []
            result.reserveCapacity(count)
            for row in 0..<rowCount where isLive(row) { result.append(snapshot(at: row)) }
            return result
        }

        /// Whether `identifiers` name every row of the table, each once.
        func isEveryRow(_ identifiers: [PersistentIdentifier]) -> Bool {
            guard identifiers.count == count, count > 0 else { return false }
            // The usual caller, a delete of every model, lists them as fetches return them: in row
            // order. Comparing in step costs no lookup; any other order is checked by lookups below.
            var next = 0
            for row in 0..<rowCount where isLive(row) {
                guard ids.matches(row, identifiers[next]) else { break }
                next += 1
            }
            if next == identifiers.count { return true }
            var seen = RowBits()
            for id in identifiers {
                guard let row = row(of: id), !seen.contains(row) else { return false }
                seen.insert(row)
            }
            return true
        }

        /// Whether an ordered index entry still describes its row.
        func isCurrent(_ entry: OrderedIndex.Entry) -> Bool {
            isLive(entry.position) && generations[entry.position] == entry.generation
        }

        /// The values a snapshot claims under a uniqueness constraint; `nil` if any is `nil` (a
        /// `nil` never conflicts).
        func uniqueKey(_ constraint: Int, of snapshot: DefaultSnapshot) -> IndexKey? {
            let key = IndexKey(slots: uniqueSlots[constraint], of: snapshot.values)
            return key.containsNull ? nil : key
        }

        /// The identifier of the row that owns a unique key.
        func owner(_ constraint: Int, of key: IndexKey) -> PersistentIdentifier? {
            uniqueOwner(constraint, count: key.count) { key[$0] }.map { ids[Int($0)] }
        }

        /// The row that owns the key whose `i`th value (in the constraint's property order) is
        /// `value(i)`, under a uniqueness constraint.
        @inline(__always)
        func uniqueOwner(_ constraint: Int, count: Int, _ value: (Int) -> StoreValue) -> Int32? {
            let slots = uniqueSlots[constraint]
            guard let hash = UniqueIndex.hash(count: count, value) else { return nil }
            return uniqueIndexes[constraint].owner(hash) { row in
                for i in 0..<count where !columns[slots[i]].holds(value(i), at: Int(row)) { return false }
                return true
            }?.row
        }

        /// The hash of the key row `offset` of a batch gives a uniqueness constraint; `nil` if any of
        /// its values is `nil` (a `nil` never conflicts, so it claims nothing).
        @inline(__always)
        private func uniqueHash(_ constraint: Int, ofRow offset: Int, in rows: BatchRows) -> UInt32? {
            let slots = uniqueSlots[constraint]
            return UniqueIndex.hash(count: slots.count) { rows[offset, slots[$0]] }
        }

        /// The hash of the key a stored row gives a uniqueness constraint, as ``uniqueHash(_:ofRow:in:)``.
        @inline(__always)
        private func uniqueHash(_ constraint: Int, ofRow row: Int) -> UInt32? {
            let slots = uniqueSlots[constraint]
            return UniqueIndex.hash(count: slots.count) { columns[slots[$0]].value(at: row) }
        }

        private func key(_ slots: [Int], ofRow row: Int) -> IndexKey {
            IndexKey(
                first: columns[slots[0]].value(at: row), rest: slots.dropFirst().map { columns[$0].value(at: row) })
        }

        /// Makes room for `count` more rows, so a large batch grows each column once.
        mutating func reserveCapacity(adding count: Int) {
            guard count > 16 else { return }
            let capacity = rowCount + count
            ids.reserveCapacity(capacity)
            generations.reserveCapacity(capacity)
            for slot in columns.indices { columns[slot].reserveCapacity(capacity) }
            for constraint in uniqueIndexes.indices {
                uniqueIndexes[constraint].reserveCapacity(uniqueIndexes[constraint].count + count)
            }
        }

        // MARK: Changes

        /// Inserts a row read from disk, checking, while rows arrive in order, that its identifier
        /// is new (``finishChanges()`` finds the rest). Its unique values are claimed, and checked,
        /// with every other loaded row's by ``claimLoadedUniqueValues()``, which a load must call
        /// before the table is used. Returns `false`, inserting nothing, when the identifier is
        /// already loaded. A failed load discards the table.
        mutating func insertLoaded(_ id: PersistentIdentifier, _ values: [StoreValue]) -> Bool {
            if isSorted, rowCount > 0, !ids.precedes(rowCount - 1, id), row(of: id) != nil { return false }
            if firstUnclaimedRow == nil { firstUnclaimedRow = rowCount }
            appendRow(values, id: id)
            return true
        }

        /// Claims the unique values of the rows ``insertLoaded(_:_:)`` appended, for each constraint
        /// in one pass over its index (``UniqueIndex/insertAbsent(_:matches:)``). Throws
        /// ``LoadProblem/duplicateUniqueValue(constraint:rows:)`` naming two rows with the same key
        /// if any loaded row's key is already owned, by a row loaded before or with it.
        mutating func claimLoadedUniqueValues() throws(LoadProblem) {
            guard let first = firstUnclaimedRow else { return }
            firstUnclaimedRow = nil
            for constraint in uniqueIndexes.indices {
                var claims: [UInt64] = []
                claims.reserveCapacity(rowCount - first)
                let slots = uniqueSlots[constraint]
                if slots.count == 1 {
                    columns[slots[0]].appendClaims(rows: first..<rowCount, skipping: deleted, to: &claims)
                } else {
                    for row in first..<rowCount where isLive(row) {
                        guard let hash = uniqueHash(constraint, ofRow: row) else { continue }
                        claims.append(UInt64(hash) &<< 32 | UInt64(UInt32(row)))
                    }
                }
                let conflict = uniqueIndexes[constraint].insertAbsent(claims) { row, owner in
                    for slot in slots where !columns[slot].holds(columns[slot].value(at: Int(row)), at: Int(owner)) {
                        return false
                    }
                    return true
                }
                if let conflict {
                    throw .duplicateUniqueValue(constraint: constraint, rows: (Int(conflict.owner), Int(conflict.row)))
                }
            }
        }

        /// Why a row read from disk cannot be loaded.
        enum LoadProblem: Error {
            case duplicateIdentifier
            /// Two rows, the first of which owned the key before the second claimed it, share a key
            /// of a uniqueness constraint.
            case duplicateUniqueValue(constraint: Int, rows: (Int, Int))
        }

        mutating func insert(_ snapshot: DefaultSnapshot) {
            appendRow(snapshot.values, id: snapshot.persistentIdentifier)
            claimUniqueValues(ofRow: rowCount - 1)
        }

        /// Appends new rows under identifiers of `storeIdentifier` with keys counting up from
        /// `firstKey`, in one pass over the values and without a copy of any snapshot: a batch
        /// insert. Their unique values are claimed first, each constraint's at once
        /// (``UniqueIndex/insertAbsent(_:matches:)``); if one is claimed twice in the batch or already
        /// owned by a row, the claims are taken back and the violation is thrown, leaving the table as
        /// it was.
        mutating func appendNew(
            _ rows: inout BatchRows, storeIdentifier: String, firstKey: Int64
        ) throws(DataStoreError) {
            let first = rowCount
            let width = rows.width
            reserveCapacity(adding: rows.count)
            for constraint in uniqueIndexes.indices {
                // Rows of this batch claim before they are in the columns, all at once: a probe that
                // meets one reads its values from the batch.
                let slots = uniqueSlots[constraint]
                var claims: [UInt64] = []
                claims.reserveCapacity(rows.count)
                for offset in 0..<rows.count {
                    guard let hash = uniqueHash(constraint, ofRow: offset, in: rows) else { continue }
                    claims.append(UInt64(hash) &<< 32 | UInt64(UInt32(first + offset)))
                }
                let conflict = uniqueIndexes[constraint].insertAbsent(claims) { row, owner in
                    let offset = Int(row) - first
                    if Int(owner) >= first {
                        for slot in slots where rows[Int(owner) - first, slot] != rows[offset, slot] { return false }
                        return true
                    }
                    for slot in slots where !columns[slot].holds(rows[offset, slot], at: Int(owner)) { return false }
                    return true
                }
                guard let conflict else { continue }
                // Every key this batch claimed was unowned before it: take each back, under this
                // constraint and the ones before it (a claim that was not entered removes nothing).
                for earlier in 0...constraint {
                    for offset in 0..<rows.count {
                        guard let hash = uniqueHash(earlier, ofRow: offset, in: rows) else { continue }
                        uniqueIndexes[earlier].remove(Int32(first + offset), hash)
                    }
                }
                let offset = Int(conflict.row) - first
                throw DataStoreError.uniqueConstraintViolation(
                    entityName: entity.name, propertyNames: entity.uniquenessConstraints[constraint],
                    conflictingValues: slots.map { rows[offset, $0] })
            }
            let scope = PersistentIdentifier.Scope(storeIdentifier: storeIdentifier, entityName: entity.name)
            // Indexes not built yet are built from the columns on first use: only a built one takes rows.
            // Each box becomes this table's own first all the same, so that a copy taken before (which
            // shares it) never sees an index built from these rows.
            for index in hashIndexes.indices { Self.ownBox(&hashIndexes[index]) }
            for index in orderedIndexes.indices { Self.ownBox(&orderedIndexes[index]) }
            let updatesIndexes = hashIndexes.contains { $0.isBuilt } || orderedIndexes.contains { $0.isBuilt }
            let keys = firstKey..<firstKey + Int64(rows.count)
            // Keys count up from the last row's when the rows stay in identifier order.
            if first > 0, isSorted, !ids.precedes(first - 1, scope.identifier(firstKey)) { isSorted = false }
            ids.append(scope, keys: keys)
            generations.append(contentsOf: repeatElement(0, count: rows.count))
            if updatesIndexes {
                for offset in 0..<rows.count {
                    indexValues(of: rows.values(ofRow: offset), at: first + offset)
                }
            }
            // Each property's values move out of the chunk into its column, one column at a time: no
            // retain for the column's copy, and each column is reached once per chunk, not per value.
            for slot in 0..<width {
                columns[slot].append(takingFrom: &rows.values, start: slot, stride: width, count: rows.count)
            }
        }

        /// Takes back the rows from `first` on, which a batch appended (with ``appendNew(_:storeIdentifier:firstKey:)``)
        /// since the last ``finishChanges()``: their unique claims and hash index entries are removed,
        /// and the ordered indexes are emptied, to be built again on their next use (their entries
        /// for these rows would look current to rows appended later under the same numbers).
        mutating func removeAppendedRows(from first: Int) {
            guard first < rowCount else { return }
            for row in (first..<rowCount).reversed() { unindex(row) }
            orderedIndexes = orderedIndexes.map { $0.emptied() }
            ids.removeRows(from: first)
            generations.removeSubrange(first...)
            for slot in columns.indices { columns[slot].removeRows(from: first) }
        }

        /// Appends a row whose unique values are already recorded, and indexes its values.
        private mutating func appendRow(_ values: [StoreValue], id: PersistentIdentifier) {
            let row = rowCount
            if row > 0, isSorted, !ids.precedes(row - 1, id) { isSorted = false }
            ids.append(id)
            generations.append(0)
            for slot in values.indices { columns[slot].append(values[slot]) }
            indexValues(of: values, at: row)
        }

        mutating func remove(_ id: PersistentIdentifier) {
            guard let row = row(of: id) else { return }
            unindex(row)
            deleted.insert(row)
            for slot in columns.indices { columns[slot].clear(row) }
        }

        mutating func replace(_ snapshot: DefaultSnapshot) {
            guard let row = row(of: snapshot.persistentIdentifier) else { return }
            unindex(row)
            generations[row] &+= 1
            for (slot, value) in snapshot.values.enumerated() { columns[slot].set(value, at: row) }
            claimUniqueValues(ofRow: row)
            indexValues(of: snapshot.values, at: row)
        }

        /// Restores the invariants after a batch of changes: identifier order, few deleted rows,
        /// and ordered indexes whose unsorted tails stay short. Throws ``LoadProblem/duplicateIdentifier``
        /// if rows that arrived out of order repeat an identifier (only a load can bring such rows).
        mutating func finishChanges() throws(LoadProblem) {
            if !isSorted || (deleted.count > 64 && deleted.count * 2 > rowCount) {
                try compact()
                return
            }
            let (deleted, generations) = (deleted, generations)
            for index in orderedIndexes.indices {
                Self.updateLazy(&orderedIndexes[index]) { ordered in
                    if ordered.needsMerge {
                        ordered.merge { !deleted.contains($0.position) && generations[$0.position] == $0.generation }
                    }
                }
            }
        }

        /// Drops deleted rows, re-sorts by identifier and rebuilds every index.
        private mutating func compact() throws(LoadProblem) {
            var kept = (0..<rowCount).filter(isLive)
            if !isSorted {
                let ids = ids
                kept.sort { ids.precedes($0, $1) }
                for (a, b) in zip(kept, kept.dropFirst()) where !ids.precedes(a, b) { throw .duplicateIdentifier }
            }
            ids = ids.gathering(kept)
            columns = columns.map { $0.gathering(kept) }
            generations = Array(repeating: 0, count: kept.count)
            deleted = RowBits()
            isSorted = true
            for constraint in uniqueIndexes.indices { uniqueIndexes[constraint].removeAll() }
            // Hash and ordered indexes are dropped and built again on their next use.
            hashIndexes = hashIndexes.map { $0.emptied() }
            orderedIndexes = orderedIndexes.map { $0.emptied() }
            for row in 0..<kept.count { claimUniqueValues(ofRow: row) }
        }

        /// Records row `row`, whose values are in the columns, as the owner of its unique keys
        /// (taking a key over from another row that owns it).
        private mutating func claimUniqueValues(ofRow row: Int) {
            for constraint in uniqueIndexes.indices {
                guard let hash = uniqueHash(constraint, ofRow: row) else { continue }
                let slots = uniqueSlots[constraint]
                let found = uniqueIndexes[constraint].owner(hash) { owner in
                    for slot in slots where !columns[slot].holds(columns[slot].value(at: row), at: Int(owner)) {
                        return false
                    }
                    return true
                }
                if let found {
                    uniqueIndexes[constraint].reassign(at: found.position, to: Int32(row))
                } else {
                    uniqueIndexes[constraint].insertAbsent(Int32(row), hash)
                }
            }
        }

        /// Adds a row's values to the hash and ordered indexes.
        private mutating func indexValues(of values: [StoreValue], at row: Int) {
            for index in hashIndexes.indices {
                Self.updateLazy(&hashIndexes[index]) { $0.add(row, IndexKey(slots: $0.slots, of: values)) }
            }
            let generation = generations[row]
            for index in orderedIndexes.indices {
                Self.updateLazy(&orderedIndexes[index]) { ordered in
                    ordered.add(values[ordered.slot], position: row, generation: generation)
                }
            }
        }

        /// Takes a row's values out of every index, before they change or the row goes.
        private mutating func unindex(_ row: Int) {
            for constraint in uniqueIndexes.indices {
                if let hash = uniqueHash(constraint, ofRow: row) { uniqueIndexes[constraint].remove(Int32(row), hash) }
            }
            for index in hashIndexes.indices {
                // The box is this table's alone first, so no copy can build it between the test and
                // the removal; the row's key is read only for an index that is built.
                Self.ownBox(&hashIndexes[index])
                guard hashIndexes[index].isBuilt else { continue }
                let key = key(hashIndexes[index].slots, ofRow: row)
                hashIndexes[index].update { $0.remove(row, key) }
            }
            for index in orderedIndexes.indices { Self.updateLazy(&orderedIndexes[index]) { $0.superseded += 1 } }
        }

        /// Changes a built index incrementally; one not built yet stays so (it will read the rows as
        /// they are when it is built). The index gets a box of its own first, built or not, so copies
        /// of the table that share it (a store's copy kept for an abort, say) never see this table's
        /// changes, nor this table an index one of them builds from its own rows.
        private static func updateLazy<Index>(_ box: inout LazyIndex<Index>, _ body: (inout Index) -> Void) {
            ownBox(&box)
            box.update(body)
        }

        /// Gives the table a box of its own, with the same state, if a copy of the table shares it.
        private static func ownBox<Index>(_ box: inout LazyIndex<Index>) {
            if !isKnownUniquelyReferenced(&box) { box = box.copy() }
        }

        /// The hash index at `index`, built from the rows now if this is its first use.
        func hashIndex(_ index: Int) -> HashIndex {
            let box = hashIndexes[index]
            return box.current {
                var built = HashIndex(properties: box.properties, slots: box.slots)
                for row in 0..<rowCount where isLive(row) { built.add(row, key(box.slots, ofRow: row)) }
                return built
            }
        }

        /// The ordered index at `index`, built from the rows now if this is its first use.
        func orderedIndex(_ index: Int) -> OrderedIndex {
            let box = orderedIndexes[index]
            return box.current {
                var ordered = OrderedIndex(property: box.property, slot: box.slot)
                let column = columns[box.slot]
                for row in 0..<rowCount where isLive(row) {
                    ordered.add(column.value(at: row), position: row, generation: generations[row])
                }
                ordered.merge(isCurrent: isCurrent)
                return ordered
            }
        }
    }

    /// The rows with each combination of values of an index's properties.
    struct HashIndex: Sendable {
        let properties: [String]
        let slots: [Int]
        /// Row numbers by key, ascending.
        var buckets: [IndexKey: [Int32]] = [:]

        mutating func add(_ row: Int, _ key: IndexKey) {
            // Mutates the bucket in place: one hash lookup, no copy.
            buckets[key, default: []].insertAscending(Int32(row))
        }

        mutating func remove(_ row: Int, _ key: IndexKey) {
            guard var bucket = buckets.removeValue(forKey: key) else { return }
            let index = bucket.partitioningIndex { $0 >= Int32(row) }
            if index < bucket.count, bucket[index] == Int32(row) { bucket.remove(at: index) }
            if !bucket.isEmpty { buckets[key] = bucket }
        }
    }
}
