import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Model`: makes a class a `PersistentModel` whose stored properties are persisted.
///
/// The expansion is the hand-written form of a model, which the runtime already reads through
/// storage offsets found once per type:
/// - each stored property becomes a computed one over a `ModelStore.Attribute`, `Relationship` or
///   `Transient` stored beside it (`_name`), whose init accessor lets the class's own initializers
///   set it, so no initial value is needed;
/// - `persistentBackingData`, and the `init()` the framework makes models with (each property
///   without an initial value gets a placeholder, which a fetch overwrites);
/// - `constraints` from `#Unique` and `#Index`;
/// - relationships an initializer sets are linked to their inverses as it returns: the init
///   accessor keeps them, and `persistentBackingData`, which every read, write and insert goes
///   through first, links them; `@_LinkRelationshipsOnReturn` reads it as each initializer that
///   sets one and cannot fail returns (one that can fail or throw leaves them to the model's first use).
///
/// Model inheritance: a class that can have subclasses gets a `required init()`. A subclass of a
/// model class (see `ModelClass.superclass(protocols:of:)`) gets only its own properties' storage, a
/// `required init()` that ends in `super.init()` (none when it inherits its superclass's
/// initializers), and, when it has relationships, a list of those its initializers set, which a
/// `@Model` root's `persistentBackingData` links through the overridable
/// `_$linkSubclassRelationships()`. Under a hand-written root, which has no such hook, a
/// relationship is set after `super.init()` (see `ModelClass.subclassLinkMembers`). Its `#Unique` and
/// `#Index` are an error: a hierarchy's constraints are its root's.
public struct ModelMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    /// Adds `persistentBackingData`, `init()`, `constraints` and what linking relationships needs.
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard
            let model = ModelClass(
                declaration, attribute: node, context: context, report: true,
                superclass: ModelClass.superclass(protocols: protocols, of: declaration)),
            model.isValid
        else { return [] }
        return model.generatedMembers()
    }

    /// Puts `@_PersistedProperty` on each stored property that is not `@Transient`, with
    /// `storesValue: true` on one that only the class's own enums and structs show to be a value
    /// (`var format: Format?`), which the property's own expansion cannot see; and
    /// `@_LinkRelationshipsOnReturn` on each initializer that sets a relationship of the class and can
    /// link it as it returns (see `LinkRelationshipsMacro`).
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        if let initializer = member.as(InitializerDeclSyntax.self) {
            guard let model = ModelClass(declaration, attribute: node, context: context, report: false),
                model.isValid,
                LinkRelationshipsMacro.appliesTo(
                    initializer, relationships: Set(model.properties.filter(\.mayBeRelationship).map(\.name)))
            else { return [] }
            return ["@_LinkRelationshipsOnReturn"]
        }
        guard let model = ModelClass(declaration, attribute: node, context: context, report: false), model.isValid,
            case .property(let property) = ModelPropertyReader.read(member, valueTypes: model.valueTypes),
            property.kind != .transient
        else { return [] }
        if case .property(let bySyntax) = ModelPropertyReader.read(member), bySyntax.kind != property.kind {
            return ["@_PersistedProperty(storesValue: true)"]
        }
        return ["@_PersistedProperty"]
    }

    /// Adds the conformances the class lacks (see `ModelClass.extensionConformances`): none to a
    /// subclass of a model class, which inherits them.
    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol, conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        let conformances = ModelClass.extensionConformances(protocols: protocols, of: declaration)
        guard !conformances.isEmpty,
            let model = ModelClass(declaration, attribute: node, context: context, report: false), model.isValid
        else { return [] }
        return [
            try ExtensionDeclSyntax("extension \(type.trimmed): \(raw: conformances.joined(separator: ", ")) {}")
        ]
    }
}
