import ModelStoreMacrosPlugin
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

/// The macros by the names the library declares them with, for `assertMacroExpansion`.
let macroSpecs: [String: MacroSpec] = [
    "Model": MacroSpec(type: ModelMacro.self, conformances: ["PersistentModel", "RelationshipContent", "_MacroModel"]),
    "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
    "_LinkRelationshipsOnReturn": MacroSpec(type: LinkRelationshipsMacro.self),
    "Attribute": MacroSpec(type: MarkerMacro.self),
    "Relationship": MacroSpec(type: MarkerMacro.self),
    "Transient": MacroSpec(type: TransientMacro.self),
    "Unique": MacroSpec(type: ConstraintMacro.self),
    "Index": MacroSpec(type: ConstraintMacro.self),
    "ModelActor": MacroSpec(type: ModelActorMacro.self, conformances: ["ModelActor"]),
]

/// The macros as the compiler gives them to a subclass of a `@Model` class: it already conforms to
/// `PersistentModel`, so `@Model` gets no conformances to add.
let subclassMacroSpecs = macroSpecs.merging(["Model": MacroSpec(type: ModelMacro.self, conformances: [])]) { $1 }

/// The macros as the compiler gives them to a subclass of a hand-written model class: it conforms to
/// `PersistentModel`, without `_MacroModel`.
let handWrittenSubclassMacroSpecs = macroSpecs.merging([
    "Model": MacroSpec(type: ModelMacro.self, conformances: ["_MacroModel"])
]) { $1 }

/// Expands `source` and checks the result, the diagnostics and, when given, the source with every fix-it applied;
/// with `inheritsModel`, as the compiler expands a subclass of a `@Model` class; with
/// `inheritsHandWrittenModel`, of a hand-written model class.
func assertExpansion(
    _ source: String, expandedSource: String, diagnostics: [DiagnosticSpec] = [], fixedSource: String? = nil,
    inheritsModel: Bool = false, inheritsHandWrittenModel: Bool = false,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    assertMacroExpansion(
        source, expandedSource: expandedSource, diagnostics: diagnostics,
        macroSpecs: inheritsHandWrittenModel
            ? handWrittenSubclassMacroSpecs : inheritsModel ? subclassMacroSpecs : macroSpecs,
        applyFixIts: nil, fixedSource: fixedSource,
        failureHandler: { Issue.record("\($0.message)", sourceLocation: sourceLocation) })
}
