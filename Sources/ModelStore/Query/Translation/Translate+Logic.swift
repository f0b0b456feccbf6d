import Foundation

// `&&`, `||`, `!` and the ternary operator.

extension PredicateExpressions.Conjunction: TranslatableExpression, ConjunctionExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard let left = translator.condition(try translator.term(lhs)),
            let right = translator.condition(try translator.term(rhs)),
            let scope = PredicateTranslator.sharedScope(left.scope, right.scope)
        else { return nil }
        return .filter(StoreFilter.conjunction([left.filter, right.filter]) ?? .constant(true), scope: scope)
    }
    var leftOperand: any PredicateExpression { lhs }
    var rightOperand: any PredicateExpression { rhs }
    var operands: [any PredicateExpression] { [lhs, rhs] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "(\(renderer.render(lhs)) && \(renderer.render(rhs)))"
    }
}

extension PredicateExpressions.Disjunction: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard let left = translator.condition(try translator.term(lhs)),
            let right = translator.condition(try translator.term(rhs)),
            let scope = PredicateTranslator.sharedScope(left.scope, right.scope)
        else { return nil }
        let operands = [left.filter, right.filter].flatMap { filter -> [StoreFilter] in
            if case .or(let items) = filter { return items }
            return [filter]
        }
        if operands.contains(.constant(true)) { return .filter(.constant(true), scope: scope) }
        let remaining = operands.filter { $0 != .constant(false) }
        switch remaining.count {
        case 0: return .filter(.constant(false), scope: scope)
        case 1: return .filter(remaining[0], scope: scope)
        default: return .filter(.or(remaining), scope: scope)
        }
    }
    var operands: [any PredicateExpression] { [lhs, rhs] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "(\(renderer.render(lhs)) || \(renderer.render(rhs)))"
    }
}

extension PredicateExpressions.Negation: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard let inner = translator.condition(try translator.term(wrapped)) else { return nil }
        return .filter(inner.filter.negated, scope: inner.scope)
    }
    var operands: [any PredicateExpression] { [wrapped] }
    func render(_ renderer: inout PredicateRenderer) -> String { "!\(renderer.render(wrapped))" }
}

extension PredicateExpressions.Conditional: TranslatableExpression {
    /// `test ? a : b` over conditions is `(test && a) || (!test && b)`.
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard If.Output.self == Bool.self,
            let test = translator.condition(try translator.term(test)),
            let whenTrue = translator.condition(try translator.term(trueBranch)),
            let whenFalse = translator.condition(try translator.term(falseBranch)),
            let first = PredicateTranslator.sharedScope(test.scope, whenTrue.scope),
            let scope = PredicateTranslator.sharedScope(first, whenFalse.scope)
        else { return nil }
        let filter = StoreFilter.or([
            StoreFilter.conjunction([test.filter, whenTrue.filter]) ?? .constant(true),
            StoreFilter.conjunction([test.filter.negated, whenFalse.filter]) ?? .constant(true),
        ])
        return .filter(filter, scope: scope)
    }
    var operands: [any PredicateExpression] { [test, trueBranch, falseBranch] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "(\(renderer.render(test)) ? \(renderer.render(trueBranch)) : \(renderer.render(falseBranch)))"
    }
}
