import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@ModelActor`: an actor with a container, a context of its own held by a serial model executor
/// that runs the actor's jobs, and `init(modelContainer:)`, conforming to `ModelActor`.
public struct ModelActorMacro: MemberMacro, ExtensionMacro {
    /// Adds the executor, the container, the context and `init(modelContainer:)`.
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
            /// The executor that runs the actor's jobs and holds its context.
            \(raw: access)nonisolated let modelExecutor: any ModelStoreMacros.SerialModelExecutor
            """,
            """
            /// The container the actor's context uses.
            \(raw: access)nonisolated let modelContainer: ModelStore.ModelContainer
            """,
            """
            /// The actor's own context, used only on the actor.
            \(raw: access)var modelContext: ModelStore.ModelContext { modelExecutor.modelContext }
            """,
            """
            /// The actor runs on its model executor.
            \(raw: access)nonisolated var unownedExecutor: UnownedSerialExecutor {
                modelExecutor.asUnownedSerialExecutor()
            }
            """,
            """
            /// Creates the actor with a new context on `modelContainer`.
            \(raw: access)init(modelContainer: ModelStore.ModelContainer) {
                let modelContext = ModelStore.ModelContext(modelContainer)
                self.modelExecutor = ModelStoreMacros.DefaultSerialModelExecutor(modelContext: modelContext)
                self.modelContainer = modelContainer
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
