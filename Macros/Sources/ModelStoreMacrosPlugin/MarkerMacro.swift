import SwiftSyntax
import SwiftSyntaxMacros

/// `@Attribute(...)` and `@Relationship(...)`: they expand to nothing; `@Model` reads their
/// arguments. Outside a `@Model` class they are an error, since nothing would be stored.
public struct MarkerMacro: PeerMacro {
    /// Reports an `@Attribute` or `@Relationship` outside a `@Model` class; adds nothing.
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        if !isInModel(context) {
            context.diagnose(
                ModelDiagnostic.markerOutsideModel(TypeNames.baseName(node.attributeName)).diagnose(at: node))
        }
        return []
    }

    /// Whether the declaration being expanded is a member of a class marked `@Model`.
    static func isInModel(_ context: some MacroExpansionContext) -> Bool {
        guard let type = context.lexicalContext.first?.as(ClassDeclSyntax.self) else { return false }
        return type.attributes.contains { element in
            guard let attribute = element.as(AttributeSyntax.self) else { return false }
            return TypeNames.baseName(attribute.attributeName) == "Model"
        }
    }
}
