import ModelStore

/// Compile-time checks that `@Model`'s expansion calls, so that a property it stores the wrong
/// way is reported at the declaration, not only when the container is created.
///
/// Each check is an empty function with an overload that the compiler picks for the wrong kind of
/// type: calling it costs nothing. A relationship that is not one is an error (the overload that
/// accepts it cannot apply). A model stored as an attribute is a warning: the compiler prefers an
/// available overload to an unavailable one, so the rejecting overload is deprecated instead, and
/// creating the container then fails naming the property.
public enum _ModelStorageCheck {
    /// Accepts the type of a property stored as an attribute.
    @inlinable @inline(__always)
    public static func attribute<Value>(_ type: Value.Type) {}

    /// Warns of a model type as an attribute.
    @available(*, deprecated, message: "a model is stored in an optional ('Trip?') or an array ('[Trip]')")
    public static func attribute<Value: PersistentModel>(_ type: Value.Type) {}

    /// Accepts the type of a relationship: an optional model or an array of models.
    @inlinable @inline(__always)
    public static func relationship<Value: RelationshipValue>(_ type: Value.Type) {}

    /// Rejects a type that is not an optional model or an array of models as a relationship.
    @available(*, unavailable, message: "not a model: mark the property '@Attribute' to store its value")
    public static func relationship<Value>(_ type: Value.Type) {}
}
