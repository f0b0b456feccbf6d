import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plug-in of ModelStoreMacros.
@main
struct ModelStoreMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        ModelMacro.self, PersistedPropertyMacro.self, TransientMacro.self, MarkerMacro.self,
        ConstraintMacro.self, ModelActorMacro.self, LinkRelationshipsMacro.self,
    ]
}
