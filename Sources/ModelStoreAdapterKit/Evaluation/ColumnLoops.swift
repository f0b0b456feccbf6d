import ModelStore

/// Comparisons run over a typed column in tight loops: the scan half of a filter compiled to columns.
///
/// Each loop reads machine values from contiguous storage, with the operator chosen once outside
/// the loop, no allocation per row and no reference counting per value. The operators are the
/// type's own, as `ValueSemantics.apply(_:_:_:)` applies them to snapshots, so a row passes here
/// exactly when its snapshot would.
enum ColumnLoops {
    /// Keeps the positions of `selection` (every position of `column` when `nil`) whose value
    /// satisfies `value op constant`, in ascending order.
    static func refine<Value: Comparable>(
        _ selection: inout [Int]?, _ column: [Value], _ op: StoreComparisonOperator, _ constant: Value
    ) {
        switch op {
        case .equal: keep(&selection, column) { $0 == constant }
        case .notEqual: keep(&selection, column) { $0 != constant }
        case .less: keep(&selection, column) { $0 < constant }
        case .lessOrEqual: keep(&selection, column) { $0 <= constant }
        case .greater: keep(&selection, column) { $0 > constant }
        case .greaterOrEqual: keep(&selection, column) { $0 >= constant }
        }
    }

    @inline(__always)
    private static func keep<Value>(_ selection: inout [Int]?, _ column: [Value], _ test: (Value) -> Bool) {
        column.withUnsafeBufferPointer { values in
            var kept: [Int] = []
            if let current = selection {
                kept.reserveCapacity(current.count)
                for position in current where test(values[position]) { kept.append(position) }
            } else {
                kept.reserveCapacity(values.count / 8)
                for position in values.indices where test(values[position]) { kept.append(position) }
            }
            selection = kept
        }
    }
}
