import Foundation

// Membership (`values.contains($0.x)`, `ids.contains($0.persistentModelID)`), an array attribute's
// `contains(value)`, and the quantifiers
// over to-many relationships (`contains(where:)`, `allSatisfy`).

extension PredicateExpressions.SequenceContains: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        let sequenceTerm = try translator.term(sequence)
        if case .attribute(let array) = sequenceTerm { return try elementTest(of: array, in: &translator) }
        guard case .constant(let constant) = sequenceTerm,
            let values = constant.value as? LHS.Output
        else { return nil }
        switch try translator.term(element) {
        case .identifier(let model):
            let ids = values.compactMap { PredicateTranslator.identifier(in: $0) }
            if model.path.isEmpty { return .filter(.identifiers(Set(ids)), scope: model.scope) }
            // A `nil` to-one relationship is found only if the sequence holds `nil`.
            var stored = ids.map { StoreValue.reference($0) }
            if values.contains(where: { Constant($0).isNil }) { stored.append(.null) }
            return .filter(.isIn(StorePath(model.path), stored), scope: model.scope)
        case .attribute(let attribute):
            guard PredicateTranslator.supportsEquality(attribute.valueType),
                let codec = ValueCodecs.codec(for: RHS.Output.self),
                let encoded = try? values.map(codec.encode)
            else { return nil }
            return .filter(.isIn(attribute.path, encoded), scope: attribute.scope)
        default:
            return nil
        }
    }
    /// `$0.tags.contains(value)` on an array attribute: the element test, when the array is of a
    /// kind compared with `==` and the element is a value that reads no model.
    private func elementTest(of array: AttributeReference, in translator: inout PredicateTranslator) throws -> Term? {
        guard case .array(let elementType) = array.valueType.unwrapped,
            PredicateTranslator.supportsEquality(elementType),
            case .constant(let constant) = try translator.term(element),
            let value = constant.storeValue
        else { return nil }
        return .filter(.arrayContains(array.path, value), scope: array.scope)
    }

    var operands: [any PredicateExpression] { [sequence, element] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "\(renderer.render(sequence)).contains(\(renderer.render(element)))"
    }
}

extension PredicateExpressions.SequenceContainsWhere: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard case .models(let models) = try translator.term(sequence),
            let inner = try translator.quantifiedCondition(over: models, variable: variable.key, test: test)
        else { return nil }
        return .filter(.any(StorePath(models.path), inner), scope: models.scope)
    }
    var operands: [any PredicateExpression] { [sequence] }
    var closureBodies: [any PredicateExpression] { [test] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        let base = renderer.render(sequence)
        let name = renderer.declare(variable.key)
        return "\(base).contains { \(name) in \(renderer.render(test)) }"
    }
}

extension PredicateExpressions.SequenceAllSatisfy: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard case .models(let models) = try translator.term(sequence),
            let inner = try translator.quantifiedCondition(over: models, variable: variable.key, test: test)
        else { return nil }
        return .filter(.all(StorePath(models.path), inner), scope: models.scope)
    }
    var operands: [any PredicateExpression] { [sequence] }
    var closureBodies: [any PredicateExpression] { [test] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        let base = renderer.render(sequence)
        let name = renderer.declare(variable.key)
        return "\(base).allSatisfy { \(name) in \(renderer.render(test)) }"
    }
}

extension PredicateTranslator {
    /// The closure of a quantifier as a condition on the related entity, in a scope of its own;
    /// `nil` if it cannot be translated or reads the enclosing model.
    mutating func quantifiedCondition<Test: PredicateExpression>(
        over models: ModelReference, variable: PredicateExpressions.VariableID, test: Test
    ) throws -> StoreFilter? {
        let scope = openScope(models.entity)
        let element = Term.model(ModelReference(scope: scope, path: [], entity: models.entity, isOptional: false))
        let body = try withBinding(variable, to: element) { try $0.term(test) }
        guard let (filter, bodyScope) = condition(body), bodyScope == nil || bodyScope == scope else { return nil }
        return filter
    }
}
