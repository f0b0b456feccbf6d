import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@ModelActor`: an actor with a container, a context of its own, and `init(modelContainer:)`,
/// conforming to `ModelActor`. The actor runs on its own default serial executor.
public struct ModelActorMacro: MemberMacro, ExtensionMacro {
    /// Adds the container, the context and `init(modelContainer:)`.
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let actor = declaration.as(ActorDeclSyntax.self) else {
            context.diagnose(ModelDiagnostic.modelActorOnNonActor.diagnose(at: declaration.introducer))
            return []
        }
        let modifiers = actor.modifiers.map(\.name.tokenKind)
        let access =
            modifiers.contains(.keyword(.public)) ? "public " : modifiers.contains(.keyword(.package)) ? "package " : ""
        return [
            """
            /// The container the actor's context uses.
            \(raw: access)nonisolated let modelContainer: ModelStore.ModelContainer
            """,
            """
            /// The actor's own context, used only on the actor.
            \(raw: access)let modelContext: ModelStore.ModelContext
            """,
            """
            /// Creates the actor with a new context on `modelContainer`.
            \(raw: access)init(modelContainer: ModelStore.ModelContainer) {
                self.modelContainer = modelContainer
                self.modelContext = ModelStore.ModelContext(modelContainer)
            }
            """,
        ]
    }

    /// Adds the `ModelActor` conformance.
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self), !protocols.isEmpty else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): ModelStore.ModelActor {}")]
    }
}
