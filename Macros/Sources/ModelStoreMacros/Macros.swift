@_exported import ModelStore

/// Makes a final class a persistent model, as SwiftData's `@Model` does.
///
/// ```swift
/// @Model
/// final class Trip {
///     #Unique<Trip>([\.name, \.start])
///     @Attribute(.unique) var name: String
///     var start: Date
///     @Relationship(deleteRule: .cascade, inverse: \Item.trip) var items: [Item] = []
///     @Transient var isExpanded = false
///
///     init(name: String, start: Date) {
///         self.name = name
///         self.start = start
///     }
/// }
/// ```
///
/// Every stored `var` is persisted: as a relationship when it is marked `@Relationship`, or when it
/// is an optional or an array of a model type (`Trip?`, `[Item]`); otherwise as an attribute, which
/// includes an optional or an array of a `Codable` enum or struct declared anywhere (`Category?`,
/// `[Stop]`): the compiler tells the two apart by the type, with no check at run time. `@Transient`
/// properties are observed and never stored. No property needs an initial value; the class's
/// initializers set them, and may set relationships: those are linked to their inverses as the
/// initializer returns (one that can fail or throw links them when the model is first used). A stored
/// property's `willSet` and `didSet` run around each store of a new value, as a plain stored
/// property's do; loading a fetched model runs none.
///
/// The class gets an `init()` for the framework to create models with unless it declares one
/// (`required` when the class is not `final`). A `@Model` class may subclass another `@Model` class
/// (model inheritance), or a hand-written model class: the subclass stores its own properties, and
/// the hierarchy's `#Unique` and `#Index` are declared on its root.
@attached(member, conformances: PersistentModel, RelationshipContent, _MacroModel, names: named(init), arbitrary)
@attached(memberAttribute)
@attached(extension, conformances: PersistentModel, RelationshipContent, _MacroModel)
public macro Model() = #externalMacro(module: "ModelStoreMacrosPlugin", type: "ModelMacro")

/// Configures how a `@Model` property is stored, in SwiftData's spelling: `@Attribute(.unique) var name: String`.
///
/// `hashModifier` is accepted and has no effect: it versions SwiftData's own schemas.
@attached(peer)
public macro Attribute(
    _ options: Schema.Attribute.Options..., originalName: String? = nil, hashModifier: String? = nil
) = #externalMacro(module: "ModelStoreMacrosPlugin", type: "MarkerMacro")

/// Stores a `@Model` property through a value transformer, in SwiftData's spelling:
/// `@Attribute(.transformable(by: ColorTransformer.self)) var tint: Color`. The transformation comes
/// first, before any other options.
@attached(peer)
public macro Attribute(
    _ transformation: Schema.Attribute.Transformation, _ options: Schema.Attribute.Options...,
    originalName: String? = nil, hashModifier: String? = nil
) = #externalMacro(module: "ModelStoreMacrosPlugin", type: "MarkerMacro")

/// Makes a `@Model` property a relationship, in SwiftData's spelling:
/// `@Relationship(deleteRule: .cascade, inverse: \Item.trip) var items: [Item]`.
///
/// `.unique` on a to-one relationship (`@Relationship(.unique) var badge: Badge?`) adds the
/// uniqueness constraint `#Unique<Model>([\.badge])` to the model: no two models relate to the same
/// one. `hashModifier` is accepted and has no effect: it versions SwiftData's own schemas.
@attached(peer)
public macro Relationship(
    _ options: Schema.Relationship.Option..., deleteRule: Schema.Relationship.DeleteRule = .nullify,
    minimumModelCount: Int = 0,
    maximumModelCount: Int = 0, originalName: String? = nil, inverse: AnyKeyPath? = nil, hashModifier: String? = nil
) = #externalMacro(module: "ModelStoreMacrosPlugin", type: "MarkerMacro")

/// Makes a `@Model` property observed but never stored.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro Transient() = #externalMacro(module: "ModelStoreMacrosPlugin", type: "TransientMacro")

/// Declares compound uniqueness constraints of a `@Model` class: each array of key paths must be
/// unique as a combination, as SwiftData's `#Unique`.
@freestanding(declaration)
public macro Unique<Model>(_ constraints: [PartialKeyPath<Model>]...) =
    #externalMacro(module: "ModelStoreMacrosPlugin", type: "ConstraintMacro")

/// Declares indexes of a `@Model` class, one for each array of key paths, as SwiftData's `#Index`.
@freestanding(declaration)
public macro Index<Model>(_ indexes: [PartialKeyPath<Model>]...) =
    #externalMacro(module: "ModelStoreMacrosPlugin", type: "ConstraintMacro")

/// Makes an actor a `ModelActor` with `modelContainer`, its own `modelContext`, the
/// `modelExecutor` that holds the context and runs the actor's jobs, and `init(modelContainer:)`,
/// as SwiftData's `@ModelActor` does.
@attached(member, names: named(modelExecutor), named(modelContainer), named(modelContext), arbitrary)
@attached(extension, conformances: ModelActor)
public macro ModelActor() = #externalMacro(module: "ModelStoreMacrosPlugin", type: "ModelActorMacro")

/// Links the relationships an initializer of a `@Model` class set to their inverses as it returns;
/// `@Model` adds it to each initializer that sets one and cannot fail or throw. The initializer's
/// statements become the macro's expansion, so the compiler reports an error in one of them there.
@attached(body)
public macro _LinkRelationshipsOnReturn() =
    #externalMacro(module: "ModelStoreMacrosPlugin", type: "LinkRelationshipsMacro")

/// Stores a property of a `@Model` class; `@Model` adds it to each stored property, with
/// `storesValue: true` when the property's type is an enum or struct the class declares.
@attached(accessor, names: named(init), named(get), named(set))
@attached(peer, names: prefixed(_))
public macro _PersistedProperty(storesValue: Bool = false) =
    #externalMacro(module: "ModelStoreMacrosPlugin", type: "PersistedPropertyMacro")
