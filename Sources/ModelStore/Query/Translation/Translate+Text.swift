import Foundation

// String tests: `contains`, `starts(with:)` and regular expressions.
//
// Foundation on Linux has no case-insensitive or localized string node (`caseInsensitiveCompare`,
// `localizedStandardContains` are Apple-only); a case-insensitive test is written as a regex,
// `$0.name.contains(/(?i)rome/)`, and translates to `matchesRegex`.

extension PredicateExpressions.CollectionContainsCollection: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard Base.Output.self == String.self, Other.Output.self == String.self,
            case .attribute(let attribute) = try translator.term(base), !attribute.isOptional,
            attribute.valueType.unwrapped == .string,
            case .constant(let constant) = try translator.term(other), let text = constant.value as? String
        else { return nil }
        return .filter(.text(attribute.path, .contains(text)), scope: attribute.scope)
    }
    var operands: [any PredicateExpression] { [base, other] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "\(renderer.render(base)).contains(\(renderer.render(other)))"
    }
}

extension PredicateExpressions.SequenceStartsWith: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard Base.Output.self == String.self, Prefix.Output.self == String.self,
            case .attribute(let attribute) = try translator.term(base), !attribute.isOptional,
            attribute.valueType.unwrapped == .string,
            case .constant(let constant) = try translator.term(prefix), let text = constant.value as? String
        else { return nil }
        return .filter(.text(attribute.path, .hasPrefix(text)), scope: attribute.scope)
    }
    var operands: [any PredicateExpression] { [base, prefix] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "\(renderer.render(base)).starts(with: \(renderer.render(prefix)))"
    }
}

extension PredicateExpressions.StringContainsRegex: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        guard Subject.Output.self == String.self,
            case .attribute(let attribute) = try translator.term(subject), !attribute.isOptional,
            attribute.valueType.unwrapped == .string,
            case .constant(let constant) = try translator.term(regex),
            let pattern = (constant.value as? PredicateExpressions.PredicateRegex)?.stringRepresentation,
            (try? _StringProcessing.Regex<AnyRegexOutput>(pattern)) != nil
        else { return nil }
        return .filter(.text(attribute.path, .matchesRegex(pattern)), scope: attribute.scope)
    }
    var operands: [any PredicateExpression] { [subject, regex] }
    func render(_ renderer: inout PredicateRenderer) -> String {
        "\(renderer.render(subject)).contains(\(renderer.render(regex)))"
    }
}
