import Foundation

// Arithmetic, casts and subscripts. None of them is translated when it reads a variable; these
// conformances fold constants safely (an overflow or a division by zero is reported instead of
// crashing), say which nodes can throw, and render them in explanations and errors.

extension PredicateExpressions.Arithmetic: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard case .constant(let a) = try translator.term(lhs), case .constant(let b) = try translator.term(rhs),
            let integer = a.value as? any FixedWidthInteger
        else { return nil }
        if ArithmeticCheck.overflows(integer, b.value, op) {
            var renderer = PredicateRenderer(schema: translator.schema)
            throw ArithmeticCheck.error(render(&renderer), "overflows")
        }
        return nil
    }
    var operands: [any PredicateExpression] { [lhs, rhs] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        let symbol =
            switch op {
            case .add: "+"
            case .subtract: "-"
            case .multiply: "*"
            @unknown default: "?"
            }
        return "(\(renderer.render(lhs)) \(symbol) \(renderer.render(rhs)))"
    }
}

extension PredicateExpressions.UnaryMinus: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard case .constant(let a) = try translator.term(wrapped), let integer = a.value as? any FixedWidthInteger,
            ArithmeticCheck.negationOverflows(integer)
        else { return nil }
        var renderer = PredicateRenderer(schema: translator.schema)
        throw ArithmeticCheck.error(render(&renderer), "overflows")
    }
    var operands: [any PredicateExpression] { [wrapped] }
    func render(_ renderer: inout PredicateRenderer) -> String { "-\(renderer.render(wrapped))" }
}

extension PredicateExpressions.IntDivision: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        try ArithmeticCheck.checkDivision(lhs, rhs, in: &translator) { render(&$0) }
    }
    var operands: [any PredicateExpression] { [lhs, rhs] }
    func render(_ renderer: inout PredicateRenderer) -> String { "(\(renderer.render(lhs)) / \(renderer.render(rhs)))" }
}

extension PredicateExpressions.IntRemainder: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        try ArithmeticCheck.checkDivision(lhs, rhs, in: &translator) { render(&$0) }
    }
    var operands: [any PredicateExpression] { [lhs, rhs] }
    func render(_ renderer: inout PredicateRenderer) -> String { "(\(renderer.render(lhs)) % \(renderer.render(rhs)))" }
}

extension PredicateExpressions.FloatDivision: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? { nil }
    var operands: [any PredicateExpression] { [lhs, rhs] }
    func render(_ renderer: inout PredicateRenderer) -> String { "(\(renderer.render(lhs)) / \(renderer.render(rhs)))" }
}

extension PredicateExpressions.ConditionalCast: TranslatableExpression {
    /// `model as? Subclass`, on a model of a hierarchy's entity: the same model, `nil` unless its
    /// class attribute names the subclass or one of its subclasses (see `OptionalFlatMap`).
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard case .model(var model) = try translator.term(input),
            let desired = Desired.self as? any PersistentModel.Type,
            let isClass = model.entity.classFilter(desired, path: model.path)
        else { return nil }
        model.classFilter = StoreFilter.conjunction([model.classFilter, isClass].compactMap { $0 })
        model.isOptional = true
        return .model(model)
    }
    var operands: [any PredicateExpression] { [input] }
    func render(_ renderer: inout PredicateRenderer) -> String { "(\(renderer.render(input)) as? \(Desired.self))" }
}

extension PredicateExpressions.ForceCast: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? { nil }
    var operands: [any PredicateExpression] { [input] }
    var canThrowItself: Bool { true }
    func render(_ renderer: inout PredicateRenderer) -> String { "(\(renderer.render(input)) as! \(Desired.self))" }
}

extension PredicateExpressions.TypeCheck: TranslatableExpression {
    /// `model is Subclass`, on a model of a hierarchy's entity, is a test of its class attribute.
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard case .model(let model) = try translator.term(input),
            let desired = Desired.self as? any PersistentModel.Type,
            let isClass = model.entity.classFilter(desired, path: model.path)
        else { return nil }
        return .filter(isClass, scope: model.scope)
    }
    var operands: [any PredicateExpression] { [input] }
    func render(_ renderer: inout PredicateRenderer) -> String { "(\(renderer.render(input)) is \(Desired.self))" }
}

extension PredicateExpressions.CollectionIndexSubscript: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? { nil }
    var operands: [any PredicateExpression] { [wrapped, index] }
    var canThrowItself: Bool { true }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "\(renderer.render(wrapped))[\(renderer.render(index))]"
    }
}

extension PredicateExpressions.DictionaryKeySubscript: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? { nil }
    var operands: [any PredicateExpression] { [wrapped, key] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "\(renderer.render(wrapped))[\(renderer.render(key))]"
    }
}

/// Overflow and division checks for constant integer arithmetic.
enum ArithmeticCheck {
    static func overflows<I: FixedWidthInteger>(
        _ a: I, _ other: Any, _ op: PredicateExpressions.ArithmeticOperator
    ) -> Bool {
        guard let b = other as? I else { return false }
        switch op {
        case .add: return a.addingReportingOverflow(b).overflow
        case .subtract: return a.subtractingReportingOverflow(b).overflow
        case .multiply: return a.multipliedReportingOverflow(by: b).overflow
        @unknown default: return false
        }
    }

    static func negationOverflows<I: FixedWidthInteger>(_ a: I) -> Bool {
        I.isSigned && a == I.min
    }

    /// Reports a constant integer division by zero (or `min / -1`), which would crash `Predicate.evaluate`;
    /// otherwise leaves the node to be folded or left on models.
    static func checkDivision<L: PredicateExpression, R: PredicateExpression>(
        _ lhs: L, _ rhs: R, in translator: inout PredicateTranslator, render: (inout PredicateRenderer) -> String
    ) throws -> Term? {
        guard case .constant(let a) = try translator.term(lhs), case .constant(let b) = try translator.term(rhs),
            let integer = a.value as? any FixedWidthInteger, divisionFails(integer, b.value)
        else { return nil }
        var renderer = PredicateRenderer(schema: translator.schema)
        throw error(render(&renderer), "divides by zero or overflows")
    }

    static func divisionFails<I: FixedWidthInteger>(_ a: I, _ other: Any) -> Bool {
        guard let b = other as? I else { return false }
        return b == 0 || a.dividedReportingOverflow(by: b).overflow
    }

    static func error(_ expression: String, _ problem: String) -> DataStoreError {
        DataStoreError(
            .invalidPredicate, "the predicate's constant expression '\(expression)' \(problem)",
            remedy: "Compute the value with wider or checked arithmetic before building the predicate")
    }
}
