import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Model`: makes a final class a `PersistentModel` whose stored properties are persisted.
///
/// The expansion is the hand-written form of a model, which the runtime already reads through
/// storage offsets found once per type:
/// - each stored property becomes a computed one over a `ModelStore.Attribute`, `Relationship` or
///   `Transient` stored beside it (`_name`), whose init accessor lets the class's own initializers
///   set it, so no initial value is needed;
/// - `persistentBackingData`, and the `init()` the framework makes models with (each property
///   without an initial value gets a placeholder, which a fetch overwrites);
/// - `constraints` from `#Unique` and `#Index`;
/// - relationships an initializer sets are linked to their inverses when the model is first used:
///   `persistentBackingData`, which every read, write and insert goes through first, links them.
///
/// Model inheritance (issue 45) fits this shape: each class's stored properties get their storage in
/// that class (the runtime's field walk lists a superclass's fields first), so a subclass adds only
/// its own. The root model class would keep `persistentBackingData` and the relationship links
/// (`private` members the subclass then reaches through `internal` ones), and `init()` would become
/// `required` there and `override required` in each subclass. Until then a non-final class is an
/// error.
public struct ModelMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    /// Adds `persistentBackingData`, `init()`, `constraints` and what linking relationships needs.
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let model = ModelClass(declaration, attribute: node, context: context, report: true), model.isValid
        else { return [] }
        return model.generatedMembers()
    }

    /// Puts `@_PersistedProperty` on each stored property that is not `@Transient`, with
    /// `storesValue: true` on one that only the class's own enums and structs show to be a value
    /// (`var format: Format?`), which the property's own expansion cannot see.
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard let model = ModelClass(declaration, attribute: node, context: context, report: false), model.isValid,
            case .property(let property) = ModelPropertyReader.read(member, valueTypes: model.valueTypes),
            property.kind != .transient
        else { return [] }
        if case .property(let bySyntax) = ModelPropertyReader.read(member), bySyntax.kind != property.kind {
            return ["@_PersistedProperty(storesValue: true)"]
        }
        return ["@_PersistedProperty"]
    }

    /// Adds the `PersistentModel` conformance, and names `RelationshipContent` (which it implies)
    /// too, so that relationships to the class (`Trip?`, `[Trip]?`) type-check in expansions that the
    /// compiler checks before it has seen the implied conformance.
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard !protocols.isEmpty, let model = ModelClass(declaration, attribute: node, context: context, report: false),
            model.isValid
        else { return [] }
        return [
            try ExtensionDeclSyntax(
                "extension \(type.trimmed): ModelStore.PersistentModel, ModelStore.RelationshipContent {}")
        ]
    }
}
