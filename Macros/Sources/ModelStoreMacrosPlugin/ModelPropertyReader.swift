import SwiftDiagnostics
import SwiftSyntax

/// Reads a `var` declaration of a `@Model` class.
enum ModelPropertyReader {
    /// What a member declaration is to `@Model`.
    enum Reading {
        /// Not a stored instance property (a computed or static property, or not a property).
        case ignored
        /// A stored property the macros keep.
        case property(ModelProperty)
        /// A stored property the macros cannot keep, with the diagnostics that say why.
        case invalid([Diagnostic])
    }

    /// The reading of one member declaration; `valueTypes` names the enums and structs the class
    /// declares inside itself, which an unmarked optional or array of one stores as a value.
    static func read(_ declaration: some SyntaxProtocol, valueTypes: Set<String> = []) -> Reading {
        guard let variable = declaration.as(VariableDeclSyntax.self) else { return .ignored }
        let modifiers = variable.modifiers.map(\.name.tokenKind)
        if modifiers.contains(.keyword(.static)) || modifiers.contains(.keyword(.class)) { return .ignored }
        // Accessors of its own: a computed property, or a stored one with observers, which the
        // generated setter calls (the compiler drops them once the macro makes the property computed).
        var observers: [AccessorDeclSyntax] = []
        if let binding = variable.bindings.first, let accessors = binding.accessorBlock {
            guard case .accessors(let list) = accessors.accessors,
                list.allSatisfy({ [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) })
            else { return .ignored }
            observers = Array(list)
        }
        if modifiers.contains(.keyword(.lazy)) {
            return .invalid([ModelDiagnostic.lazyProperty.diagnose(at: Syntax(variable.bindingSpecifier))])
        }
        if variable.bindingSpecifier.tokenKind == .keyword(.let) {
            let fixed = variable.bindingSpecifier.with(\.tokenKind, .keyword(.var))
            return .invalid([
                ModelDiagnostic.letProperty.diagnose(
                    at: variable.bindingSpecifier,
                    fixIts: [
                        FixIt(
                            message: ModelFixIt("replace 'let' with 'var'"),
                            changes: [.replace(oldNode: Syntax(variable.bindingSpecifier), newNode: Syntax(fixed))])
                    ])
            ])
        }
        guard variable.bindings.count == 1, let binding = variable.bindings.first,
            let identifier = binding.pattern.as(IdentifierPatternSyntax.self)
        else {
            return .invalid([ModelDiagnostic.severalBindings.diagnose(at: Syntax(variable.bindings))])
        }
        let name = identifier.identifier.trimmedDescription
        let initialValue = binding.initializer?.value
        // The written type, where diagnostics point; the trimmed copy goes into the expansion.
        let writtenType = binding.typeAnnotation?.type
        guard let type = writtenType?.trimmed ?? initialValue.flatMap(TypeNames.inferredType) else {
            return .invalid([ModelDiagnostic.missingType(name).diagnose(at: binding)])
        }
        if let reason = TypeNames.unstorableReason(type) {
            return .invalid([
                ModelDiagnostic.unstorableType(name, type.trimmedDescription, reason).diagnose(at: writtenType ?? type)
            ])
        }
        let attribute = MarkerAttribute.find(in: variable.attributes)
        let kind: ModelProperty.Kind
        switch attribute?.marker {
        case .transient: kind = .transient
        case .relationship:
            if let problem = relationshipProblem(name: name, type: writtenType ?? type, attribute: attribute!.syntax) {
                return .invalid([problem])
            }
            kind = .relationship
        case .attribute: kind = .attribute
        case nil:
            let isValue = TypeNames.relationshipDestination(type).map { valueTypes.contains(TypeNames.baseName($0)) }
            kind = TypeNames.mayBeRelationship(type) && isValue != true ? .inferred : .attribute
        }
        let arguments = attribute?.syntax.arguments?.as(LabeledExprListSyntax.self)
        var property = ModelProperty(
            name: name, type: type, initialValue: initialValue, kind: kind, arguments: arguments)
        property.willSet = observers.first { $0.accessorSpecifier.tokenKind == .keyword(.willSet) }
        property.didSet = observers.first { $0.accessorSpecifier.tokenKind == .keyword(.didSet) }
        return .property(property)
    }

    /// What is wrong with an `@Relationship` that can be seen in its declaration alone: a type that is
    /// not an optional model or an array of models, or an inverse on a type that is not the destination.
    private static func relationshipProblem(name: String, type: TypeSyntax, attribute: AttributeSyntax) -> Diagnostic? {
        guard let destination = TypeNames.relationshipDestination(type) else {
            return ModelDiagnostic.relationshipShape(name, type.trimmedDescription).diagnose(
                at: type, fixIts: [ModelDiagnostic.removeAttributeFixIt(attribute)])
        }
        if TypeNames.isKnownValueType(destination) {
            return ModelDiagnostic.relationshipToValue(name, destination.trimmedDescription).diagnose(
                at: type, fixIts: [ModelDiagnostic.removeAttributeFixIt(attribute)])
        }
        let arguments = attribute.arguments?.as(LabeledExprListSyntax.self)
        if let unique = arguments?.first(where: { $0.label == nil && TypeNames.isUniqueOption($0.expression) }),
            TypeNames.optionalWrapped(type).map({ TypeNames.arrayElement($0) != nil }) ?? true
        {
            return ModelDiagnostic.uniqueToMany(name, type.trimmedDescription).diagnose(at: unique.expression)
        }
        guard let arguments,
            let inverse = arguments.first(where: { $0.label?.text == "inverse" })?.expression
        else { return nil }
        guard let keyPath = inverse.as(KeyPathExprSyntax.self) else { return nil }
        guard let root = keyPath.root else {
            let fixed = keyPath.with(\.root, destination.trimmed)
            return ModelDiagnostic.inverseWithoutRoot(name, destination.trimmedDescription).diagnose(
                at: keyPath,
                fixIts: [
                    FixIt(
                        message: ModelFixIt("write '\(fixed.trimmedDescription)'"),
                        changes: [.replace(oldNode: Syntax(keyPath), newNode: Syntax(fixed))])
                ])
        }
        if keyPath.components.count != 1 {
            return ModelDiagnostic.inverseNotAProperty(name, keyPath.trimmedDescription).diagnose(at: keyPath)
        }
        if TypeNames.baseName(root) != TypeNames.baseName(destination) {
            return ModelDiagnostic.inverseOnOtherType(
                name, keyPath.trimmedDescription, root.trimmedDescription, destination.trimmedDescription
            ).diagnose(at: keyPath)
        }
        return nil
    }
}
