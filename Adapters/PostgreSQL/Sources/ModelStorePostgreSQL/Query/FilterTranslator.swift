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
/// - `==`, `!=`, `<`, `<=`, `>`, `>=` of integers on integer columns;
/// - the same of strings on text columns, compared as Swift compares strings: both sides
///   `normalize(…, NFC)` under `COLLATE "C"` (UTF-8 byte order is scalar order);
/// - the same of doubles that are not NaN on double columns, with a stored `NaN` kept out of the
///   orderings (PostgreSQL sorts `NaN` above every number; Swift's comparisons with it are false);
/// - `==`/`!=` of booleans and UUIDs; membership of integers;
/// - `NOT`, `AND`, `OR` of translated parts.
///
/// Left to the store: ranges, text operations, decimals, dates, unsigned 64-bit integers, NaN
/// operands and composite values.
struct FilterTranslator {
    let layout: TableLayout
    let storeIdentifier: String
    var binds = PostgresBindings()

    init(layout: TableLayout, storeIdentifier: String) {
        self.layout = layout
        self.storeIdentifier = storeIdentifier
    }

    /// Splits a filter into SQL conditions (ANDed) and the conjuncts left to evaluate.
    mutating func split(_ filter: StoreFilter?) -> (sql: [String], residual: [StoreFilter]) {
        guard let filter else { return ([], []) }
        var sql: [String] = []
        var residual: [StoreFilter] = []
        for conjunct in filter.conjuncts {
            let mark = binds
            if let condition = translate(conjunct) {
                sql.append(condition)
            } else {
                binds = mark
                residual.append(conjunct)
            }
        }
        return (sql, residual)
    }

    /// A `NULL`-free condition, or `nil` when the filter cannot run exactly in SQL.
    private mutating func translate(_ filter: StoreFilter) -> String? {
        switch filter {
        case .constant(let value): return value ? "TRUE" : "FALSE"
        case .identifiers(let ids):
            let keys = ids.compactMap { id -> Int64? in
                guard id.storeIdentifier == storeIdentifier, id.entityName == layout.entity.name else { return nil }
                return id.primaryKey.intValue
            }
            guard !keys.isEmpty else { return "FALSE" }
            binds.append(keys)
            return "t.\(TableLayout.key) = ANY($\(binds.count))"
        case .compare(let path, let op, let value):
            guard path.isDirect, let column = layout.column(named: path.property) else { return nil }
            return compare(column, op, value)
        case .isIn(let path, let values):
            guard path.isDirect, let column = layout.column(named: path.property), column.type == .int else {
                return nil
            }
            var keys: [Int64] = []
            for value in values {
                guard case .int(let v) = value else { return nil }
                keys.append(v)
            }
            binds.append(keys)
            return "coalesce(t.\(column.quoted) = ANY($\(binds.count)), false)"
        case .and(let items):
            var parts: [String] = []
            for item in items {
                guard let part = translate(item) else { return nil }
                parts.append(part)
            }
            return parts.isEmpty ? "TRUE" : "(" + parts.joined(separator: " AND ") + ")"
        case .or(let items):
            var parts: [String] = []
            for item in items {
                guard let part = translate(item) else { return nil }
                parts.append(part)
            }
            return parts.isEmpty ? "FALSE" : "(" + parts.joined(separator: " OR ") + ")"
        case .not(let item):
            return translate(item).map { "NOT \($0)" }
        case .range, .text, .any, .all:
            return nil
        }
    }

    private mutating func compare(_ column: TableLayout.Column, _ op: StoreComparisonOperator, _ value: StoreValue)
        -> String?
    {
        let name = "t.\(column.quoted)"
        if value == .null {
            switch op {
            case .equal: return "\(name) IS NULL"
            case .notEqual: return "\(name) IS NOT NULL"
            default: return "FALSE"
            }
        }
        guard let type = column.type else { return nil }
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
            right = "$\(binds.count)"
        case (.string, .string(let v)):
            binds.append(ColumnType.escapingNUL(v))
            left = "normalize(\(name), NFC) COLLATE \"C\""
            right = "normalize($\(binds.count), NFC) COLLATE \"C\""
        case (.double, .double(let v)) where !v.isNaN:
            binds.append(v)
            right = "$\(binds.count)"
            guardNaN = true
        case (.double, .int(let v)):
            binds.append(Double(v))
            right = "$\(binds.count)::double precision"
            guardNaN = true
        case (.bool, .bool(let v)) where !ordering:
            binds.append(v)
            right = "$\(binds.count)"
        case (.uuid, .uuid(let v)) where !ordering:
            binds.append(v)
            right = "$\(binds.count)"
        default:
            return nil
        }
        let comparison = "\(left) \(sqlOperator) \(right)"
        if op == .notEqual {
            // Swift: nil != x and NaN != x are true.
            return "(\(name) IS NULL OR coalesce(\(comparison), true))"
        }
        if guardNaN && ordering { return "coalesce(\(name) <> 'NaN' AND \(comparison), false)" }
        return "coalesce(\(comparison), false)"
    }
}
