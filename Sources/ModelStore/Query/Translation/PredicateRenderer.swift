import Foundation

/// Writes predicate expressions in Swift-like notation for explanations and error messages, naming
/// stored properties through the schema (key paths to wrapped properties print no name on Linux).
struct PredicateRenderer {
    let schema: Schema?
    private var names: [PredicateExpressions.VariableID: String] = [:]
    private var nextVariable = 0

    init(schema: Schema?) { self.schema = schema }

    /// An expression as text; nodes the renderer does not know print their type.
    mutating func render(_ expression: any PredicateExpression) -> String {
        guard let node = expression as? any TranslatableExpression else {
            return "<\(Self.typeName(type(of: expression)))>"
        }
        return renderNode(node)
    }

    private mutating func renderNode<E: TranslatableExpression>(_ node: E) -> String { node.render(&self) }

    /// The name of a variable: `$0` for the first one seen, `$1` for the next.
    mutating func name(of variable: PredicateExpressions.VariableID) -> String {
        if let name = names[variable] { return name }
        return declare(variable)
    }

    /// Names a closure's variable.
    mutating func declare(_ variable: PredicateExpressions.VariableID) -> String {
        let name = "$\(nextVariable)"
        nextVariable += 1
        names[variable] = name
        return name
    }

    /// A key path's member name: the stored property's name when the schema knows it.
    func memberName(_ keyPath: AnyKeyPath, rootType: Any.Type) -> String {
        if let modelType = rootType as? any PersistentModel.Type, let entity = schema?.entity(for: modelType) {
            if let name = entity.propertyName(for: keyPath) { return name }
            if Self.isPersistentModelID(keyPath, of: modelType) { return "persistentModelID" }
        }
        if let known = Self.standardMemberName(keyPath, rootType: rootType) { return known }
        let text = Self.describe(keyPath)
        guard let dot = text.firstIndex(of: ".") else { return text }
        return String(text[text.index(after: dot)...])
    }

    /// Names of standard-library members predicates use, which print without a name on Linux.
    private static func standardMemberName(_ keyPath: AnyKeyPath, rootType: Any.Type) -> String? {
        if rootType == String.self {
            let members: [(AnyKeyPath, String)] = [(\String.count, "count"), (\String.isEmpty, "isEmpty")]
            return members.first { $0.0 == keyPath }?.1
        }
        if let array = rootType as? any EmptinessKeyPathProviding.Type {
            if keyPath == array.isEmptyKeyPath { return "isEmpty" }
            if keyPath == array.countKeyPath { return "count" }
        }
        if let raw = rootType as? any (RawRepresentable & CaseIterable).Type,
            RawValueKeyPath.matches(keyPath, of: raw)
        {
            return "rawValue"
        }
        return nil
    }

    private static func isPersistentModelID(_ keyPath: AnyKeyPath, of type: any PersistentModel.Type) -> Bool {
        func check<M: PersistentModel>(_: M.Type) -> Bool { keyPath == \M.persistentModelID as AnyKeyPath }
        return check(type)
    }

    /// A key path as text, with the addresses Linux prints for computed properties left out:
    /// `\Trip.scratch`, `\Trip.<computed String>`.
    static func describe(_ keyPath: AnyKeyPath) -> String {
        String(describing: keyPath).replacing(/<computed 0x[0-9a-fA-F]+ \(([^)]*)\)>/) { "<computed \($0.1)>" }
    }

    /// A constant as text: strings quoted, collections shortened.
    static func constant(_ value: Any) -> String {
        switch value {
        case Optional<Any>.none: return "nil"
        case let string as String: return StoreValue.string(string).description
        case let bool as Bool: return String(bool)
        case let id as PersistentIdentifier: return id.description
        case let regex as PredicateExpressions.PredicateRegex: return "/\(regex.stringRepresentation)/"
        case let sequence as any Collection where !(value is String):
            let items = sequence.prefix(5).map { constant($0) }
            return "[" + items.joined(separator: ", ") + (sequence.count > 5 ? ", … (\(sequence.count))" : "") + "]"
        default:
            if let stored = try? ValueCodecs.storeValue(of: value), !stored.isNull, stored.kindName != "dictionary" {
                return stored.description
            }
            return String(describing: value)
        }
    }

    static func typeName(_ type: Any.Type) -> String {
        let full = String(describing: type)
        return full.split(separator: "<").first.map(String.init) ?? full
    }
}
