import SwiftSyntax
import SwiftSyntaxMacros

/// `@Transient`: an observed property that is never stored. Outside a `@Model` class it is an error.
public struct TransientMacro: AccessorMacro, PeerMacro {
    /// The transient property's init accessor, getter and setter.
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard MarkerMacro.isInModel(context), case .property(let property) = ModelPropertyReader.read(declaration)
        else { return [] }
        return PropertyStorage(property).accessors()
    }

    /// The transient property's storage; outside a `@Model` class, an error.
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard MarkerMacro.isInModel(context) else {
            context.diagnose(ModelDiagnostic.markerOutsideModel("Transient").diagnose(at: node))
            return []
        }
        guard case .property(let property) = ModelPropertyReader.read(declaration) else { return [] }
        return [PropertyStorage(property).declaration()]
    }
}
