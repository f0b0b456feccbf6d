import Foundation

// Optional chaining (`?.`, `flatMap`), `??` and `!`.

extension PredicateExpressions.OptionalFlatMap: TranslatableExpression {
    /// `$0.destination?.city` and `$0.nickname.flatMap { … }`: the closure's variable is bound to the
    /// unwrapped value, and a `nil` anywhere along the path reads as `nil`.
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        switch try translator.term(wrapped) {
        case .model(let model) where model.classFilter != nil:
            // `($0 as? Subclass)?.…`: `nil` where the cast fails. What the body reads must be stored
            // empty for every other class, as only the subclasses' own properties are.
            guard let classFilter = model.classFilter else { return nil }
            var unwrapped = model
            unwrapped.isOptional = false
            unwrapped.classFilter = nil
            var isNull = classFilter.negated
            if !model.path.isEmpty { isNull = .or([.compare(StorePath(model.path), .equal, .null), isNull]) }
            let body = try translator.withBinding(variable.key, to: .model(unwrapped)) { try $0.term(transform) }
            switch body {
            case .filter, .optionalFilter:
                break
            case .attribute(let attribute) where attribute.path.components.count == model.path.count + 1:
                guard model.entity.propertiesStoredEmptyOutside(classFilter).contains(attribute.path.property)
                else { return nil }
            case .model(let related) where related.path.count == model.path.count + 1:
                guard let last = related.path.last,
                    model.entity.propertiesStoredEmptyOutside(classFilter).contains(last)
                else { return nil }
            default:
                return nil
            }
            return optional(body, isNull: isNull, scope: model.scope)
        case .model(let model) where !model.path.isEmpty:
            var unwrapped = model
            unwrapped.isOptional = false
            let body = try translator.withBinding(variable.key, to: .model(unwrapped)) { try $0.term(transform) }
            return optional(body, isNull: .compare(StorePath(model.path), .equal, .null), scope: model.scope)
        case .attribute(let attribute):
            var unwrapped = attribute
            unwrapped.isOptional = false
            let body = try translator.withBinding(variable.key, to: .attribute(unwrapped)) { try $0.term(transform) }
            return optional(body, isNull: .compare(attribute.path, .equal, .null), scope: attribute.scope)
        default:
            return nil
        }
    }

    /// The closure's result as an optional: stored values become optional, conditions `Bool?`.
    private func optional(_ body: Term, isNull: StoreFilter, scope: Int) -> Term? {
        switch body {
        case .attribute(var attribute):
            attribute.isOptional = true
            return .attribute(attribute)
        case .model(var model):
            model.isOptional = true
            return .model(model)
        case .identifier(var model):
            model.isOptional = true
            return .identifier(model)
        case .filter(let filter, let bodyScope):
            guard bodyScope == nil || bodyScope == scope else { return nil }
            return .optionalFilter(filter, isNull: isNull, scope: scope)
        case .optionalFilter(let filter, let innerNull, let bodyScope):
            guard bodyScope == scope else { return nil }
            return .optionalFilter(filter, isNull: .or([isNull, innerNull]), scope: scope)
        default:
            return nil
        }
    }

    var operands: [any PredicateExpression] { [wrapped] }
    var closureBodies: [any PredicateExpression] { [transform] }

    func render(_ renderer: inout PredicateRenderer) -> String {
        let base = renderer.render(wrapped)
        let name = renderer.declare(variable.key)
        return "\(base).flatMap { \(name) in \(renderer.render(transform)) }"
    }
}

extension PredicateExpressions.NilCoalesce: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard case .constant(let fallback) = try translator.term(rhs), !fallback.isNil else { return nil }
        switch try translator.term(lhs) {
        case .attribute(let attribute):
            return .coalesced(attribute, fallback)
        case .optionalFilter(let filter, let isNull, let scope):
            guard let value = fallback.bool else { return nil }
            let present = StoreFilter.and([isNull.negated, filter])
            return .filter(value ? .or([isNull, present]) : present, scope: scope)
        default:
            return nil
        }
    }
    var operands: [any PredicateExpression] { [lhs, rhs] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "(\(renderer.render(lhs)) ?? \(renderer.render(rhs)))"
    }
}

extension PredicateExpressions.ForcedUnwrap: TranslatableExpression {
    /// Never translated: unwrapping `nil` must fail where Swift fails, so it runs on models.
    func translate(in translator: inout PredicateTranslator) throws -> Term? { nil }
    var operands: [any PredicateExpression] { [inner] }
    var canThrowItself: Bool { true }
    func render(_ renderer: inout PredicateRenderer) -> String { "\(renderer.render(inner))!" }
}
