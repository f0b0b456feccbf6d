import Foundation

/// Comparisons of stored values with the semantics of the Swift types they came from, shared by
/// the translator (folding), `SnapshotEvaluator` and `SnapshotTable`'s indexes.
///
/// Values of one attribute are of one kind, so most comparisons call the Swift type's own operator
/// (`Double`'s IEEE `<=`, `Decimal`'s `<`, `String`'s `<`); numbers of different kinds (a stored
/// `.int` read as a `Double`) compare numerically.
package enum ValueSemantics {
    /// Swift's `==` on the values.
    @inline(__always)
    package static func equals(_ a: StoreValue, _ b: StoreValue) -> Bool {
        if a == b { return true }
        guard a.isNumber, b.isNumber, !a.isSameKind(as: b) else { return false }
        return numericOrder(a, b) == .orderedSame
    }

    /// Whether `a op b` holds. Ordering comparisons involving `null` are false.
    package static func holds(_ op: StoreComparisonOperator, _ a: StoreValue, _ b: StoreValue) -> Bool {
        switch op {
        case .equal: return equals(a, b)
        case .notEqual: return !equals(a, b)
        default: break
        }
        switch (a, b) {
        case (.int(let x), .int(let y)): return apply(op, x, y)
        case (.double(let x), .double(let y)): return apply(op, x, y)
        case (.string(let x), .string(let y)): return apply(op, x, y)
        case (.date(let x), .date(let y)): return apply(op, x, y)
        case (.uint(let x), .uint(let y)): return apply(op, x, y)
        case (.decimal(let x), .decimal(let y)): return apply(op, x, y)
        case (.uuid(let x), .uuid(let y)): return apply(op, x, y)
        default:
            guard a.isNumber, b.isNumber else { return false }
            if case .double(let x) = a, x.isNaN { return false }
            if case .double(let y) = b, y.isNaN { return false }
            let order = numericOrder(a, b)
            switch op {
            case .less: return order == .orderedAscending
            case .lessOrEqual: return order != .orderedDescending
            case .greater: return order == .orderedDescending
            case .greaterOrEqual: return order != .orderedAscending
            case .equal, .notEqual: return false
            }
        }
    }

    /// The operator applied by the type's own `Comparable` witness, as `#Predicate` does.
    @inlinable @inline(__always)
    package static func apply<C: Comparable>(_ op: StoreComparisonOperator, _ x: C, _ y: C) -> Bool {
        switch op {
        case .equal: x == y
        case .notEqual: x != y
        case .less: x < y
        case .lessOrEqual: x <= y
        case .greater: x > y
        case .greaterOrEqual: x >= y
        }
    }

    /// The order `SortDescriptor` gives two values: `nil` first, then the type's `<` both ways
    /// (`NaN` ties with everything), strings by the comparison.
    package static func sortOrder(
        _ a: StoreValue, _ b: StoreValue, _ comparison: StoreSortKey.Comparison
    ) -> ComparisonResult {
        switch (a, b) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case (.int(let x), .int(let y)): return comparableOrder(x, y)
        case (.double(let x), .double(let y)): return comparableOrder(x, y)
        case (.string(let x), .string(let y)):
            switch comparison {
            case .binary: return comparableOrder(x, y)
            case .lexical: return String.StandardComparator.lexical.compare(x, y)
            case .localizedStandard: return x.localizedStandardCompare(y)
            case .caseInsensitive: return x.caseInsensitiveCompare(y)
            }
        case (.date(let x), .date(let y)): return comparableOrder(x, y)
        case (.uint(let x), .uint(let y)): return comparableOrder(x, y)
        case (.decimal(let x), .decimal(let y)): return comparableOrder(x, y)
        case (.uuid(let x), .uuid(let y)): return comparableOrder(x, y)
        default:
            if a.isNumber && b.isNumber {
                if case .double(let x) = a, x.isNaN { return .orderedSame }
                if case .double(let y) = b, y.isNaN { return .orderedSame }
                return numericOrder(a, b)
            }
            return StoreValue.compare(a, b)
        }
    }

    @inlinable @inline(__always)
    package static func comparableOrder<C: Comparable>(_ x: C, _ y: C) -> ComparisonResult {
        x < y ? .orderedAscending : (y < x ? .orderedDescending : .orderedSame)
    }

    /// Numbers of different kinds, compared exactly where possible.
    package static func numericOrder(_ a: StoreValue, _ b: StoreValue) -> ComparisonResult {
        switch (a, b) {
        case (.int(let x), .uint(let y)): return x < 0 ? .orderedAscending : comparableOrder(UInt64(x), y)
        case (.uint(let x), .int(let y)): return y < 0 ? .orderedDescending : comparableOrder(x, UInt64(y))
        case (.decimal(let x), _): return comparableOrder(x, b.decimalValue ?? x)
        case (_, .decimal(let y)): return comparableOrder(a.decimalValue ?? y, y)
        default: return comparableOrder(a.numericValue ?? 0, b.numericValue ?? 0)
        }
    }
}

extension StoreValue {
    /// Whether this is a number (`int`, `uint`, `double`, `decimal`).
    var isNumber: Bool {
        switch self {
        case .int, .uint, .double, .decimal: true
        default: false
        }
    }

    /// Whether both values are the same case.
    func isSameKind(as other: StoreValue) -> Bool { kindName == other.kindName }

    var decimalValue: Decimal? {
        switch self {
        case .int(let v): Decimal(v)
        case .uint(let v): Decimal(v)
        case .double(let v): Decimal(v)
        case .decimal(let v): v
        default: nil
        }
    }
}
