import SwiftSyntax

/// What the macros read from a type as it is written: they see syntax, not the types it names.
enum TypeNames {
    /// Value types of the standard library and Foundation that ModelStore stores: a property of one
    /// of these, or an optional or array of one, is an attribute, never a relationship.
    static let knownValueTypes: Set<String> = [
        "String", "Substring", "Character", "Bool", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8",
        "UInt16", "UInt32", "UInt64", "Double", "Float", "Float16", "CGFloat", "Decimal", "Date", "Data", "UUID",
        "URL",
    ]

    /// The last component of a type's name, without generic arguments: `Foundation.Date` is `Date`.
    static func baseName(_ type: some SyntaxProtocol) -> String {
        if let member = type.as(MemberTypeSyntax.self) { return member.name.text }
        if let identifier = type.as(IdentifierTypeSyntax.self) { return identifier.name.text }
        return type.trimmedDescription
    }

    /// `T` for `T?`, `T!` and `Optional<T>`.
    static func optionalWrapped(_ type: TypeSyntax) -> TypeSyntax? {
        if let optional = type.as(OptionalTypeSyntax.self) { return optional.wrappedType }
        if let unwrapped = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return unwrapped.wrappedType }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Optional",
            let argument = identifier.genericArgumentClause?.arguments.first,
            case .type(let wrapped) = argument.argument
        {
            return wrapped
        }
        return nil
    }

    /// `T` for `[T]` and `Array<T>`.
    static func arrayElement(_ type: TypeSyntax) -> TypeSyntax? {
        if let array = type.as(ArrayTypeSyntax.self) { return array.element }
        if let identifier = type.as(IdentifierTypeSyntax.self), identifier.name.text == "Array",
            let argument = identifier.genericArgumentClause?.arguments.first,
            case .type(let element) = argument.argument
        {
            return element
        }
        return nil
    }

    /// The model type of a relationship's type: `Trip` for `Trip?`, `[Trip]` and `[Trip]?`; `nil` for
    /// any other shape.
    static func relationshipDestination(_ type: TypeSyntax) -> TypeSyntax? {
        if let wrapped = optionalWrapped(type) { return arrayElement(wrapped) ?? wrapped }
        return arrayElement(type)
    }

    /// Whether the type names one of ``knownValueTypes``.
    static func isKnownValueType(_ type: TypeSyntax) -> Bool {
        let isNamed = type.is(IdentifierTypeSyntax.self) || type.is(MemberTypeSyntax.self)
        return isNamed && knownValueTypes.contains(baseName(type))
    }

    /// Whether a property without `@Attribute` or `@Relationship` may be a relationship: its type is
    /// an optional or an array of a named type that is not a known value type. The macro cannot see
    /// what the name is; the expansion lets the compiler decide (see `ModelProperty.Kind.inferred`).
    static func mayBeRelationship(_ type: TypeSyntax) -> Bool {
        guard let destination = relationshipDestination(type) else { return false }
        if let identifier = destination.as(IdentifierTypeSyntax.self) {
            return identifier.genericArgumentClause == nil && !isKnownValueType(destination)
        }
        if let member = destination.as(MemberTypeSyntax.self) {
            return member.genericArgumentClause == nil && !isKnownValueType(destination)
        }
        return false
    }

    /// Whether an option is `.unique`, however qualified (`Schema.Relationship.Option.unique`).
    static func isUniqueOption(_ option: ExprSyntax) -> Bool {
        option.as(MemberAccessExprSyntax.self)?.declName.baseName.text == "unique"
    }

    /// Why no value of the type can be stored, for the shapes that never can: functions, tuples,
    /// existentials and opaque types. `nil` for every other type (the runtime checks those).
    static func unstorableReason(_ type: TypeSyntax) -> String? {
        if let wrapped = optionalWrapped(type) { return unstorableReason(wrapped) }
        if let element = arrayElement(type) { return unstorableReason(element) }
        if let attributed = type.as(AttributedTypeSyntax.self) { return unstorableReason(attributed.baseType) }
        if type.is(FunctionTypeSyntax.self) { return "a function cannot be stored" }
        if let tuple = type.as(TupleTypeSyntax.self) {
            if tuple.elements.count == 1, let only = tuple.elements.first { return unstorableReason(only.type) }
            return "a tuple cannot be stored"
        }
        if let some = type.as(SomeOrAnyTypeSyntax.self) {
            return "'\(some.someOrAnySpecifier.text)' types cannot be stored"
        }
        return nil
    }

    /// The type an initial value spells, for a property declared without one: literals, `T(...)`,
    /// `[T]()`, `[K: V]()` and `T.member`.
    static func inferredType(_ value: ExprSyntax) -> TypeSyntax? {
        if value.is(IntegerLiteralExprSyntax.self) { return "Int" }
        if value.is(FloatLiteralExprSyntax.self) { return "Double" }
        if value.is(StringLiteralExprSyntax.self) { return "String" }
        if value.is(BooleanLiteralExprSyntax.self) { return "Bool" }
        if let prefix = value.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            return inferredType(prefix.expression)
        }
        if let call = value.as(FunctionCallExprSyntax.self) {
            return typeName(call.calledExpression)
        }
        if let member = value.as(MemberAccessExprSyntax.self), let base = member.base {
            return typeName(base)
        }
        return nil
    }

    /// `Date` for the expression `Date`, `Foundation.Date` for `Foundation.Date`: a capitalized name;
    /// `[Item]` and `[String: Int]` for those collection literals of type names.
    private static func typeName(_ expression: ExprSyntax) -> TypeSyntax? {
        if let array = expression.as(ArrayExprSyntax.self), array.elements.count == 1,
            let element = array.elements.first.flatMap({ typeName($0.expression) })
        {
            return TypeSyntax(ArrayTypeSyntax(element: element))
        }
        if let dictionary = expression.as(DictionaryExprSyntax.self),
            case .elements(let elements) = dictionary.content, elements.count == 1, let element = elements.first,
            let key = typeName(element.key), let value = typeName(element.value)
        {
            return TypeSyntax(DictionaryTypeSyntax(key: key, value: value))
        }
        if let reference = expression.as(DeclReferenceExprSyntax.self),
            reference.baseName.text.first?.isUppercase == true
        {
            return TypeSyntax(IdentifierTypeSyntax(name: reference.baseName.trimmed))
        }
        if let specialized = expression.as(GenericSpecializationExprSyntax.self) {
            return TypeSyntax(stringLiteral: specialized.trimmedDescription)
        }
        if let member = expression.as(MemberAccessExprSyntax.self), let base = member.base,
            member.declName.baseName.text.first?.isUppercase == true, typeName(base) != nil
        {
            return TypeSyntax(stringLiteral: member.trimmedDescription)
        }
        return nil
    }
}
