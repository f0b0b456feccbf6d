import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@_PersistedProperty`, which `@Model` puts on each stored property, and `@Transient`: the
/// property's storage (a peer, `_name`) and the accessors that read and write it.
///
/// The accessors call the same subscripts the compiler calls for a property wrapper, so a
/// `@Model` property and a hand-written `@Attribute var` compile to the same code.
public struct PersistedPropertyMacro: AccessorMacro, PeerMacro {
    /// The property's init accessor, getter and setter.
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let property = property(declaration, attribute: node) else { return [] }
        return PropertyStorage(property).accessors()
    }

    /// The property's storage.
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let property = property(declaration, attribute: node) else { return [] }
        return [PropertyStorage(property).declaration()]
    }

    /// The property, stored as a value when `@Model` says so (`storesValue: true`).
    private static func property(_ declaration: some DeclSyntaxProtocol, attribute: AttributeSyntax) -> ModelProperty? {
        guard case .property(var property) = ModelPropertyReader.read(declaration) else { return nil }
        let storesValue = attribute.arguments?.as(LabeledExprListSyntax.self)?.contains {
            $0.label?.text == "storesValue" && $0.expression.as(BooleanLiteralExprSyntax.self)?.literal.text == "true"
        }
        if storesValue == true { property.kind = .attribute }
        return property
    }
}
