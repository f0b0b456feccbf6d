import ModelStore

extension PersistentModel {
    /// The storage `@Model` declares for an unmarked optional or array of this model type
    /// (`var trip: Trip?`, `var items: [Item]`): a relationship.
    public typealias _ModelStoreStorage<Value: RelationshipValue> = ModelStore.Relationship<Value>
}

extension Decodable {
    /// The storage `@Model` declares for an unmarked optional or array of this `Codable` type
    /// (`var category: Category?`, `var stops: [Stop]`): an attribute, stored as SwiftData stores it.
    ///
    /// A type that is both a model and `Codable` finds this and ``PersistentModel/_ModelStoreStorage``:
    /// `@Model` declares the alias in each class it expands, which takes precedence over both; a
    /// hand-written `Codable` model is the one case that needs `@Relationship` on the property.
    public typealias _ModelStoreStorage<Value> = ModelStore.Attribute<Value>
}

/// The steps of an unmarked property's init accessor that differ between a relationship and a value,
/// as overloads the compiler picks by the property's type (the more constrained one when it is a
/// relationship): no cost, and no check at run time.
public enum _InferredStorage {
    /// `false`: a value has no related models to link.
    @inlinable @inline(__always)
    public static func hasRelatedModels<Value>(_ value: Value) -> Bool { false }

    /// Whether a relationship's value holds models, which the model links to their inverses when first used.
    @inlinable @inline(__always)
    public static func hasRelatedModels<Value: RelationshipValue>(_ value: Value) -> Bool {
        !value.relatedModels.isEmpty
    }

    /// The value itself: a value is never linked.
    @inlinable @inline(__always)
    public static func unlinked<Value>(_ value: Value) -> Value { value }

    /// The empty relationship, which the relationship's setter then sets to the models, linking them.
    @inlinable @inline(__always)
    public static func unlinked<Value: RelationshipValue>(_ value: Value) -> Value { Value(relatedModels: []) }
}

/// The list of relationships set by initializers in a `@Model` subclass of a hand-written model
/// class: nothing can link those to their inverses, so adding one stops the program.
///
/// The relationships a `@Model` class's initializers set before the model exists are linked to
/// their inverses when the model is first used, from the root's `persistentBackingData`; a
/// hand-written root has no such step. Setting the relationship after `super.init()` goes through
/// its setter, which links it at once. The list is always empty.
public struct _UnlinkedRelationships<Model>: Sequence, ExpressibleByArrayLiteral {
    /// An empty list.
    @inlinable
    public init() {}

    /// An empty list: `[]`, which a subclass's expansion assigns once it has linked its list.
    @inlinable
    public init(arrayLiteral elements: ((Model) -> Void)...) {
        precondition(elements.isEmpty, "a list of unlinked relationships is always empty")
    }

    /// Nothing: the list is always empty.
    @inlinable
    public func makeIterator() -> EmptyCollection<(Model) -> Void>.Iterator { EmptyCollection().makeIterator() }

    /// Stops the program: a relationship of `Model` was set before `super.init()`.
    public mutating func append(_ link: (Model) -> Void) {
        preconditionFailure(
            "a relationship of '\(Model.self)' was set before 'super.init()', in a '@Model' subclass of a "
                + "hand-written model class, which cannot link it to its inverse: set it after 'super.init()'")
    }
}
