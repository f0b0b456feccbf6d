import Foundation
import ModelStore

/// The value a `@Model` property without an initial value starts with in the `init()` the framework
/// makes models with, before a fetch loads the stored value over it. Made once per property.
///
/// In order: the first case of a `CaseIterable` type or of a raw-value enum; the value ModelStore reads from the zero of the
/// type's stored form (`""`, `0`, an empty array, `nil`, the raw value `0` or `""`); a `Decodable`
/// value decoded from zeros, empty strings and empty containers (and first cases for the enums in
/// it). A type none of these make stops the program when its model type is first used, naming the
/// property and the fix: give it an initial value.
public final class _ModelPlaceholder<Value>: @unchecked Sendable {
    // Safety: immutable after init. A value of a reference type is not kept (it would be shared
    // by every model); `value` makes a new one each time instead.
    private let stored: Value?
    private let make: @Sendable () -> Value

    /// The placeholder for `property` of `model`.
    public init(model: String, property: String) {
        let make: @Sendable () -> Value = {
            guard let value = Self.make() else {
                fatalError(
                    "ModelStoreMacros: '\(model).\(property)' has no initial value, and no placeholder "
                        + "'\(Value.self)' can be made for the models the framework creates before it loads "
                        + "their stored values: give '\(property)' an initial value in its declaration "
                        + "('var \(property): \(Value.self) = …')")
            }
            return value
        }
        self.make = make
        stored = Value.self is AnyObject.Type ? nil : make()
    }

    /// The placeholder value.
    @inlinable
    public var value: Value { storedValue ?? makeValue() }

    @usableFromInline var storedValue: Value? { stored }
    @usableFromInline func makeValue() -> Value { make() }

    private static func make() -> Value? {
        if let first = FirstCase.of(Value.self) { return first }
        if let codec = ValueCodecs.codec(for: Value.self),
            let value = try? codec.decode(codec.attributeType.zeroValue)
        {
            return value
        }
        if let decodable = Value.self as? any Decodable.Type {
            return try? decodable.init(from: ZeroDecoder()) as? Value
        }
        return nil
    }
}
