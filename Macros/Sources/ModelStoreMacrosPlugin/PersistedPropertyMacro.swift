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
        guard case .property(let property) = ModelPropertyReader.read(declaration) else { return [] }
        return PropertyStorage(property).accessors()
    }

    /// The property's storage.
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard case .property(let property) = ModelPropertyReader.read(declaration) else { return [] }
        return [PropertyStorage(property).declaration()]
    }
}
