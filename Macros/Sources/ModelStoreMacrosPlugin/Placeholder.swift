import SwiftSyntax

/// The value a property without an initial value starts with in the framework's `init()`.
enum Placeholder {
    /// A literal of the type, for the types that have an obvious one; `nil` for the others, which
    /// get theirs from `_ModelPlaceholder` at run time.
    static func literal(for type: TypeSyntax) -> String? {
        if type.is(ArrayTypeSyntax.self) { return "[]" }
        if type.is(DictionaryTypeSyntax.self) { return "[:]" }
        guard type.is(IdentifierTypeSyntax.self) || type.is(MemberTypeSyntax.self) else { return nil }
        switch TypeNames.baseName(type) {
        case "String", "Substring": return "\"\""
        case "Bool": return "false"
        case "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double",
            "Float", "Float16", "CGFloat", "Decimal":
            return "0"
        case "Date": return "\(type.trimmedDescription)(timeIntervalSinceReferenceDate: 0)"
        case "Data": return "\(type.trimmedDescription)()"
        default: return nil
        }
    }
}
