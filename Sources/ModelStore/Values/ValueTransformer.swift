import Foundation

#if !canImport(ObjectiveC)
    /// The name a ``ValueTransformer`` is registered under, as Foundation spells it on Apple platforms.
    public struct NSValueTransformerName: RawRepresentable, Hashable, Sendable {
        /// The name.
        public let rawValue: String

        /// A name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A name.
        public init(_ rawValue: String) { self.rawValue = rawValue }
    }

    /// Converts a value into another representation and back: Foundation's `ValueTransformer`, which
    /// Foundation has on Apple platforms only, so that `@Attribute(.transformable(by:))` code written
    /// for SwiftData compiles here unchanged.
    ///
    /// Subclass it, override ``transformedValue(_:)`` to turn a value into `Data` and
    /// ``reverseTransformedValue(_:)`` to turn the `Data` back, and name the subclass in
    /// `Schema.Attribute.Transformation.transformable(by:)`, or register an
    /// instance with ``setValueTransformer(_:forName:)`` and name it by its name.
    open class ValueTransformer {
        /// A transformer.
        public required init() {}

        /// The class of the values ``transformedValue(_:)`` returns (`NSData` for a store's transformers).
        open class func transformedValueClass() -> AnyClass { NSData.self }

        /// Whether ``reverseTransformedValue(_:)`` undoes ``transformedValue(_:)``; a store needs it to.
        open class func allowsReverseTransformation() -> Bool { true }

        /// The value in the other representation; the base class returns it unchanged.
        open func transformedValue(_ value: Any?) -> Any? { value }

        /// The value back from the other representation; the base class returns it unchanged.
        open func reverseTransformedValue(_ value: Any?) -> Any? { value }

        /// A registered transformer. Stores call it from any thread, as they do Foundation's registered ones.
        private struct Registered: @unchecked Sendable {
            let transformer: ValueTransformer
        }

        private static let registry = LockedValue<[NSValueTransformerName: Registered]>([:])

        /// Registers a transformer under a name (or removes the name's transformer, given `nil`).
        public class func setValueTransformer(_ transformer: ValueTransformer?, forName name: NSValueTransformerName) {
            registry.withLock { $0[name] = transformer.map(Registered.init) }
        }

        /// The names transformers are registered under.
        public class func valueTransformerNames() -> [NSValueTransformerName] {
            registry.withLock { Array($0.keys) }
        }

        /// The transformer registered under a name.
        static func registered(_ name: NSValueTransformerName) -> ValueTransformer? {
            registry.withLock { $0[name]?.transformer }
        }
    }
#endif

extension Schema.Attribute {
    /// A value transformer that stores an attribute's values as `Data`: SwiftData's
    /// `.transformable(by:)`, for a type ModelStore cannot store itself (a class that is not
    /// `Codable`, say):
    ///
    /// ```swift
    /// @Attribute(.transformable(by: ColorTransformer.self)) var tint: Color = .black
    /// ```
    ///
    /// The attribute's stored type is `Data` (optional `Data` for an optional property), so a
    /// predicate or sort on it runs on the models.
    public struct Transformation: Sendable, Hashable, CustomStringConvertible {
        enum Source: Sendable, Hashable {
            case type(ObjectIdentifier, name: String)
            case registered(String)
        }

        let source: Source
        private let make: @Sendable () -> ValueTransformer?

        /// Values go through a new instance of this transformer class.
        public static func transformable(by transformer: ValueTransformer.Type) -> Transformation {
            Transformation(
                source: .type(ObjectIdentifier(transformer), name: String(describing: transformer)),
                make: { Self.instance(of: transformer) })
        }

        /// Values go through the transformer registered under this name
        /// (`ValueTransformer.setValueTransformer(_:forName:)`) when the schema is built.
        public static func transformable(by name: String) -> Transformation {
            Transformation(source: .registered(name), make: { Self.registered(name) })
        }

        /// The transformer's class name, or `registered 'name'`.
        public var description: String {
            switch source {
            case .type(_, let name): name
            case .registered(let name): "registered '\(name)'"
            }
        }

        /// Equal when they name the same transformer class or registered name.
        public static func == (lhs: Transformation, rhs: Transformation) -> Bool { lhs.source == rhs.source }

        /// Hashes what `==` compares.
        public func hash(into hasher: inout Hasher) { hasher.combine(source) }

        /// The codec that stores values of `Value` through the transformer, or `nil` when no
        /// transformer is registered under the name given.
        func codec<Value>(for _: Value.Type) -> ValueCodec<Value>? {
            guard let transformer = make() else { return nil }
            let name = description
            let typeName = String(describing: Value.self)
            let nilValue = (Value.self as? any NilRepresentable.Type)?.nilValue as? Value
            return ValueCodec<Value>(
                nilValue == nil ? .data : .optional(.data),
                encode: { value in
                    if nilValue != nil, (value as? any NilRepresentable)?.isNil == true { return .null }
                    guard let data = transformer.transformedValue(value) as? Data else {
                        throw DataStoreError.invalidValue(
                            "the value transformer \(name) did not turn a '\(typeName)' into Data; "
                                + "its transformedValue(_:) must return Data")
                    }
                    return .data(data)
                },
                decode: { stored in
                    switch stored {
                    case .null:
                        if let nilValue { return nilValue }
                    case .data(let data):
                        if let value = transformer.reverseTransformedValue(data) as? Value { return value }
                        throw DataStoreError.invalidValue(
                            "the value transformer \(name) did not turn stored Data back into a '\(typeName)'; "
                                + "its reverseTransformedValue(_:) must undo transformedValue(_:)")
                    default:
                        break
                    }
                    throw DataStoreError.invalidValue(
                        "a '\(typeName)' stored through the value transformer \(name) is a \(stored.kindName), "
                            + "not Data")
                })
        }

        private static func instance(of transformer: ValueTransformer.Type) -> ValueTransformer? {
            #if canImport(ObjectiveC)
                return (transformer as NSObject.Type).init() as? ValueTransformer
            #else
                return transformer.init()
            #endif
        }

        private static func registered(_ name: String) -> ValueTransformer? {
            #if canImport(ObjectiveC)
                return ValueTransformer(forName: NSValueTransformerName(name))
            #else
                return ValueTransformer.registered(NSValueTransformerName(name))
            #endif
        }
    }
}

/// `Optional`, whatever it wraps: lets a codec tell `nil` apart without knowing the wrapped type.
protocol NilRepresentable {
    /// `nil` of this type.
    static var nilValue: Self { get }
    /// Whether the value is `nil`.
    var isNil: Bool { get }
}

extension Optional: NilRepresentable {
    static var nilValue: Optional { nil }
    var isNil: Bool { self == nil }
}
