import Foundation

// `==`, `!=`, `<`, `<=`, `>`, `>=`.

extension PredicateExpressions.Equal: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        translator.equality(try translator.term(lhs), try translator.term(rhs), negated: false)
    }
    var operands: [any PredicateExpression] { [lhs, rhs] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "\(renderer.render(lhs)) == \(renderer.render(rhs))"
    }
}

extension PredicateExpressions.NotEqual: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        translator.equality(try translator.term(lhs), try translator.term(rhs), negated: true)
    }
    var operands: [any PredicateExpression] { [lhs, rhs] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "\(renderer.render(lhs)) != \(renderer.render(rhs))"
    }
}

extension PredicateExpressions.Comparison: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        translator.ordering(storeOperator, try translator.term(lhs), try translator.term(rhs))
    }

    var storeOperator: StoreComparisonOperator {
        switch op {
        case .lessThan: .less
        case .lessThanOrEqual: .lessOrEqual
        case .greaterThan: .greater
        case .greaterThanOrEqual: .greaterOrEqual
        @unknown default: .less
        }
    }

    var operands: [any PredicateExpression] { [lhs, rhs] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "\(renderer.render(lhs)) \(storeOperator) \(renderer.render(rhs))"
    }
}

extension PredicateTranslator {
    /// `lhs == rhs` (or `!=`) as a condition, when one side is stored and the other constant.
    func equality(_ lhs: Term, _ rhs: Term, negated: Bool) -> Term? {
        guard let (filter, scope) = equalityCondition(lhs, rhs) ?? equalityCondition(rhs, lhs) else { return nil }
        return .filter(negated ? filter.negated : filter, scope: scope)
    }

    private func equalityCondition(_ stored: Term, _ other: Term) -> (StoreFilter, Int?)? {
        guard case .constant(let constant) = other else { return nil }
        switch stored {
        case .attribute(let attribute):
            guard Self.supportsEquality(attribute.valueType), let value = constant.storeValue else { return nil }
            return (.compare(attribute.path, .equal, value), attribute.scope)
        case .coalesced(let attribute, let fallback):
            // `(a ?? d) == c`: a nil `a` gives `d == c`, known now.
            guard Self.supportsEquality(attribute.valueType), let value = constant.storeValue,
                let defaultValue = fallback.storeValue
            else { return nil }
            let matches = StoreFilter.compare(attribute.path, .equal, value)
            let isNull = StoreFilter.compare(attribute.path, .equal, .null)
            return (ValueSemantics.equals(defaultValue, value) ? .or([isNull, matches]) : matches, attribute.scope)
        case .optionalFilter(let filter, let isNull, let scope):
            if constant.isNil { return (isNull, scope) }
            guard let wanted = constant.bool else { return nil }
            return (.and([isNull.negated, wanted ? filter : filter.negated]), scope)
        case .filter(let filter, let scope):
            guard let wanted = constant.bool else { return nil }
            return (wanted ? filter : filter.negated, scope)
        case .identifier(let model):
            if constant.isNil {
                guard !model.path.isEmpty else { return (.constant(false), nil) }
                return (.compare(StorePath(model.path), .equal, .null), model.scope)
            }
            guard let id = Self.identifier(in: constant.value) else { return nil }
            guard !model.path.isEmpty else { return (.identifiers([id]), model.scope) }
            return (.compare(StorePath(model.path), .equal, .reference(id)), model.scope)
        case .model(let model):
            // Only `nil` compares models by something other than object identity.
            guard constant.isNil else { return nil }
            guard !model.path.isEmpty else { return (.constant(false), nil) }
            return (.compare(StorePath(model.path), .equal, .null), model.scope)
        default:
            return nil
        }
    }

    /// `lhs < rhs` (and friends) as a condition, when one side is stored and the other constant.
    func ordering(_ op: StoreComparisonOperator, _ lhs: Term, _ rhs: Term) -> Term? {
        if let (filter, scope) = orderingCondition(op, lhs, rhs) { return .filter(filter, scope: scope) }
        if let (filter, scope) = orderingCondition(op.swapped, rhs, lhs) { return .filter(filter, scope: scope) }
        return nil
    }

    private func orderingCondition(
        _ op: StoreComparisonOperator, _ stored: Term, _ other: Term
    ) -> (StoreFilter, Int?)? {
        guard case .constant(let constant) = other, let value = constant.storeValue, !value.isNull else { return nil }
        switch stored {
        case .attribute(let attribute):
            guard Self.supportsOrdering(attribute.valueType) else { return nil }
            return (.compare(attribute.path, op, value), attribute.scope)
        case .coalesced(let attribute, let fallback):
            guard Self.supportsOrdering(attribute.valueType), let defaultValue = fallback.storeValue else { return nil }
            let matches = StoreFilter.compare(attribute.path, op, value)
            guard ValueSemantics.holds(op, defaultValue, value) else { return (matches, attribute.scope) }
            return (.or([.compare(attribute.path, .equal, .null), matches]), attribute.scope)
        default:
            return nil
        }
    }

    /// A `PersistentIdentifier` held by a constant (possibly as an optional).
    static func identifier(in value: Any) -> PersistentIdentifier? {
        switch value {
        case let id as PersistentIdentifier: id
        case let id as PersistentIdentifier?: id
        default: nil
        }
    }
}
