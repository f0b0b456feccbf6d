import SwiftDiagnostics
import SwiftSyntax

/// One stored property of a `@Model` class, as its declaration spells it: what the macros persist.
struct ModelProperty {
    /// How the property is kept.
    enum Kind {
        /// A value, stored in a `ModelStore.Attribute`.
        case attribute
        /// An optional model or an array of models, stored in a `ModelStore.Relationship`.
        case relationship
        /// Observed, never stored (`@Transient`), in a `ModelStore.Transient`.
        case transient
        /// An unmarked optional or array of a named type (`Trip?`, `[Stop]`): a relationship when the
        /// type is a model, else a value. The compiler decides, not the macro: the storage's type is
        /// `Destination._ModelStoreStorage<Type>`, which ModelStoreMacros declares as
        /// `ModelStore.Relationship` for models and as `ModelStore.Attribute` for `Codable` types.
        case inferred
    }

    let name: String
    /// The declared type, or the one the initial value spells (`= 0` is an `Int`).
    let type: TypeSyntax
    let initialValue: ExprSyntax?
    var kind: Kind
    /// The arguments of the property's `@Attribute(...)` or `@Relationship(...)`, if it has one.
    let arguments: LabeledExprListSyntax?
    /// The property's own `willSet`, which the generated setter calls before it stores a value.
    var willSet: AccessorDeclSyntax? = nil
    /// The property's own `didSet`, which the generated setter calls after it stores a value.
    var didSet: AccessorDeclSyntax? = nil

    /// The name of the storage the macros declare beside the property.
    var storageName: String { "_" + name }

    /// Whether the property starts as `nil` when an initializer does not set it, as a stored optional does.
    var isOptional: Bool { TypeNames.optionalWrapped(type) != nil }

    /// Whether the property is a relationship marked `@Relationship(.unique)`: no two models relate to the
    /// same model through it, which the model's constraints say.
    var isUniqueRelationship: Bool {
        kind == .relationship
            && (arguments ?? []).contains { $0.label == nil && TypeNames.isUniqueOption($0.expression) }
    }

    /// Whether the property is an attribute stored through a value transformer (`.transformable(by:)`).
    var isTransformed: Bool {
        kind == .attribute
            && (arguments ?? []).contains {
                $0.label == nil && $0.expression.trimmedDescription.hasPrefix(".transformable(")
            }
    }

    /// Whether the storage is an optional of the property's type: a transformed property without an
    /// initial value, of a type no placeholder can be made for in general (the framework's `init()`
    /// leaves it `nil` until a fetch loads its value).
    var hasOptionalStorage: Bool { isTransformed && initialValue == nil && !isOptional }

    /// Whether the property may be a relationship, whose value an initializer sets before the model
    /// can link it to its inverse.
    var mayBeRelationship: Bool { kind == .relationship || kind == .inferred }
}

/// The attributes of ModelStoreMacros that mark a property: `@Attribute`, `@Relationship`, `@Transient`.
enum MarkerAttribute: String {
    case attribute = "Attribute"
    case relationship = "Relationship"
    case transient = "Transient"

    /// The first marker among a declaration's attributes.
    static func find(in attributes: AttributeListSyntax) -> (marker: MarkerAttribute, syntax: AttributeSyntax)? {
        for element in attributes {
            guard let attribute = element.as(AttributeSyntax.self),
                let marker = MarkerAttribute(rawValue: TypeNames.baseName(attribute.attributeName))
            else { continue }
            return (marker, attribute)
        }
        return nil
    }
}
