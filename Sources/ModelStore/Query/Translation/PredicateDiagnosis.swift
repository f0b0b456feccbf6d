import Foundation

/// Names the part of a predicate that failed on a model, for ``DataStoreError/invalidPredicate``.
enum PredicateDiagnosis {
    /// The error for a predicate whose evaluation on `input` threw `underlying`.
    static func error<T: PersistentModel>(
        for predicate: Predicate<T>, input: T, id: PersistentIdentifier, schema: Schema, underlying: any Error
    ) -> DataStoreError {
        let bindings = PredicateBindings((predicate.variable, input))
        let culprit = locate(predicate.expression, bindings)
        var renderer = PredicateRenderer(schema: schema)
        _ = renderer.name(of: predicate.variable.key)
        let expression = renderer.render(culprit)
        return DataStoreError(
            .invalidPredicate, "the predicate cannot be evaluated on \(id): '\(expression)' failed: \(underlying)",
            remedy: "Avoid force unwraps and forced casts in predicates: use optional chaining, '??' or 'as?'",
            entityName: id.entityName, underlyingError: underlying)
    }

    /// The innermost node that throws while its operands evaluate: the failing force unwrap, cast
    /// or subscript. Closure bodies are not entered (their variables are not bound here).
    static func locate(
        _ expression: any PredicateExpression, _ bindings: PredicateBindings
    ) -> any PredicateExpression {
        guard let node = expression as? any TranslatableExpression else { return expression }
        for operand in node.operands where fails(operand, bindings) {
            return locate(operand, bindings)
        }
        return expression
    }

    private static func fails(_ expression: any PredicateExpression, _ bindings: PredicateBindings) -> Bool {
        func attempt<E: PredicateExpression>(_ expression: E) -> Bool {
            do {
                _ = try expression.evaluate(bindings)
                return false
            } catch {
                return true
            }
        }
        return attempt(expression)
    }
}
