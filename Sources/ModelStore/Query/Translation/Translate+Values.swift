import Foundation

// Leaves and member access: variables, constants, `nil` and key paths.

extension PredicateExpressions.Variable: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? { translator.binding(key) }
    var operands: [any PredicateExpression] { [] }
    func render(_ renderer: inout PredicateRenderer) -> String { renderer.name(of: key) }
}

extension PredicateExpressions.Value: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? { .constant(Constant(value)) }
    var operands: [any PredicateExpression] { [] }
    func render(_ renderer: inout PredicateRenderer) -> String { PredicateRenderer.constant(value) }
}

extension PredicateExpressions.NilLiteral: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? { .constant(Constant(Wrapped?.none)) }
    var operands: [any PredicateExpression] { [] }
    func render(_ renderer: inout PredicateRenderer) -> String { "nil" }
}

extension PredicateExpressions.KeyPath: TranslatableExpression {
    func translate(in translator: inout PredicateTranslator) throws -> Term? {
        switch try translator.term(root) {
        case .model(let model):
            return try translator.member(of: model, keyPath: keyPath, valueType: Output.self)
        case .attribute(let attribute):
            return Self.member(of: attribute, keyPath: keyPath, rootType: Root.Output.self)
        case .models(let models):
            // `items.isEmpty`: no related model exists.
            guard let array = Root.Output.self as? any EmptinessKeyPathProviding.Type, keyPath == array.isEmptyKeyPath
            else { return nil }
            return .filter(.not(.any(StorePath(models.path), .constant(true))), scope: models.scope)
        default:
            return nil
        }
    }

    /// What a key path on a stored value reads: `isEmpty` of a string, `rawValue` of an enum.
    private static func member(of attribute: AttributeReference, keyPath: AnyKeyPath, rootType: Any.Type) -> Term? {
        if rootType == String.self, keyPath == \String.isEmpty as AnyKeyPath, !attribute.isOptional {
            return .filter(.compare(attribute.path, .equal, .string("")), scope: attribute.scope)
        }
        if case .enumeration(_, let raw) = attribute.valueType.unwrapped,
            let enumType = rootType as? any (RawRepresentable & CaseIterable).Type,
            RawValueKeyPath.matches(keyPath, of: enumType)
        {
            var reference = attribute
            reference.valueType = attribute.valueType.isOptional ? .optional(raw) : raw
            return .attribute(reference)
        }
        return nil
    }

    var operands: [any PredicateExpression] { [root] }

    func render(_ renderer: inout PredicateRenderer) -> String {
        renderer.render(root) + "." + renderer.memberName(keyPath, rootType: Root.Output.self)
    }
}

/// Recognises `\.rawValue` of an enum. A key path written on the concrete type differs from one
/// formed generically, so it is recognised by what it returns: the raw value of every case.
enum RawValueKeyPath {
    static func matches<R: RawRepresentable & CaseIterable>(_ keyPath: AnyKeyPath, of type: R.Type) -> Bool {
        guard let typed = keyPath as? KeyPath<R, R.RawValue>, let codec = ValueCodecs.codec(for: R.RawValue.self),
            !R.allCases.isEmpty
        else { return false }
        return R.allCases.allSatisfy { item in
            guard let viaKeyPath = try? codec.encode(item[keyPath: typed]), let raw = try? codec.encode(item.rawValue)
            else { return false }
            return viaKeyPath == raw
        }
    }
}

/// Arrays answer `isEmpty` and `count` by key path, so `items.isEmpty` can be recognised.
protocol EmptinessKeyPathProviding {
    static var isEmptyKeyPath: AnyKeyPath { get }
    static var countKeyPath: AnyKeyPath { get }
}

extension Array: EmptinessKeyPathProviding {
    static var isEmptyKeyPath: AnyKeyPath { \Self.isEmpty }
    static var countKeyPath: AnyKeyPath { \Self.count }
}
