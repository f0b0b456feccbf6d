import Foundation

// Ranges: `(a...b).contains($0.x)`, `(a..<b).contains($0.x)`, captured ranges and partial ranges.

extension PredicateExpressions.RangeExpressionContains: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard case .attribute(let attribute) = try translator.term(element), !attribute.isOptional,
            PredicateTranslator.supportsOrdering(attribute.valueType)
        else { return nil }
        let bounds: StoreRange?
        if let node = range as? any RangeNode {
            bounds = try node.storeRange(in: &translator)
        } else if case .constant(let constant) = try translator.term(range),
            let value = constant.value as? any StoreRangeConvertible
        {
            bounds = value.storeRange
        } else {
            bounds = nil
        }
        guard let bounds else { return nil }
        return .filter(.range(attribute.path, bounds), scope: attribute.scope)
    }
    var operands: [any PredicateExpression] { [range, element] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "\(renderer.render(range)).contains(\(renderer.render(element)))"
    }
}

/// A range built in the predicate (`a...b`, `a..<b`) whose bounds fold to constants.
protocol RangeNode {
    func storeRange(in translator: inout PredicateTranslator) throws -> StoreRange?
}

extension PredicateTranslator {
    /// The range between two folded bounds. Throws when the bounds are reversed: Swift would crash
    /// forming such a range while evaluating the predicate.
    mutating func range<L: PredicateExpression, U: PredicateExpression>(
        _ lower: L, _ upper: U, includesUpper: Bool, rendered: (inout PredicateRenderer) -> String
    ) throws -> StoreRange? {
        guard case .constant(let low) = try term(lower), case .constant(let high) = try term(upper),
            let lowValue = low.storeValue, let highValue = high.storeValue
        else { return nil }
        if !ValueSemantics.holds(.lessOrEqual, lowValue, highValue) {
            var renderer = PredicateRenderer(schema: schema)
            throw DataStoreError(
                .invalidPredicate,
                "the range '\(rendered(&renderer))' has a lower bound above its upper bound (or a NaN bound)",
                remedy: "Swap the bounds; Swift cannot form this range and would stop the program")
        }
        return StoreRange(lower: lowValue, upper: highValue, includesUpper: includesUpper)
    }
}

extension PredicateExpressions.ClosedRange: TranslatableExpression, RangeNode {
    func storeRange(in translator: inout PredicateTranslator) throws -> StoreRange? {
        try translator.range(lower, upper, includesUpper: true, rendered: render)
    }
    /// Only translated inside `contains`; standing alone it is checked, then folded.
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        _ = try storeRange(in: &translator)
        return nil
    }
    var operands: [any PredicateExpression] { [lower, upper] }
    var canThrowItself: Bool { true }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "(\(renderer.render(lower))...\(renderer.render(upper)))"
    }
}

extension PredicateExpressions.Range: TranslatableExpression, RangeNode {
    func storeRange(in translator: inout PredicateTranslator) throws -> StoreRange? {
        try translator.range(lower, upper, includesUpper: false, rendered: render)
    }
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        _ = try storeRange(in: &translator)
        return nil
    }
    var operands: [any PredicateExpression] { [lower, upper] }
    var canThrowItself: Bool { true }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "(\(renderer.render(lower))..<\(renderer.render(upper)))"
    }
}

/// Swift's range types, as store ranges (their bounds encoded through the bound type's codec).
protocol StoreRangeConvertible {
    var storeRange: StoreRange? { get }
}

private func encodedBound<Bound>(_ bound: Bound) -> StoreValue? {
    try? ValueCodecs.codec(for: Bound.self)?.encode(bound)
}

extension ClosedRange: StoreRangeConvertible {
    var storeRange: StoreRange? {
        guard let lower = encodedBound(lowerBound), let upper = encodedBound(upperBound) else { return nil }
        return StoreRange(lower: lower, upper: upper, includesUpper: true)
    }
}

extension Range: StoreRangeConvertible {
    var storeRange: StoreRange? {
        guard let lower = encodedBound(lowerBound), let upper = encodedBound(upperBound) else { return nil }
        return StoreRange(lower: lower, upper: upper, includesUpper: false)
    }
}

extension PartialRangeFrom: StoreRangeConvertible {
    var storeRange: StoreRange? {
        encodedBound(lowerBound).map { StoreRange(lower: $0, upper: nil, includesUpper: false) }
    }
}

extension PartialRangeThrough: StoreRangeConvertible {
    var storeRange: StoreRange? {
        encodedBound(upperBound).map { StoreRange(lower: nil, upper: $0, includesUpper: true) }
    }
}

extension PartialRangeUpTo: StoreRangeConvertible {
    var storeRange: StoreRange? {
        encodedBound(upperBound).map { StoreRange(lower: nil, upper: $0, includesUpper: false) }
    }
}
