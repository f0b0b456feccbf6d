import Foundation
import ModelStore

extension SnapshotTable.EntityTable {
    /// A test of a row number against the table's columns.
    typealias RowTest = (Int) -> Bool

    /// The rows a query selects, in the order it returns them, offset and limited: what a fetch, an
    /// identifier fetch and a count share. `compile` compiles the parts of a filter that read other
    /// rows (see ``matcher(_:compile:)``).
    func rows(_ query: StoreQuery, compile: (StoreFilter) throws -> SnapshotEvaluator) throws -> [Int] {
        // A conjunct the columns cannot test (an unknown property among them) goes to `compile`,
        // which throws for what the entity does not store, whichever way the rows are found.
        if query.filter == nil, query.sort.isEmpty {
            // Every row in identifier order: only the window is listed.
            return liveRows(offset: query.offset, limit: query.limit)
        }
        var rows: [Int]
        switch plan(query).method {
        case .scan:
            rows = try scan(query.filter, compile: compile)
        case .positions(let candidates):
            let matches = try matcher(query.filter, compile: compile)
            rows = candidates.filter { isLive($0) && matches?($0) ?? true }
        case .sortedWindow(let index):
            return try sortedWindow(query, index: index, matches: matcher(query.filter, compile: compile))
        }
        try sort(&rows, by: query.sort)
        return SnapshotEvaluator.window(rows, offset: query.offset, limit: query.limit)
    }

    /// The live rows from the `offset`th on, at most `limit` of them, in identifier order.
    func liveRows(offset: Int, limit: Int?) -> [Int] {
        let offset = max(offset, 0)
        let wanted = limit.map { max($0, 0) } ?? .max
        if deleted.isEmpty {
            let start = min(offset, rowCount)
            return Array(start..<(start + min(wanted, rowCount - start)))
        }
        var rows: [Int] = []
        var skipped = 0
        for row in 0..<rowCount where isLive(row) {
            guard rows.count < wanted else { break }
            if skipped < offset {
                skipped += 1
            } else {
                rows.append(row)
            }
        }
        return rows
    }

    /// The rows a scan selects, in identifier order.
    ///
    /// The filter runs over the columns: its top-level comparisons of a typed column with a constant
    /// of the column's kind run first, as tight loops (``ColumnLoops``); every other condition on the
    /// entity's own attributes runs as a test of row numbers over the columns (``rowTest(_:)``); and
    /// only conditions that read other rows (paths through relationships, quantifiers) run on
    /// snapshots. Conditions are pure, so testing them in another order selects the same rows.
    func scan(_ filter: StoreFilter?, compile: (StoreFilter) throws -> SnapshotEvaluator) throws -> [Int] {
        guard let filter else { return (0..<rowCount).filter(isLive) }
        var loops: [(slot: Int, op: StoreComparisonOperator, value: StoreValue)] = []
        var rest: [StoreFilter] = []
        for conjunct in filter.conjuncts {
            if case .compare(let path, let op, let value) = conjunct, let slot = attributeSlot(path),
                columns[slot].nulls.isEmpty, Self.loopKind(columns[slot].kind, value) != nil
            {
                loops.append((slot, op, value))
            } else {
                rest.append(conjunct)
            }
        }
        var selection: [Int]?
        for loop in loops { refine(&selection, column: columns[loop.slot], loop.op, loop.value) }
        let matches = try matcher(StoreFilter.conjunction(rest), compile: compile)
        if let selection { return selection.filter { isLive($0) && matches?($0) ?? true } }
        return (0..<rowCount).filter { isLive($0) && matches?($0) ?? true }
    }

    /// A filter as a test of rows: its conjuncts on the entity's own attributes over the columns
    /// (``rowTest(_:)``), the rest on the row's snapshot, compiled by `compile`; `nil` for no filter.
    func matcher(_ filter: StoreFilter?, compile: (StoreFilter) throws -> SnapshotEvaluator) throws -> RowTest? {
        guard let filter else { return nil }
        var tests: [RowTest] = []
        var rest: [StoreFilter] = []
        for conjunct in filter.conjuncts {
            if let test = rowTest(conjunct) { tests.append(test) } else { rest.append(conjunct) }
        }
        if let residual = try StoreFilter.conjunction(rest).map(compile) {
            tests.append { row in residual.matches(snapshot(at: row)) }
        }
        return Self.all(tests)
    }

    /// Sorts rows by the keys, ties by identifier (row order), as ``SnapshotEvaluator/sort(_:by:entity:)``
    /// sorts their snapshots.
    func sort(_ rows: inout [Int], by keys: [StoreSortKey]) throws {
        guard !keys.isEmpty else { return }
        let slots = try SnapshotOrdering.sortSlots(keys, entity: entity)
        let columns = zip(keys, slots).map { ($0.comparison, $0.ascending, self.columns[$1]) }
        rows.sort { a, b in
            for (comparison, ascending, column) in columns {
                let order = ValueSemantics.sortOrder(column.value(at: a), column.value(at: b), comparison)
                if order != .orderedSame { return ascending == (order == .orderedAscending) }
            }
            return a < b
        }
    }

    /// The slot of a direct path to one of the entity's attributes.
    private func attributeSlot(_ path: StorePath) -> Int? {
        guard path.isDirect, let slot = entity.slot(of: path.property), case .attribute = entity.properties[slot]
        else { return nil }
        return slot
    }

    /// The kind of a column a constant can be compared with in a tight loop, with `Comparable`'s own
    /// operators (what ``ValueSemantics/holds(_:_:_:)`` applies to two values of one kind).
    private static func loopKind(_ kind: SnapshotTable.Column.Kind, _ value: StoreValue) -> SnapshotTable.Column.Kind? {
        switch (kind, value) {
        case (.int, .int), (.double, .double), (.string, .string): kind
        case (.date, .date(let date)) where !date.timeIntervalSinceReferenceDate.isNaN: kind
        default: nil
        }
    }

    /// Keeps the rows of `selection` (every row when `nil`) whose value satisfies `value op constant`.
    /// Call it only for a column with no `nil`s and a constant ``loopKind(_:_:)`` accepts.
    private func refine(
        _ selection: inout [Int]?, column: SnapshotTable.Column, _ op: StoreComparisonOperator, _ constant: StoreValue
    ) {
        switch constant {
        case .int(let constant): ColumnLoops.refine(&selection, column.ints, op, constant)
        case .double(let constant): ColumnLoops.refine(&selection, column.doubles, op, constant)
        case .date(let constant):
            ColumnLoops.refine(&selection, column.doubles, op, constant.timeIntervalSinceReferenceDate)
        case .string(let constant): ColumnLoops.refine(&selection, column.strings, op, constant)
        default: break
        }
    }

    /// A filter as a test of row numbers over the columns, for filters on the entity's own attributes
    /// and identifiers; `nil` for filters that read other rows. A row passes exactly when its snapshot
    /// would pass ``SnapshotEvaluator``.
    func rowTest(_ filter: StoreFilter) -> RowTest? {
        switch filter {
        case .constant(let value):
            return { _ in value }
        case .identifiers(let set):
            let ids = ids
            return { set.contains(ids[$0]) }
        case .compare(let path, let op, let value):
            guard let slot = attributeSlot(path) else { return nil }
            return compareTest(columns[slot], op, value)
        case .isIn(let path, let values):
            guard let slot = attributeSlot(path) else { return nil }
            return valueTest(columns[slot], CompiledFilter.membershipTest(values))
        case .range(let path, let range):
            guard let slot = attributeSlot(path) else { return nil }
            return valueTest(columns[slot]) { CompiledFilter.contains(range, $0) }
        case .text(let path, let operation):
            guard let slot = attributeSlot(path),
                let test = try? CompiledFilter.textTest(operation, path: path, entity: entity)
            else { return nil }
            let column = columns[slot]
            if column.kind == .string {
                let (strings, nulls) = (column.strings, column.nulls)
                return { row in !nulls.contains(row) && test(strings[row]) }
            }
            return { row in
                guard case .string(let string) = column.value(at: row) else { return false }
                return test(string)
            }
        case .arrayContains(let path, let element):
            guard let slot = attributeSlot(path) else { return nil }
            return valueTest(columns[slot], CompiledFilter.elementTest(element))
        case .and(let items):
            let tests = items.map(rowTest)
            guard !tests.contains(where: { $0 == nil }) else { return nil }
            return Self.all(tests.map { $0! }) ?? { _ in true }
        case .or(let items):
            let tests = items.map(rowTest)
            guard !tests.contains(where: { $0 == nil }) else { return nil }
            let all = tests.map { $0! }
            return { row in all.contains { $0(row) } }
        case .not(let item):
            return rowTest(item).map { test in { !test($0) } }
        case .any, .all:
            return nil
        }
    }

    /// All of the tests, or `nil` when there are none.
    private static func all(_ tests: [RowTest]) -> RowTest? {
        switch tests.count {
        case 0: return nil
        case 1: return tests[0]
        case 2:
            let (a, b) = (tests[0], tests[1])
            return { a($0) && b($0) }
        default: return { row in tests.allSatisfy { $0(row) } }
        }
    }

    /// `value op constant` on a column, typed where the constant is of the column's kind; a `nil`
    /// row gets the result a `nil` value gives.
    private func compareTest(
        _ column: SnapshotTable.Column, _ op: StoreComparisonOperator, _ constant: StoreValue
    ) -> RowTest {
        let nulls = column.nulls
        let ifNull = ValueSemantics.holds(op, .null, constant)
        switch (column.kind, constant) {
        case (.int, .int(let constant)):
            let values = column.ints
            return { row in nulls.contains(row) ? ifNull : ValueSemantics.apply(op, values[row], constant) }
        case (.double, .double(let constant)):
            let values = column.doubles
            return { row in nulls.contains(row) ? ifNull : ValueSemantics.apply(op, values[row], constant) }
        case (.date, .date(let constant)):
            let values = column.doubles
            let seconds = constant.timeIntervalSinceReferenceDate
            return { row in nulls.contains(row) ? ifNull : ValueSemantics.apply(op, values[row], seconds) }
        case (.string, .string(let constant)):
            let values = column.strings
            return { row in nulls.contains(row) ? ifNull : ValueSemantics.apply(op, values[row], constant) }
        default:
            return valueTest(column) { ValueSemantics.holds(op, $0, constant) }
        }
    }

    /// A test of each row's value as the column gives it back.
    private func valueTest(_ column: SnapshotTable.Column, _ test: @escaping (StoreValue) -> Bool) -> RowTest {
        { row in test(column.value(at: row)) }
    }
}
