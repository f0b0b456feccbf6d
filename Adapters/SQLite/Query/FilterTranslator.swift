import Foundation
import ModelStore

/// A piece of SQL with its parameters, and whether it can evaluate to `NULL` (which SQL's `NOT`
/// would keep `NULL`, where Swift's `!` gives `true`).
struct SQLFragment {
    var sql: String
    var parameters: [SQLParameter] = []
    var nullable = false

    static let alwaysTrue = SQLFragment(sql: "1")
    static let alwaysFalse = SQLFragment(sql: "0")
}

/// One parameter of a translated filter: its value, and how the value comes from the filter's
/// operands, so a plan kept per ``StoreFilterShape`` binds the operands of another filter of that shape.
struct SQLParameter {
    /// How a parameter's value is made from an operand.
    enum Source {
        /// Not from an operand: the same for every filter of the shape.
        case fixed
        /// The operand at this index of ``StoreFilterShape/operands``, as a column of this kind keeps it.
        case encoded(Int, ColumnKind, optional: Bool)
        /// The operand at this index, a ``StoreValue/reference(_:)``: its row's key.
        case referenceKey(Int)
        /// The operand at this index, a ``StoreValue/string(_:)``, as text.
        case text(Int)
        /// The operand at this index, an array element, as its stored JSON text (``ColumnKind/elementText(_:)``).
        case elementText(Int)
    }

    var value: SQLValue
    var source: Source

    /// The parameter's value for a filter of the same shape with these operands, or `nil` when an
    /// operand does not give one.
    func value(for operands: [StoreValue]) -> SQLValue? {
        switch source {
        case .fixed: return value
        case .encoded(let index, let kind, let optional): return try? kind.encode(operands[index], optional: optional)
        case .referenceKey(let index):
            guard case .reference(let id) = operands[index], let key = id.primaryKey.intValue else { return nil }
            return .integer(key)
        case .text(let index):
            guard case .string(let text) = operands[index] else { return nil }
            return .text(text)
        case .elementText(let index):
            return ColumnKind.elementText(operands[index]).map { .text($0) }
        }
    }
}

/// Translates a ``StoreFilter`` into an SQL condition that SQLite evaluates exactly as Swift
/// would, or returns `nil` for a filter it cannot translate exactly (the store then evaluates
/// that part on the rows SQL returns).
///
/// What is exact, and how:
/// - `==` / `!=` are `IS` / `IS NOT`: `nil == nil` is true and `nil != x` is true, as in Swift.
/// - `<`, `<=`, `>`, `>=`, ranges, `IN`: on integers, non-optional doubles (`NaN` is kept as `NULL`,
///   so every comparison with it is false), strings (the `SWIFT` collation), dates and UUIDs,
///   with an operand of the column's own kind. A `NaN` operand folds to Swift's answer.
/// - `contains` / `starts(with:)`: the `swift_contains` / `swift_has_prefix` functions.
/// - Paths through to-one relationships: scalar subqueries on the related row's key (`NULL` when
///   the relationship is empty, as the neutral filter reads it).
/// - `any` / `all` over to-many relationships: `EXISTS` / `NOT EXISTS` over the join table.
/// - `contains` on an array of strings, integers, booleans or UUIDs: `EXISTS` over `json_each` of the
///   stored JSON, each element's text compared with the element's stored form.
/// - `!`: `NOT IFNULL(x, 0)` where `x` can be `NULL`.
///
/// Not translated (evaluated by the store on the rows instead): regular expressions, decimals,
/// unsigned 64-bit ordering, optional doubles, comparisons of whole arrays, dictionaries and `Codable`
/// structs, `contains` of other element kinds, and comparisons of mixed kinds.
struct FilterTranslator {
    let layouts: [String: EntityLayout]
    let storeIdentifier: String
    private var aliases = 0
    /// How many operands the conditions translated so far read, in the order of ``StoreFilterShape/operands``.
    private var operandsRead = 0

    init(layouts: [String: EntityLayout], storeIdentifier: String) {
        self.layouts = layouts
        self.storeIdentifier = storeIdentifier
    }

    /// The index of the next operand in ``StoreFilterShape/operands``.
    private mutating func nextOperand() -> Int {
        operandsRead += 1
        return operandsRead - 1
    }

    /// A fresh table alias.
    mutating func alias() -> String {
        aliases += 1
        return "t\(aliases)"
    }

    mutating func translate(_ filter: StoreFilter, layout: EntityLayout, alias: String) -> SQLFragment? {
        switch filter {
        case .constant(let value):
            return value ? .alwaysTrue : .alwaysFalse
        case .identifiers(let ids):
            let keys = ids.compactMap { id -> Int64? in
                id.entityName == layout.entity.name && id.storeIdentifier == storeIdentifier
                    ? id.primaryKey.intValue : nil
            }
            guard !keys.isEmpty else { return .alwaysFalse }
            return SQLFragment(
                sql: "\(alias).\(EntityLayout.primaryKey) IN (SELECT value FROM json_each(?))",
                parameters: [SQLParameter(value: .text(RowWriter.jsonArray(keys)), source: .fixed)])
        case .compare(let path, let op, let value):
            let operand = nextOperand()
            guard let column = resolve(path, layout: layout, alias: alias) else { return nil }
            return compare(column, op, value, operand: operand)
        case .isIn(let path, let values):
            let operands = values.map { _ in nextOperand() }
            guard let column = resolve(path, layout: layout, alias: alias) else { return nil }
            return membership(column, values, operands: operands)
        case .range(let path, let range):
            let lowerOperand = range.lower.map { _ in nextOperand() }
            let upperOperand = range.upper.map { _ in nextOperand() }
            guard let column = resolve(path, layout: layout, alias: alias) else { return nil }
            var parts: [SQLFragment] = []
            if let lower = range.lower {
                guard let part = compare(column, .greaterOrEqual, lower, operand: lowerOperand) else { return nil }
                parts.append(part)
            }
            if let upper = range.upper {
                let op: StoreComparisonOperator = range.includesUpper ? .lessOrEqual : .less
                guard let part = compare(column, op, upper, operand: upperOperand) else { return nil }
                parts.append(part)
            }
            if parts.isEmpty {
                return column.column.kind == nil ? nil : SQLFragment(sql: "\(column.sql) IS NOT NULL")
            }
            return join(parts, with: "AND")
        case .text(let path, let operation):
            let operand = nextOperand()
            guard let column = resolve(path, layout: layout, alias: alias), column.column.kind == .string else {
                return nil
            }
            switch operation {
            case .contains(let text):
                return SQLFragment(
                    sql: "swift_contains(\(column.sql), ?)",
                    parameters: column.parameters + [SQLParameter(value: .text(text), source: .text(operand))],
                    nullable: true)
            case .hasPrefix(let text):
                return SQLFragment(
                    sql: "swift_has_prefix(\(column.sql), ?)",
                    parameters: column.parameters + [SQLParameter(value: .text(text), source: .text(operand))],
                    nullable: true)
            case .matchesRegex:
                return nil
            }
        case .arrayContains(let path, let element):
            let operand = nextOperand()
            guard let column = resolve(path, layout: layout, alias: alias), column.column.kind == .encoded,
                let text = ColumnKind.elementText(element)
            else { return nil }
            // The column holds `{"array":[{"string":"a"},…]}` (JSON as a BLOB, which json_each would read
            // as JSONB without the cast). json_each gives each element's text with its escapes as written
            // (json_extract would cut a string at U+0000), compared with the element's stored form:
            // strings in the SWIFT collation, under which JSON texts are equal exactly when their strings
            // are canonically equivalent (escapes are ASCII starters that no combining mark composes with).
            let elements = self.alias()
            let collation = if case .string = element { " COLLATE \(SwiftCollation.name)" } else { "" }
            return SQLFragment(
                sql: "EXISTS (SELECT 1 FROM json_each(CAST(\(column.sql) AS TEXT), '$.array') \(elements) "
                    + "WHERE \(elements).value = ?\(collation))",
                parameters: column.parameters + [SQLParameter(value: .text(text), source: .elementText(operand))])
        case .any(let path, let inner), .all(let path, let inner):
            guard path.isDirect, let slot = layout.entity.slot(of: path.property),
                let join = layout.joinTables.first(where: { $0.slot == slot }),
                let destination = layouts[join.destination]
            else { return nil }
            let related = self.alias()
            let link = self.alias()
            guard let condition = translate(inner, layout: destination, alias: related) else { return nil }
            let isAny: Bool
            if case .any = filter { isAny = true } else { isAny = false }
            let test = isAny ? condition.sql : "NOT IFNULL(\(condition.sql), 0)"
            return SQLFragment(
                sql: (isAny ? "EXISTS" : "NOT EXISTS")
                    + " (SELECT 1 FROM \(join.table) \(link) JOIN \(destination.table) "
                    + "\(related) ON \(related).\(EntityLayout.primaryKey) = \(link).target WHERE \(link).owner = "
                    + "\(alias).\(EntityLayout.primaryKey) AND \(test))",
                parameters: condition.parameters)
        case .and(let items):
            var parts: [SQLFragment] = []
            for item in items {
                guard let part = translate(item, layout: layout, alias: alias) else { return nil }
                parts.append(part)
            }
            return join(parts, with: "AND")
        case .or(let items):
            var parts: [SQLFragment] = []
            for item in items {
                guard let part = translate(item, layout: layout, alias: alias) else { return nil }
                parts.append(part)
            }
            return join(parts, with: "OR")
        case .not(let item):
            guard let inner = translate(item, layout: layout, alias: alias) else { return nil }
            let sql = inner.nullable ? "NOT IFNULL(\(inner.sql), 0)" : "NOT (\(inner.sql))"
            return SQLFragment(sql: sql, parameters: inner.parameters)
        }
    }

    private func join(_ parts: [SQLFragment], with word: String) -> SQLFragment {
        guard !parts.isEmpty else { return word == "AND" ? .alwaysTrue : .alwaysFalse }
        return SQLFragment(
            sql: "(" + parts.map(\.sql).joined(separator: " \(word) ") + ")",
            parameters: parts.flatMap(\.parameters), nullable: parts.contains { $0.nullable })
    }

    // MARK: Paths

    /// A column reached by a path: its SQL expression (with the parameters inside it), and
    /// whether the path went through a relationship (whose emptiness reads as `NULL`).
    struct ColumnReference {
        var sql: String
        var parameters: [SQLParameter]
        var column: EntityLayout.Column
        var traversed: Bool
    }

    private mutating func resolve(_ path: StorePath, layout: EntityLayout, alias: String) -> ColumnReference? {
        // An external column may hold a file's name where the bytes would be: never compared in SQL.
        guard let column = layout.column(named: path.components[0]), !column.isExternal else { return nil }
        let expression = "\(alias).\(quote(column.name))"
        if path.isDirect { return ColumnReference(sql: expression, parameters: [], column: column, traversed: false) }
        guard column.kind == nil, let destination = column.destination.flatMap({ layouts[$0] }) else { return nil }
        let related = self.alias()
        guard var inner = resolve(StorePath(Array(path.components.dropFirst())), layout: destination, alias: related),
            inner.column.kind != .double
        else { return nil }
        // A subquery's value has no collation of its own: name the column's, so text compares as Swift's.
        let collation =
            inner.column.kind?.declaration.contains("COLLATE") == true ? " COLLATE \(SwiftCollation.name)" : ""
        inner.sql =
            "(SELECT \(inner.sql) FROM \(destination.table) \(related) WHERE \(related)."
            + "\(EntityLayout.primaryKey) = \(expression))" + collation
        inner.traversed = true
        return inner
    }

    // MARK: Comparisons

    /// `operand` is the value's index in ``StoreFilterShape/operands``, `nil` for a value the translator made.
    private func compare(
        _ column: ColumnReference, _ op: StoreComparisonOperator, _ value: StoreValue, operand: Int?
    ) -> SQLFragment? {
        let ordering = op != .equal && op != .notEqual
        let kind = column.column.kind
        // NULL operands: only `nil` reads as NULL (a stored NaN of a non-optional double is NULL too).
        if value.isNull {
            if ordering { return .alwaysFalse }
            if kind == .double && !column.column.isOptional && !column.traversed {
                return op == .equal ? .alwaysFalse : .alwaysTrue
            }
            if kind == .double { return nil }
            return SQLFragment(sql: "\(column.sql) IS \(op == .equal ? "" : "NOT ")NULL", parameters: column.parameters)
        }
        if kind == .double, case .double(let number) = value, number.isNaN {
            return op == .notEqual ? .alwaysTrue : .alwaysFalse
        }
        let bound: SQLValue
        let source: SQLParameter.Source
        if let kind {
            let optional = column.column.isOptional
            guard kind.comparesExactly(value, ordering: ordering, optional: optional),
                let encoded = try? kind.encode(value, optional: optional)
            else { return nil }
            bound = encoded
            source = operand.map { .encoded($0, kind, optional: optional) } ?? .fixed
        } else {
            // A to-one relationship compared with a model.
            guard !ordering, case .reference(let target) = value else { return nil }
            guard target.entityName == column.column.destination, target.storeIdentifier == storeIdentifier,
                let key = target.primaryKey.intValue
            else { return op == .equal ? .alwaysFalse : .alwaysTrue }
            bound = .integer(key)
            source = operand.map { .referenceKey($0) } ?? .fixed
        }
        let sqlOperator =
            switch op {
            case .equal: "IS"
            case .notEqual: "IS NOT"
            case .less: "<"
            case .lessOrEqual: "<="
            case .greater: ">"
            case .greaterOrEqual: ">="
            }
        return SQLFragment(
            sql: "\(column.sql) \(sqlOperator) ?",
            parameters: column.parameters + [SQLParameter(value: bound, source: source)], nullable: ordering)
    }

    private func membership(_ column: ColumnReference, _ values: [StoreValue], operands: [Int]) -> SQLFragment? {
        var bound: [SQLParameter] = []
        var includesNull = false
        for (value, operand) in zip(values, operands) {
            if value.isNull {
                includesNull = true
                continue
            }
            guard let part = compare(column, .equal, value, operand: operand) else { return nil }
            if part.sql == "0" { continue }
            bound.append(part.parameters.last!)
        }
        var parts: [SQLFragment] = []
        if !bound.isEmpty {
            parts.append(
                SQLFragment(
                    sql: "\(column.sql) IN (" + Array(repeating: "?", count: bound.count).joined(separator: ", ") + ")",
                    parameters: column.parameters + bound, nullable: true))
        }
        if includesNull {
            guard let part = compare(column, .equal, .null, operand: nil) else { return nil }
            parts.append(part)
        }
        if parts.isEmpty { return .alwaysFalse }
        return join(parts, with: "OR")
    }
}
