import Foundation
import ModelStore

extension SnapshotTable {
    /// One bit per row: which rows are deleted, or which hold `nil`. Sized lazily, so a set no row
    /// is in costs nothing.
    struct RowBits: Sendable {
        private var words: [UInt64] = []
        /// How many rows are in the set.
        private(set) var count = 0

        var isEmpty: Bool { count == 0 }

        @inline(__always)
        func contains(_ row: Int) -> Bool {
            let word = row &>> 6
            return word < words.count && words[word] & (1 &<< UInt64(row & 63)) != 0
        }

        mutating func insert(_ row: Int) {
            let word = row &>> 6
            if word >= words.count { words.append(contentsOf: repeatElement(0, count: word - words.count + 1)) }
            let bit: UInt64 = 1 &<< UInt64(row & 63)
            if words[word] & bit == 0 {
                words[word] |= bit
                count += 1
            }
        }

        mutating func remove(_ row: Int) {
            let word = row &>> 6
            guard word < words.count else { return }
            let bit: UInt64 = 1 &<< UInt64(row & 63)
            if words[word] & bit != 0 {
                words[word] &= ~bit
                count -= 1
            }
        }

        /// Removes every row from `first` on.
        mutating func removeAll(from first: Int) {
            guard count > 0 else { return }
            for row in first..<(words.count &<< 6) where contains(row) { remove(row) }
        }
    }

    /// One property's values, row by row, in storage typed by the property's kind: `Int64`s for
    /// integers, `Double`s for doubles, floats and dates (seconds since the reference date, which is
    /// all a `Date` holds), `String`s, `Bool`s, and `StoreValue`s out of line for every other kind
    /// (composites, to-many lists, references, decimals, data). `nil`s are a bit set beside the
    /// typed array.
    ///
    /// A column gives back exactly the value it was given: a value of another kind than the column
    /// expects (which no codec produces, but a hand-made snapshot may hold) turns the column into
    /// one of `StoreValue`s for good.
    struct Column: Sendable {
        enum Kind: Sendable { case int, double, date, string, bool, values }

        private(set) var kind: Kind
        private(set) var ints: [Int64] = []
        /// Doubles, or dates as seconds since the reference date.
        private(set) var doubles: [Double] = []
        private(set) var strings: [String] = []
        private(set) var bools: [Bool] = []
        private(set) var values: [StoreValue] = []
        /// Rows of a typed column that hold `nil`.
        private(set) var nulls = RowBits()
        private(set) var count = 0

        init(property: Schema.Property) {
            guard case .attribute(let attribute) = property else {
                kind = .values
                return
            }
            switch SnapshotTable.EntityTable.storedKind(of: attribute.valueType) {
            case "int": kind = .int
            case "double": kind = .double
            case "date": kind = .date
            case "string": kind = .string
            case "bool": kind = .bool
            default: kind = .values
            }
        }

        mutating func reserveCapacity(_ capacity: Int) {
            switch kind {
            case .int: ints.reserveCapacity(capacity)
            case .double, .date: doubles.reserveCapacity(capacity)
            case .string: strings.reserveCapacity(capacity)
            case .bool: bools.reserveCapacity(capacity)
            case .values: values.reserveCapacity(capacity)
            }
        }

        /// Drops the rows from `first` on (rows appended by a batch that is taken back).
        mutating func removeRows(from first: Int) {
            switch kind {
            case .int: ints.removeSubrange(first...)
            case .double, .date: doubles.removeSubrange(first...)
            case .string: strings.removeSubrange(first...)
            case .bool: bools.removeSubrange(first...)
            case .values: values.removeSubrange(first...)
            }
            nulls.removeAll(from: first)
            count = first
        }

        /// The value of a row, as it was stored.
        @inline(__always)
        func value(at row: Int) -> StoreValue {
            if kind == .values { return values[row] }
            if !nulls.isEmpty, nulls.contains(row) { return .null }
            switch kind {
            case .int: return .int(ints[row])
            case .double: return .double(doubles[row])
            case .date: return .date(Date(timeIntervalSinceReferenceDate: doubles[row]))
            case .string: return .string(strings[row])
            case .bool: return .bool(bools[row])
            case .values: return values[row]
            }
        }

        /// Whether a row holds `nil` (for a column of `StoreValue`s, whether the value is `.null`).
        @inline(__always)
        func isNull(at row: Int) -> Bool {
            if kind == .values { return values[row] == .null }
            return !nulls.isEmpty && nulls.contains(row)
        }

        /// Appends the unique-index claim (``UniqueIndex/insertAbsent(_:matches:)``: the key's hash over
        /// the row) of each row of `rows` not in `deleted` and not `nil`, for a key of this one column.
        /// The hash is ``UniqueIndex/hash(count:_:)``'s, with each value read in place.
        func appendClaims(rows: Range<Int>, skipping deleted: RowBits, to claims: inout [UInt64]) {
            for row in rows where deleted.isEmpty || !deleted.contains(row) {
                if kind != .values, !nulls.isEmpty, nulls.contains(row) { continue }
                var hasher = Hasher()
                switch kind {
                case .string: hasher.combine(strings[row])
                case .int: hasher.combine(ints[row])
                case .double: hasher.combine(doubles[row])
                case .date: hasher.combine(Date(timeIntervalSinceReferenceDate: doubles[row]))
                case .bool, .values:
                    let value = value(at: row)
                    if value.isNull { continue }
                    IndexKey.hashPayload(value, into: &hasher)
                }
                claims.append(UInt64(UInt32(truncatingIfNeeded: hasher.finalize())) &<< 32 | UInt64(UInt32(row)))
            }
        }

        /// Whether any row of a typed column holds `nil`.
        var hasNulls: Bool { !nulls.isEmpty }

        /// Whether a row holds exactly `value` (as `StoreValue`'s `==` says), read in place for the
        /// typed kinds a unique key usually has.
        @inline(__always)
        func holds(_ value: StoreValue, at row: Int) -> Bool {
            switch (kind, value) {
            case (.string, .string(let x)): strings[row] == x && (nulls.isEmpty || !nulls.contains(row))
            case (.int, .int(let x)): ints[row] == x && (nulls.isEmpty || !nulls.contains(row))
            case (.double, .double(let x)): doubles[row] == x && (nulls.isEmpty || !nulls.contains(row))
            case (.date, .date(let x)):
                doubles[row] == x.timeIntervalSinceReferenceDate && (nulls.isEmpty || !nulls.contains(row))
            default: self.value(at: row) == value
            }
        }

        /// Adds the value of a new last row.
        @inline(__always)
        mutating func append(_ value: consuming StoreValue) {
            // The common case in line: a value of the column's own kind.
            switch (kind, value) {
            case (.string, .string(let x)): strings.append(x)
            case (.int, .int(let x)): ints.append(x)
            case (.double, .double(let x)): doubles.append(x)
            case (.date, .date(let x)): doubles.append(x.timeIntervalSinceReferenceDate)
            default: return appendOther(value)
            }
            count += 1
        }

        /// ``append(_:)`` for every other value: into a column of stored values, a `Bool`, a `nil`, or
        /// a value of another kind than the column's (which turns it into stored values).
        private mutating func appendOther(_ value: StoreValue) {
            if kind != .values, !accepts(value) { becomeValues() }
            count += 1
            switch (kind, value) {
            case (.values, _): values.append(value)
            case (.bool, .bool(let x)): bools.append(x)
            default:
                // A `nil` in a typed column: a placeholder under a set bit.
                nulls.insert(count - 1)
                appendPlaceholder()
            }
        }

        /// Appends `count` values moved out of `source`, which holds `nil` in their place after: the
        /// first at `start`, each next one `stride` further on (one property of a batch's rows).
        mutating func append(takingFrom source: inout [StoreValue], start: Int, stride: Int, count: Int) {
            source.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return }
                var position = base + start
                for _ in 0..<count {
                    let value = position.move()
                    position.initialize(to: .null)
                    append(value)
                    position += stride
                }
            }
        }

        /// Replaces the value of a row.
        mutating func set(_ value: StoreValue, at row: Int) {
            if kind != .values, !accepts(value) { becomeValues() }
            switch (kind, value) {
            case (.values, _): values[row] = value
            case (.int, .int(let x)): ints[row] = x
            case (.double, .double(let x)): doubles[row] = x
            case (.date, .date(let x)): doubles[row] = x.timeIntervalSinceReferenceDate
            case (.string, .string(let x)): strings[row] = x
            case (.bool, .bool(let x)): bools[row] = x
            default:
                nulls.insert(row)
                clear(row)
                return
            }
            if !nulls.isEmpty { nulls.remove(row) }
        }

        /// Drops what a deleted row's value holds on to (a string's or a list's storage).
        mutating func clear(_ row: Int) {
            switch kind {
            case .string: strings[row] = ""
            case .values: values[row] = .null
            default: break
            }
        }

        /// The column of the rows `kept`, in that order.
        func gathering(_ kept: [Int]) -> Column {
            var column = Column(kind: kind)
            column.count = kept.count
            switch kind {
            case .int: column.ints = kept.map { ints[$0] }
            case .double, .date: column.doubles = kept.map { doubles[$0] }
            case .string: column.strings = kept.map { strings[$0] }
            case .bool: column.bools = kept.map { bools[$0] }
            case .values: column.values = kept.map { values[$0] }
            }
            if !nulls.isEmpty {
                for (row, old) in kept.enumerated() where nulls.contains(old) { column.nulls.insert(row) }
            }
            return column
        }

        private init(kind: Kind) { self.kind = kind }

        /// Whether a value can be kept in this typed column.
        private func accepts(_ value: StoreValue) -> Bool {
            switch (kind, value) {
            case (_, .null), (.int, .int), (.double, .double), (.date, .date), (.string, .string), (.bool, .bool):
                true
            default: false
            }
        }

        private mutating func appendPlaceholder() {
            switch kind {
            case .int: ints.append(0)
            case .double, .date: doubles.append(0)
            case .string: strings.append("")
            case .bool: bools.append(false)
            case .values: values.append(.null)
            }
        }

        /// Turns a typed column into one of `StoreValue`s, keeping every value.
        private mutating func becomeValues() {
            values = (0..<count).map(value(at:))
            kind = .values
            ints = []
            doubles = []
            strings = []
            bools = []
            nulls = RowBits()
        }
    }

    /// The identifiers of a table's rows. While every row shares the table's entity, one store
    /// identifier and an integer key (every table the stores load or mint), only the keys are kept.
    struct RowIdentifiers: Sendable {
        let entityName: String
        /// The store identifier and entity name every row shares, once a row has been added: a
        /// row's identifier is this scope and its key, built and compared without a string.
        private var scope: PersistentIdentifier.Scope?
        private var keys: [Int64] = []
        /// Every identifier, once one did not fit the shared form.
        private var general: [PersistentIdentifier]?

        init(entityName: String) { self.entityName = entityName }

        var count: Int { general?.count ?? keys.count }

        @inline(__always)
        subscript(row: Int) -> PersistentIdentifier {
            if let general { return general[row] }
            return scope!.identifier(keys[row])
        }

        /// The primary key of a row's identifier.
        @inline(__always)
        func primaryKey(at row: Int) -> PrimaryKey {
            if let general { return general[row].primaryKey }
            return .int(keys[row])
        }

        /// Whether row `row` has identifier `id`.
        @inline(__always)
        func matches(_ row: Int, _ id: PersistentIdentifier) -> Bool {
            if let general { return general[row] == id }
            guard case .int(let key) = id.primaryKey, keys[row] == key else { return false }
            return id.scope == scope!
        }

        mutating func reserveCapacity(_ capacity: Int) {
            if general != nil { general!.reserveCapacity(capacity) } else { keys.reserveCapacity(capacity) }
        }

        /// Appends the identifiers of `scope` with the keys `keys`, in order, without building one.
        mutating func append(_ scope: PersistentIdentifier.Scope, keys newKeys: Range<Int64>) {
            if general == nil, self.scope == nil, scope.entityName == entityName { self.scope = scope }
            guard general == nil, scope == self.scope else {
                for key in newKeys { append(scope.identifier(key)) }
                return
            }
            keys.append(contentsOf: newKeys)
        }

        mutating func append(_ id: PersistentIdentifier) {
            if general != nil {
                general!.append(id)
                return
            }
            if scope == nil, id.entityName == entityName { scope = id.scope }
            if case .int(let key) = id.primaryKey, id.scope == scope {
                keys.append(key)
            } else {
                general = (0..<keys.count).map { self[$0] } + [id]
                keys = []
            }
        }

        /// The identifiers of the rows for which `isLive` holds (`liveCount` of them), in row order:
        /// runs of keys while the rows share the table's form, so no identifier is built per row.
        func collect(liveCount: Int, where isLive: (Int) -> Bool) -> PersistentIdentifiers {
            if let general { return PersistentIdentifiers(general.indices.lazy.filter(isLive).map { general[$0] }) }
            guard let scope else { return [] }
            guard let shared = scope.storeIdentifier else {
                return PersistentIdentifiers(keys.indices.lazy.filter(isLive).map { self[$0] })
            }
            // Rows are in key order, so when every row is live and the first and last keys are as far
            // apart as the rows are many, the keys are one run.
            if liveCount == keys.count, let first = keys.first, let last = keys.last,
                last &- first == Int64(keys.count - 1)
            {
                return PersistentIdentifiers(storeIdentifier: shared, entityName: entityName, keys: first...last)
            }
            return PersistentIdentifiers(
                storeIdentifier: shared, entityName: entityName,
                keys: keys.indices.lazy.filter(isLive).map { keys[$0] })
        }

        /// Drops the identifiers of the rows from `first` on.
        mutating func removeRows(from first: Int) {
            if general != nil { general!.removeSubrange(first...) } else { keys.removeSubrange(first...) }
        }

        /// The row whose identifier is `id`, among rows sorted by identifier.
        func row(of id: PersistentIdentifier) -> Int? {
            if let general {
                let row = general.partitioningIndex { !($0 < id) }
                return row < general.count && general[row] == id ? row : nil
            }
            guard case .int(let key) = id.primaryKey, let scope, id.scope == scope else { return nil }
            let row = keys.partitioningIndex { $0 >= key }
            return row < keys.count && keys[row] == key ? row : nil
        }

        /// Whether row `row`'s identifier orders before `id`'s.
        func precedes(_ row: Int, _ id: PersistentIdentifier) -> Bool {
            if general == nil, case .int(let key) = id.primaryKey, id.scope == scope! {
                return keys[row] < key
            }
            return self[row] < id
        }

        /// Whether row `a`'s identifier orders before row `b`'s.
        func precedes(_ a: Int, _ b: Int) -> Bool {
            if let general { return general[a] < general[b] }
            return keys[a] < keys[b]
        }

        /// The identifiers of the rows `kept`, in that order.
        func gathering(_ kept: [Int]) -> RowIdentifiers {
            var copy = RowIdentifiers(entityName: entityName)
            copy.scope = scope
            if let general { copy.general = kept.map { general[$0] } } else { copy.keys = kept.map { keys[$0] } }
            return copy
        }
    }
}
