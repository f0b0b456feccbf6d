import Foundation

extension SnapshotTable {
    /// A typed copy of one attribute's values, row by row: `Int64`s for integers, `Double`s for
    /// doubles, floats and dates (seconds since the reference date, which is how `Date` keeps them).
    ///
    /// Scans test comparisons on these arrays in tight loops (see ``EntityTable/scan(_:evaluator:residual:)``),
    /// reading machine numbers instead of each row's snapshot, and only the rows that pass are read as
    /// snapshots. Only non-optional attributes get a column. A column whose rows hold a value of another
    /// kind, or a date that is not a number, is not used until the table next compacts; a deleted row
    /// keeps its old value, and scans skip it.
    struct ScalarColumn: Sendable {
        enum Kind: Sendable { case int, double, date }

        let slot: Int
        let kind: Kind
        private(set) var ints: [Int64] = []
        private(set) var doubles: [Double] = []
        /// Whether every row holds a value the column can compare exactly as the snapshot would.
        private(set) var isUsable = true

        init?(attribute: Schema.Attribute) {
            guard !attribute.isOptional else { return nil }
            switch attribute.valueType.unwrapped {
            case .integer(let bits, let signed) where signed || bits < 64: kind = .int
            case .double, .float: kind = .double
            case .date: kind = .date
            default: return nil
            }
            slot = attribute.slot
        }

        mutating func reserveCapacity(_ count: Int) {
            if kind == .int { ints.reserveCapacity(count) } else { doubles.reserveCapacity(count) }
        }

        /// Adds the value of a new last row.
        mutating func append(_ values: [StoreValue]) {
            switch (kind, values[slot]) {
            case (.int, .int(let value)): ints.append(value)
            case (.double, .double(let value)): doubles.append(value)
            case (.date, .date(let value)):
                doubles.append(value.timeIntervalSinceReferenceDate)
                if value.timeIntervalSinceReferenceDate.isNaN { isUsable = false }
            case (.int, _):
                ints.append(0)
                isUsable = false
            default:
                doubles.append(0)
                isUsable = false
            }
        }

        /// Replaces the value of a row.
        mutating func set(_ values: [StoreValue], at position: Int) {
            switch (kind, values[slot]) {
            case (.int, .int(let value)): ints[position] = value
            case (.double, .double(let value)): doubles[position] = value
            case (.date, .date(let value)):
                doubles[position] = value.timeIntervalSinceReferenceDate
                if value.timeIntervalSinceReferenceDate.isNaN { isUsable = false }
            default: isUsable = false
            }
        }

        /// Refills the column from the rows of a compacted table.
        mutating func rebuild(from rows: [DefaultSnapshot]) {
            ints.removeAll(keepingCapacity: true)
            doubles.removeAll(keepingCapacity: true)
            isUsable = true
            reserveCapacity(rows.count)
            for row in rows { append(row.values) }
        }

        /// Whether a comparison with `value` can run on this column, with the result the snapshot gives.
        func accepts(_ value: StoreValue) -> Bool {
            guard isUsable else { return false }
            switch (kind, value) {
            case (.int, .int), (.double, .double): return true
            case (.date, .date(let date)): return !date.timeIntervalSinceReferenceDate.isNaN
            default: return false
            }
        }

        /// Keeps the rows of `selection` (every row when `nil`) whose value satisfies `value op constant`.
        /// Call it only with a value the column ``accepts(_:)``.
        func refine(_ selection: inout [Int]?, _ op: StoreComparisonOperator, _ constant: StoreValue) {
            switch constant {
            case .int(let constant): ColumnLoops.refine(&selection, ints, op, constant)
            case .double(let constant): ColumnLoops.refine(&selection, doubles, op, constant)
            case .date(let constant):
                ColumnLoops.refine(&selection, doubles, op, constant.timeIntervalSinceReferenceDate)
            default: break
            }
        }
    }
}

extension SnapshotTable.EntityTable {
    /// The rows a scan selects, in identifier order.
    ///
    /// The filter's top-level comparisons of a column attribute with a constant run first, as typed
    /// loops over the columns; the remaining conditions (`residual` compiles them) run on the snapshots
    /// of the rows that passed. Conditions are pure, so testing them in another order selects the same rows.
    func scan(
        _ filter: StoreFilter?, evaluator: SnapshotEvaluator?,
        residual: (StoreFilter) throws -> SnapshotEvaluator
    ) rethrows -> [DefaultSnapshot] {
        guard let filter, let evaluator else { return liveRows }
        var tests: [(column: Int, op: StoreComparisonOperator, value: StoreValue)] = []
        var rest: [StoreFilter] = []
        for conjunct in filter.conjuncts {
            if case .compare(let path, let op, let value) = conjunct, path.isDirect,
                let slot = entity.slot(of: path.property),
                let column = scalarColumns.firstIndex(where: { $0.slot == slot && $0.accepts(value) })
            {
                tests.append((column, op, value))
            } else {
                rest.append(conjunct)
            }
        }
        var result: [DefaultSnapshot] = []
        guard !tests.isEmpty else {
            for case let row? in rows where evaluator.matches(row) { result.append(row) }
            return result
        }
        var selection: [Int]?
        for test in tests { scalarColumns[test.column].refine(&selection, test.op, test.value) }
        let remaining = try StoreFilter.conjunction(rest).map(residual)
        for position in selection ?? [] {
            guard let row = rows[position], remaining?.matches(row) ?? true else { continue }
            result.append(row)
        }
        return result
    }
}
