import Foundation
import Observation

/// Marks a property as a persisted attribute: `@Attribute(.unique) var email: String = ""`.
///
/// The property's type must be storable (see ``ValueCodecs/codec(for:)``); an unsupported type
/// is reported by name when the container is created. The wrapper only works inside a
/// ``PersistentModel`` class.
@propertyWrapper
public struct Attribute<Value> {
    @usableFromInline var value: Value
    /// The options and original name the declaration gave, which every instance of the model
    /// repeats: `nil` for a plain `@Attribute` (no allocation), else a shared box (see
    /// ``AttributeDeclaration``), so each model pays one word per attribute for them.
    @usableFromInline let declaration: AttributeDeclaration?

    /// The options the declaration gave.
    var options: Schema.Attribute.Options { declaration?.options ?? [] }
    /// The name the property had in an earlier version of the schema, if the declaration gave one.
    var originalName: String? { declaration?.originalName }
    /// The value transformer that stores the property's values, if the declaration gave one.
    var transformation: Schema.Attribute.Transformation? { declaration?.transformation }

    /// A persisted attribute with no options.
    @inlinable
    public init(wrappedValue: Value, originalName: String? = nil) {
        value = wrappedValue
        declaration = originalName == nil ? nil : AttributeDeclaration.make([], originalName: originalName)
    }

    /// A persisted attribute with options, such as `.unique` or `.externalStorage`.
    @inlinable
    public init(wrappedValue: Value, _ options: Schema.Attribute.Options, originalName: String? = nil) {
        value = wrappedValue
        declaration = AttributeDeclaration.make(options, originalName: originalName)
    }

    /// A persisted attribute with two options.
    @inlinable
    public init(
        wrappedValue: Value, _ first: Schema.Attribute.Options, _ second: Schema.Attribute.Options,
        originalName: String? = nil
    ) {
        self.init(wrappedValue: wrappedValue, first.union(second), originalName: originalName)
    }

    /// An optional attribute that starts as `nil`.
    @inlinable
    public init(_ options: Schema.Attribute.Options = [], originalName: String? = nil)
    where Value: ExpressibleByNilLiteral {
        self.init(wrappedValue: nil, options, originalName: originalName)
    }

    /// An attribute whose values a value transformer stores as `Data`, as SwiftData spells it:
    /// `@Attribute(.transformable(by: ColorTransformer.self)) var tint: Color = .black`.
    public init(
        wrappedValue: Value, _ transformation: Schema.Attribute.Transformation,
        _ options: Schema.Attribute.Options = [], originalName: String? = nil
    ) {
        value = wrappedValue
        declaration = AttributeDeclaration(options: options, originalName: originalName, transformation: transformation)
    }

    /// An optional attribute that starts as `nil`, whose values a value transformer stores as `Data`.
    public init(
        _ transformation: Schema.Attribute.Transformation, _ options: Schema.Attribute.Options = [],
        originalName: String? = nil
    ) where Value: ExpressibleByNilLiteral {
        self.init(wrappedValue: nil, transformation, options, originalName: originalName)
    }

    /// The storage `@Model` (ModelStoreMacros) declares for a property of type `Wrapped` that a value
    /// transformer stores and that has no initial value: `nil` stands only for a model the framework
    /// made before loading its stored values, as it can make no `Wrapped` of its own. The schema
    /// declares the attribute non-optional; `keyPath` is the property's own (`\Swatch.hue`), which
    /// the framework then never reads on such a model. Hand-written models give every attribute an
    /// initial value and never need it.
    public init<Wrapped>(
        _valueOrNone value: Wrapped?, _ transformation: Schema.Attribute.Transformation,
        _ options: Schema.Attribute.Options = [], originalName: String? = nil,
        keyPath: (any AnyKeyPath & Sendable)? = nil
    ) where Value == Wrapped? {
        self.value = value
        declaration = AttributeDeclaration(
            options: options, originalName: originalName, transformation: transformation,
            requiredValue: RequiredValue(keyPath: keyPath))
    }

    /// Unavailable: `@Attribute` works only on properties of a ``PersistentModel`` class.
    @available(*, unavailable, message: "@Attribute can only be used on properties of a PersistentModel class")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    /// Reads and writes the property, with observation and change tracking.
    ///
    /// Inlinable so that the common write, of a model nobody has read or observed yet (one being
    /// built before its insert), compiles to a plain store into the property, and the common read,
    /// of a model whose values are all loaded, to the observation calls and a plain load: the
    /// model's own code then reads its storage directly instead of through a key path at run time.
    @inlinable
    public static subscript<Model: PersistentModel>(
        _enclosingInstance model: Model,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) -> Value {
        get {
            let backing = model.persistentBackingData
            guard backing.readsPlainly else { return read(model, wrapped: wrappedKeyPath, storage: storageKeyPath) }
            let registrar = backing.registrar
            registrar.access(model, keyPath: wrappedKeyPath)
            registrar.access(backing, keyPath: \.storedValues)
            return model[keyPath: storageKeyPath].value
        }
        @inline(__always) set {
            if model.persistentBackingData.acceptsPlainWrites {
                model[keyPath: storageKeyPath].value = newValue
            } else {
                write(newValue, to: model, wrapped: wrappedKeyPath, storage: storageKeyPath) { $0 }
            }
        }
    }

    /// The getter: reports the read to observation, and loads attributes a fetch left out. `Shown` is
    /// the property's type: `Value`, or what an optional storage holds (``init(_valueOrNone:_:_:originalName:keyPath:)``).
    @usableFromInline
    static func read<Model: PersistentModel, Shown>(
        _ model: Model,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Shown>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) -> Value {
        let backing = model.persistentBackingData
        let registrar = backing.registrar
        registrar.access(model, keyPath: wrappedKeyPath)
        registrar.access(backing, keyPath: \.storedValues)
        if let probe = backing.probe { probe.record(storage: storageKeyPath, wrapped: wrappedKeyPath) }
        // A model fetched with propertiesToFetch loads the other attributes on first access.
        if backing.unfetchedSlots != nil { backing.loadUnfetchedValues(of: model, reading: wrappedKeyPath) }
        return model[keyPath: storageKeyPath].value
    }

    /// The setter's full path: loads attributes a fetch left out, records the undo, tells
    /// observers, and makes the model one of its context's changed models. `shown` is the value the
    /// property shows for a stored one (`nil`: none to put back).
    @usableFromInline
    static func write<Model: PersistentModel, Shown>(
        _ newValue: Value, to model: Model,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Shown>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>,
        shown: (Value) -> Shown?
    ) {
        let backing = model.persistentBackingData
        if backing.unfetchedSlots != nil { try? backing.loadUnfetchedValues(of: model) }
        if backing.modelHoldsSavedValues { backing.keepSavedValuesBeforeWrite(of: model) }
        if backing.tracksUndo, let old = shown(model[keyPath: storageKeyPath].value) {
            backing.context?.registerUndo(of: model, wrappedKeyPath, was: old)
        }
        if let registrar = backing.existingRegistrar {
            registrar.withMutation(of: model, keyPath: wrappedKeyPath) {
                model[keyPath: storageKeyPath].value = newValue
            }
        } else {
            model[keyPath: storageKeyPath].value = newValue
        }
        backing.didMutate(model)
    }
}

extension Attribute {
    /// Reads and writes a property whose storage ``init(_valueOrNone:_:_:originalName:keyPath:)`` made:
    /// the property is `Wrapped`, its storage `Wrapped?`.
    public static subscript<Model: PersistentModel, Wrapped>(
        _enclosingInstance model: Model,
        required wrappedKeyPath: ReferenceWritableKeyPath<Model, Wrapped>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) -> Wrapped where Value == Wrapped? {
        get {
            guard let value = read(model, wrapped: wrappedKeyPath, storage: storageKeyPath) else {
                noValue(Model.self, Wrapped.self, resolvingKeyPath: model.persistentBackingData.probe != nil)
            }
            return value
        }
        set {
            if model.persistentBackingData.acceptsPlainWrites {
                model[keyPath: storageKeyPath].value = newValue
            } else {
                write(newValue, to: model, wrapped: wrappedKeyPath, storage: storageKeyPath) { $0 }
            }
        }
    }

    /// Stops the program: a model the framework made before loading its values was read.
    private static func noValue(_ model: Any.Type, _ wrapped: Any.Type, resolvingKeyPath: Bool) -> Never {
        let property =
            "a property of type '\(wrapped)' of '\(model)', which a value transformer stores and which has no "
            + "initial value, so that no '\(wrapped)' can be made for the framework's own models"
        guard resolvingKeyPath else {
            fatalError(
                "a model of '\(model)' that the framework made before loading its values was read: it has no value "
                    + "for \(property); give the property an initial value in its declaration")
        }
        fatalError(
            "a key path on '\(model)' reads through \(property) (to a member of it, or in a computed property); "
                + "ModelStore resolves key paths on such a model: name the property itself in sorts, predicates "
                + "and constraints, or give it an initial value in its declaration")
    }
}

/// What an `@Attribute` declaration says besides its initial value, shared by every instance.
///
/// A declaration with options alone gets one of a fixed set of boxes, one per combination of
/// options, made once; only a declaration with an original name (a renamed property, kept for a
/// migration) or a value transformer makes a box per instance.
@usableFromInline
final class AttributeDeclaration: Sendable {
    let options: Schema.Attribute.Options
    let originalName: String?
    let transformation: Schema.Attribute.Transformation?
    /// Set when the storage is an optional whose `nil` only a model made before loading its values holds
    /// (see ``Attribute/init(_valueOrNone:_:_:originalName:keyPath:)``).
    let requiredValue: RequiredValue?

    init(
        options: Schema.Attribute.Options, originalName: String?,
        transformation: Schema.Attribute.Transformation? = nil,
        requiredValue: RequiredValue? = nil
    ) {
        self.options = options
        self.originalName = originalName
        self.transformation = transformation
        self.requiredValue = requiredValue
    }

    /// A box for every combination of options without an original name, by the options' raw value.
    private static let shared: [AttributeDeclaration] = (0...Int(UInt8.max)).map {
        AttributeDeclaration(options: Schema.Attribute.Options(rawValue: UInt8($0)), originalName: nil)
    }

    /// The declaration's box: `nil` when it says nothing, a shared one for options alone.
    @usableFromInline
    static func make(_ options: Schema.Attribute.Options, originalName: String?) -> AttributeDeclaration? {
        guard let originalName else { return options.isEmpty ? nil : shared[Int(options.rawValue)] }
        return AttributeDeclaration(options: options, originalName: originalName)
    }
}

/// What the framework knows of a non-optional property kept in optional storage: the property's own key
/// path, which resolves to it without reading a model that has no value for it.
struct RequiredValue: Sendable {
    let keyPath: (any AnyKeyPath & Sendable)?
}

/// Marks a property as observed but not persisted: `@Transient var isExpanded = false`.
///
/// A plain stored property is not persisted either; `@Transient` adds observation.
@propertyWrapper
public struct Transient<Value> {
    @usableFromInline var value: Value

    /// A transient property with its initial value.
    @inlinable
    public init(wrappedValue: Value) { value = wrappedValue }

    /// Unavailable: `@Transient` works only on properties of a ``PersistentModel`` class.
    @available(*, unavailable, message: "@Transient can only be used on properties of a PersistentModel class")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    /// Reads and writes the property, with observation.
    public static subscript<Model: PersistentModel>(
        _enclosingInstance model: Model,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) -> Value {
        get {
            model.persistentBackingData.registrar.access(model, keyPath: wrappedKeyPath)
            return model[keyPath: storageKeyPath].value
        }
        set {
            if let registrar = model.persistentBackingData.existingRegistrar {
                registrar.withMutation(of: model, keyPath: wrappedKeyPath) {
                    model[keyPath: storageKeyPath].value = newValue
                }
            } else {
                model[keyPath: storageKeyPath].value = newValue
            }
        }
    }
}
