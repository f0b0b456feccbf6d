import Foundation
import ModelStore
import PostgresNIO

/// Translates the part of a ``StoreFilter`` that PostgreSQL runs with Swift's semantics into a
/// `WHERE` condition; what it cannot translate exactly is left for the store to evaluate.
///
/// Every translated condition is `NULL`-free (wrapped in `coalesce(…, false)`), so `NOT` and `OR`
/// over translated parts mean what Swift means. Exact translations:
/// - identifiers: the primary key in a list;
/// - `==`/`!=` with `nil`: `IS [NOT] NULL`, on any column;
/// - `==`, `!=`, `<`, `<=`, `>`, `>=` and ranges of integers on integer columns;
/// - the same of strings on text columns, compared as Swift compares strings: both sides
///   in their NFC form under `COLLATE "C"` (``TableLayout/textKey(_:)``; UTF-8 byte order is scalar
///   order);
/// - the same of doubles, dates (exact seconds in `double precision`) and decimals (`numeric`)
///   that are not NaN, with a stored `NaN` kept out of the orderings (PostgreSQL sorts `NaN` above
///   every number and finds it equal to itself; Swift's comparisons with it are false);
/// - `==`/`!=` of booleans and UUIDs; membership of integers and strings (NFC forms);
/// - `==`/`!=` and membership of a to-one relationship and models (their keys);
/// - paths through to-one relationships, as scalar subqueries on the related table (a missing
///   related row reads `NULL`, as a `nil` relationship reads `nil` in Swift);
/// - `any`/`all` over a to-many relationship: `EXISTS`/`NOT EXISTS` on its join table;
/// - `contains` on an array of strings, integers, booleans or UUIDs: a search of the stored JSON for the
///   element's stored form;
/// - `NOT`, `AND`, `OR` of translated parts.
///
/// Text `contains` and `starts(with:)` compare characters in Swift (`"q\u{301}"` does not start
/// with `"q"`), which no byte operation reproduces, so they are never exact: ``prefilter(_:)``
/// narrows the rows with the byte test on NFC forms (`strpos`, `starts_with`), which keeps every
/// row Swift selects, and the store re-checks those rows. Left to the store: regular expressions,
/// unsigned 64-bit integers, NaN operands, references and composite values.
struct FilterTranslator {
    let layouts: [String: TableLayout]
    let storeIdentifier: String
    var binds = PostgresBindings()
    /// The parameters bound so far, in `$n` order, with where each value comes from.
    private(set) var parameters: [PostgreSQLParameter] = []
    /// The operands the translated conditions read, with their indices in
    /// ``StoreFilterShape/operands``: what ``readsOperands(_:)`` checks a plan's parameters by.
    private var operandsRead: [(index: Int, value: StoreValue)] = []
    /// The index in ``StoreFilterShape/operands`` of the next operand the walk meets.
    private var nextOperand = 0
    /// How many table aliases subqueries used, so each gets its own.
    private var aliases = 0

    init(layouts: [String: TableLayout], storeIdentifier: String) {
        self.layouts = layouts
        self.storeIdentifier = storeIdentifier
    }

    /// Splits a filter into SQL conditions (ANDed) and the conjuncts left to evaluate.
    ///
    /// A conjunct left to the store may still add a condition that keeps a superset of its matches
    /// (``prefilter(_:in:alias:)``), so SQL returns fewer rows for the store to check.
    /// `residualPositions` are the places of the conjuncts left to evaluate in ``StoreFilter/conjuncts``;
    /// `narrowed` says, for each, whether SQL keeps a superset of its matches (the store answers it
    /// `inexact`) rather than every row.
    mutating func split(
        _ filter: StoreFilter?, layout: TableLayout
    ) -> (sql: [String], residual: [StoreFilter], residualPositions: [Int], narrowed: [Bool]) {
        guard let filter else { return ([], [], [], []) }
        var sql: [String] = []
        var residual: [StoreFilter] = []
        var positions: [Int] = []
        var narrowed: [Bool] = []
        var first = 0
        for (position, conjunct) in filter.conjuncts.enumerated() {
            nextOperand = first
            if let condition = attempt({ $0.translateConjunct(conjunct, in: layout) }) {
                sql.append(condition)
            } else {
                residual.append(conjunct)
                positions.append(position)
                nextOperand = first
                if let superset = attempt({ $0.prefilter(conjunct, in: layout, alias: "t") }) {
                    sql.append(superset)
                    narrowed.append(true)
                } else {
                    narrowed.append(false)
                }
            }
            first += Self.operandCount(of: conjunct)
        }
        return (sql, residual, positions, narrowed)
    }

    /// Whether the conditions translated so far read these operands where they read any: then
    /// ``parameters`` bind the operands of a filter in the order of its ``StoreFilterShape/operands``.
    func readsOperands(_ operands: [StoreValue]) -> Bool {
        operandsRead.allSatisfy { $0.index < operands.count && operands[$0.index] == $0.value }
    }

    /// How many operands ``StoreFilterShape`` takes out of a filter.
    static func operandCount(of filter: StoreFilter) -> Int {
        switch filter {
        case .constant, .identifiers: 0
        case .compare, .text, .arrayContains: 1
        case .isIn(_, let values): values.count
        case .range(_, let range): (range.lower == nil ? 0 : 1) + (range.upper == nil ? 0 : 1)
        case .any(_, let inner), .all(_, let inner), .not(let inner): operandCount(of: inner)
        case .and(let items), .or(let items): items.reduce(0) { $0 + operandCount(of: $1) }
        }
    }

    /// The index of the operand the walk meets now, noted with its value.
    private mutating func takeOperand(_ value: StoreValue) -> Int {
        operandsRead.append((nextOperand, value))
        nextOperand += 1
        return nextOperand - 1
    }

    /// Notes where the parameter just appended to ``binds`` comes from.
    private mutating func record(_ source: PostgreSQLParameter.Source) {
        parameters.append(PostgreSQLParameter(source: source))
    }

    /// A condition for one conjunct of the `WHERE` clause. `WHERE` keeps only the rows where it is
    /// true, so there `NULL` means what `false` means and a comparison needs no `coalesce`; bare, it
    /// is a condition an index on its left side serves (`email`'s NFC key `= …`, see
    /// ``TableLayout/textKey(_:)``).
    private mutating func translateConjunct(_ filter: StoreFilter, in layout: TableLayout) -> String? {
        switch filter {
        case .compare(let path, let op, let value) where op != .notEqual:
            guard let target = expression(path, in: layout, alias: "t") else { return nil }
            return compare(target.sql, target.type, op, value, operand: takeOperand(value), inWhere: true)
        case .range(let path, let range):
            return bounds(path, range, in: layout, alias: "t", inWhere: true)
        case .isIn(let path, let values):
            guard let target = expression(path, in: layout, alias: "t") else { return nil }
            return membership(target.sql, target.type, values, operands: values.map { takeOperand($0) }, inWhere: true)
        default:
            return translate(filter, in: layout, alias: "t")
        }
    }

    /// The condition of a range: its bounds' comparisons, ANDed.
    private mutating func bounds(
        _ path: StorePath, _ range: StoreRange, in layout: TableLayout, alias: String, inWhere: Bool
    ) -> String? {
        guard let target = expression(path, in: layout, alias: alias) else { return nil }
        var parts: [String] = []
        if let lower = range.lower {
            let operand = takeOperand(lower)
            guard
                let part = compare(target.sql, target.type, .greaterOrEqual, lower, operand: operand, inWhere: inWhere)
            else { return nil }
            parts.append(part)
        }
        if let upper = range.upper {
            let op: StoreComparisonOperator = range.includesUpper ? .lessOrEqual : .less
            let operand = takeOperand(upper)
            guard let part = compare(target.sql, target.type, op, upper, operand: operand, inWhere: inWhere) else {
                return nil
            }
            parts.append(part)
        }
        guard !parts.isEmpty, !parts.contains("FALSE") else { return parts.isEmpty ? nil : "FALSE" }
        return "(" + parts.joined(separator: " AND ") + ")"
    }

    /// Runs a translation, undoing the parameters it bound when it fails.
    private mutating func attempt(_ body: (inout FilterTranslator) -> String?) -> String? {
        let mark = (binds, aliases, parameters.count, operandsRead.count, nextOperand)
        if let condition = body(&self) { return condition }
        (binds, aliases) = (mark.0, mark.1)
        parameters.removeSubrange(mark.2...)
        operandsRead.removeSubrange(mark.3...)
        nextOperand = mark.4
        return nil
    }

    /// A `NULL`-free condition, or `nil` when the filter cannot run exactly in SQL.
    private mutating func translate(_ filter: StoreFilter, in layout: TableLayout, alias: String) -> String? {
        switch filter {
        case .constant(let value): return value ? "TRUE" : "FALSE"
        case .identifiers(let ids):
            let keys = ids.compactMap { id -> Int64? in
                guard id.storeIdentifier == storeIdentifier, id.entityName == layout.entity.name else { return nil }
                return id.primaryKey.intValue
            }
            guard !keys.isEmpty else { return "FALSE" }
            binds.append(keys)
            record(.fixedKeys(keys))
            return "\(alias).\(TableLayout.key) = ANY($\(binds.count))"
        case .compare(let path, let op, let value):
            guard let target = expression(path, in: layout, alias: alias) else { return nil }
            return compare(target.sql, target.type, op, value, operand: takeOperand(value))
        case .isIn(let path, let values):
            guard let target = expression(path, in: layout, alias: alias) else { return nil }
            return membership(target.sql, target.type, values, operands: values.map { takeOperand($0) })
        case .range(let path, let range):
            return bounds(path, range, in: layout, alias: alias, inWhere: false)
        case .any(let path, let inner):
            return quantifier(path, inner, in: layout, alias: alias, all: false) { $0.translate($1, in: $2, alias: $3) }
        case .all(let path, let inner):
            return quantifier(path, inner, in: layout, alias: alias, all: true) { $0.translate($1, in: $2, alias: $3) }
        case .and(let items):
            var parts: [String] = []
            for item in items {
                guard let part = translate(item, in: layout, alias: alias) else { return nil }
                parts.append(part)
            }
            return parts.isEmpty ? "TRUE" : "(" + parts.joined(separator: " AND ") + ")"
        case .or(let items):
            var parts: [String] = []
            for item in items {
                guard let part = translate(item, in: layout, alias: alias) else { return nil }
                parts.append(part)
            }
            return parts.isEmpty ? "FALSE" : "(" + parts.joined(separator: " OR ") + ")"
        case .not(let item):
            return translate(item, in: layout, alias: alias).map { "NOT \($0)" }
        case .arrayContains(let path, let element):
            return elementTest(path, element, in: layout, alias: alias)
        case .text:
            return nil
        }
    }

    /// `array.contains(element)` for an array of strings, integers, booleans or UUIDs: whether the
    /// column's text (`{"array":[{"string":"a"},…]}`, kept verbatim by `json`) holds the element's
    /// stored form. That is exact: an element's text starts with `{"`, which a JSON string cannot hold
    /// unescaped, and a JSON string ends at its first unescaped quote, so the form is found only as a
    /// whole element. Strings compare in NFC, which keeps JSON's escapes (ASCII starters) apart, so
    /// equal texts mean canonically equivalent strings. No JSON operator is used: PostgreSQL refuses
    /// to unescape `\u0000`, which `->` and `json_each` do.
    private mutating func elementTest(
        _ path: StorePath, _ element: StoreValue, in layout: TableLayout, alias: String
    ) -> String? {
        let isString: Bool
        switch element {
        case .string: isString = true
        case .int, .bool, .uuid: isString = false
        default: return nil
        }
        guard let target = expression(path, in: layout, alias: alias), target.type == .encoded,
            let json = try? ColumnType.encoder.encode(element)
        else { return nil }
        binds.append(String(decoding: json, as: UTF8.self))
        record(.elementJSON(takeOperand(element)))
        let test =
            isString
            ? "strpos(normalize(\(target.sql)::text, NFC), normalize($\(binds.count), NFC)) > 0"
            : "strpos(\(target.sql)::text, $\(binds.count)) > 0"
        return "coalesce(\(test), false)"
    }

    /// A `NULL`-free condition that holds for every row the filter matches (and maybe others), or
    /// `nil` when there is none worth sending. Never under a negation: the complement of a superset
    /// is a subset.
    private mutating func prefilter(_ filter: StoreFilter, in layout: TableLayout, alias: String) -> String? {
        if let exact = attempt({ $0.translate(filter, in: layout, alias: alias) }) { return exact }
        switch filter {
        case .text(let path, let operation):
            guard let target = expression(path, in: layout, alias: alias), target.type == .string else { return nil }
            let text: String
            let test: (String, String) -> String
            switch operation {
            case .contains(let t):
                text = t
                test = { "strpos(\($0), \($1)) > 0" }
            case .hasPrefix(let t):
                text = t
                test = { "starts_with(\($0), \($1))" }
            case .matchesRegex: return nil
            }
            binds.append(ColumnType.escapingNUL(text))
            record(.text(takeOperand(.string(text))))
            let condition = test("normalize(\(target.sql), NFC)", "normalize($\(binds.count), NFC)")
            return "coalesce(\(condition), false)"
        case .and(let items):
            // Conjuncts without a superset condition are dropped: fewer conditions, more rows.
            var parts: [String] = []
            var first = nextOperand
            for item in items {
                nextOperand = first
                if let part = attempt({ $0.prefilter(item, in: layout, alias: alias) }) { parts.append(part) }
                first += Self.operandCount(of: item)
            }
            nextOperand = first
            return parts.isEmpty ? nil : "(" + parts.joined(separator: " AND ") + ")"
        case .or(let items):
            var parts: [String] = []
            for item in items {
                guard let part = prefilter(item, in: layout, alias: alias) else { return nil }
                parts.append(part)
            }
            return parts.isEmpty ? nil : "(" + parts.joined(separator: " OR ") + ")"
        case .any(let path, let inner):
            return quantifier(path, inner, in: layout, alias: alias, all: false) { $0.prefilter($1, in: $2, alias: $3) }
        default:
            return nil
        }
    }

    /// `EXISTS` (`any`) or `NOT EXISTS … NOT` (`all`) over the join table of a to-many relationship
    /// of the entity itself, with the inner condition on the related table.
    private mutating func quantifier(
        _ path: StorePath, _ inner: StoreFilter, in layout: TableLayout, alias: String, all: Bool,
        condition: (inout FilterTranslator, StoreFilter, TableLayout, String) -> String?
    ) -> String? {
        guard path.isDirect, let join = layout.joinTables.first(where: { $0.name == path.property }),
            let destination = layouts[join.destination]
        else { return nil }
        let related = nextAlias()
        let joined = nextAlias()
        guard let test = condition(&self, inner, destination, related) else { return nil }
        let rows =
            "SELECT 1 FROM \(join.table) \(joined) JOIN \(destination.table) \(related) "
            + "ON \(related).\(TableLayout.key) = \(joined).target WHERE \(joined).owner = \(alias).\(TableLayout.key)"
        return all ? "NOT EXISTS (\(rows) AND NOT \(test))" : "EXISTS (\(rows) AND \(test))"
    }

    private mutating func nextAlias() -> String {
        aliases += 1
        return "r\(aliases)"
    }

    /// The SQL value at a path and how its column keeps it (`nil` type for a to-one key): a column
    /// of the row, or a scalar subquery through each to-one relationship on the way.
    private mutating func expression(_ path: StorePath, in layout: TableLayout, alias: String)
        -> (sql: String, type: ColumnType?)?
    {
        guard let column = layout.column(named: path.components[0]) else { return nil }
        let sql = "\(alias).\(column.quoted)"
        if path.isDirect { return (sql, column.type) }
        guard column.type == nil, let destination = column.destination.flatMap({ layouts[$0] }) else { return nil }
        let related = nextAlias()
        guard let inner = expression(StorePath(Array(path.components.dropFirst())), in: destination, alias: related)
        else { return nil }
        return (
            "(SELECT \(inner.sql) FROM \(destination.table) \(related) WHERE \(related).\(TableLayout.key) = \(sql))",
            inner.type
        )
    }

    /// `values.contains(value)`: integers by `= ANY`, strings by `= ANY` of the NFC forms (Swift's
    /// `==` on strings is canonical equivalence); a `nil` among the values matches `NULL`.
    ///
    /// `inWhere` (a condition of the `WHERE` clause itself, where `NULL` excludes a row as `false`
    /// does) leaves out the `coalesce` a negation needs, and passes strings as one array: the
    /// planner then answers `= ANY` from an index on the column (or on its text key).
    /// `operands` are the values' indices in ``StoreFilterShape/operands``.
    private mutating func membership(
        _ name: String, _ type: ColumnType?, _ values: [StoreValue], operands: [Int], inWhere: Bool = false
    ) -> String? {
        func guarded(_ test: String) -> String { inWhere ? test : "coalesce(\(test), false)" }
        let matchesNull = values.contains(.null)
        let present = zip(values, operands).filter { $0.0 != .null }
        var test: String
        switch type {
        case .int?:
            var keys: [Int64] = []
            for (value, _) in present {
                guard case .int(let v) = value else { return nil }
                keys.append(v)
            }
            binds.append(keys)
            record(.ints(present.map(\.1)))
            test = guarded("\(name) = ANY($\(binds.count))")
        case .string?:
            var texts: [String] = []
            for (value, _) in present {
                guard case .string(let v) = value else { return nil }
                texts.append(ColumnType.escapingNUL(v))
            }
            binds.append(texts)
            record(.texts(present.map(\.1)))
            test =
                inWhere
                ? "\(TableLayout.textKey(name)) = ANY(ARRAY("
                    + "SELECT \(TableLayout.textKey("v")) FROM unnest($\(binds.count)::text[]) v))"
                : "coalesce(\(TableLayout.textKey(name)) = ANY("
                    + "SELECT \(TableLayout.textKey("v")) FROM unnest($\(binds.count)::text[]) v), false)"
        case nil:
            // A to-one relationship's key among the models' keys; models of other stores never match.
            var keys: [Int64] = []
            var sources: [Int] = []
            for (value, operand) in present {
                guard case .reference(let id) = value else { return nil }
                if id.storeIdentifier == storeIdentifier, let key = id.primaryKey.intValue {
                    keys.append(key)
                    sources.append(operand)
                }
            }
            binds.append(keys)
            record(.keys(sources))
            test = guarded("\(name) = ANY($\(binds.count))")
        default:
            return nil
        }
        return matchesNull ? "(\(name) IS NULL OR \(test))" : test
    }

    /// `==`/`!=` of a to-one relationship (a key column) and a model: its key, when the model is in
    /// this store; a model of another store is never the related one. `inWhere`, `==` is the bare
    /// comparison, which the column's index serves.
    private mutating func reference(
        _ name: String, _ op: StoreComparisonOperator, _ value: StoreValue, operand: Int, inWhere: Bool
    ) -> String? {
        guard op == .equal || op == .notEqual, case .reference(let id) = value else { return nil }
        guard id.storeIdentifier == storeIdentifier, let key = id.primaryKey.intValue else {
            return op == .equal ? "FALSE" : "TRUE"
        }
        binds.append(key)
        record(.key(operand))
        guard op == .equal else { return "(\(name) IS NULL OR \(name) <> $\(binds.count))" }
        return inWhere ? "\(name) = $\(binds.count)" : "coalesce(\(name) = $\(binds.count), false)"
    }

    /// A comparison of a column or path with a value, `NULL`-free unless `inWhere` (a top-level
    /// `WHERE` conjunct, see ``translateConjunct(_:in:)``), where a bare comparison means the same.
    /// `operand` is the value's index in ``StoreFilterShape/operands``.
    private mutating func compare(
        _ name: String, _ type: ColumnType?, _ op: StoreComparisonOperator, _ value: StoreValue, operand: Int,
        inWhere: Bool = false
    ) -> String? {
        if value == .null {
            switch op {
            case .equal: return "\(name) IS NULL"
            case .notEqual: return "\(name) IS NOT NULL"
            default: return "FALSE"
            }
        }
        guard let type else { return reference(name, op, value, operand: operand, inWhere: inWhere) }
        let sqlOperator: String =
            switch op {
            case .equal: "="
            case .notEqual: "<>"
            case .less: "<"
            case .lessOrEqual: "<="
            case .greater: ">"
            case .greaterOrEqual: ">="
            }
        let ordering = op != .equal && op != .notEqual
        var left = name
        var right: String
        var guardNaN = false
        switch (type, value) {
        case (.int, .int(let v)):
            binds.append(v)
            record(.int(operand))
            right = "$\(binds.count)"
        case (.string, .string(let v)):
            binds.append(ColumnType.escapingNUL(v))
            record(.text(operand))
            left = TableLayout.textKey(name)
            right = TableLayout.textKey("$\(binds.count)")
        case (.double, .double(let v)) where !v.isNaN:
            binds.append(v)
            record(.double(operand))
            right = "$\(binds.count)"
            guardNaN = true
        case (.double, .int(let v)):
            binds.append(Double(v))
            record(.intAsDouble(operand))
            right = "$\(binds.count)::double precision"
            guardNaN = true
        case (.date, .date(let v)) where !v.timeIntervalSinceReferenceDate.isNaN:
            binds.append(v.timeIntervalSinceReferenceDate)
            record(.date(operand))
            right = "$\(binds.count)::double precision"
            guardNaN = true
        case (.decimal, .decimal(let v)) where !v.isNaN:
            guard (try? binds.append(v)) != nil else { return nil }
            record(.decimal(operand))
            right = "$\(binds.count)::numeric"
            guardNaN = true
        case (.decimal, .int(let v)):
            guard (try? binds.append(Decimal(v))) != nil else { return nil }
            record(.intAsDecimal(operand))
            right = "$\(binds.count)::numeric"
            guardNaN = true
        case (.bool, .bool(let v)) where !ordering:
            binds.append(v)
            record(.bool(operand))
            right = "$\(binds.count)"
        case (.uuid, .uuid(let v)) where !ordering:
            binds.append(v)
            record(.uuid(operand))
            right = "$\(binds.count)"
        default:
            return nil
        }
        let comparison = "\(left) \(sqlOperator) \(right)"
        if op == .notEqual {
            // Swift: nil != x and NaN != x are true.
            return "(\(name) IS NULL OR coalesce(\(comparison), true))"
        }
        if guardNaN && ordering {
            return inWhere
                ? "(\(name) <> 'NaN' AND \(comparison))" : "coalesce(\(name) <> 'NaN' AND \(comparison), false)"
        }
        return inWhere ? comparison : "coalesce(\(comparison), false)"
    }
}
