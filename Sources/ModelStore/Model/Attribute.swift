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

    /// Unavailable: `@Attribute` works only on properties of a ``PersistentModel`` class.
    @available(*, unavailable, message: "@Attribute can only be used on properties of a PersistentModel class")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    /// Reads and writes the property, with observation and change tracking.
    ///
    /// Inlinable so that the common write, of a model nobody has read or observed yet (one being
    /// built before its insert), compiles to a plain store into the property.
    @inlinable
    public static subscript<Model: PersistentModel>(
        _enclosingInstance model: Model,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) -> Value {
        get {
            read(model, wrapped: wrappedKeyPath, storage: storageKeyPath)
        }
        @inline(__always) set {
            if model.persistentBackingData.acceptsPlainWrites {
                model[keyPath: storageKeyPath].value = newValue
            } else {
                write(newValue, to: model, wrapped: wrappedKeyPath, storage: storageKeyPath)
            }
        }
    }

    /// The getter: reports the read to observation, and loads attributes a fetch left out.
    @usableFromInline
    static func read<Model: PersistentModel>(
        _ model: Model,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
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
    /// observers, and makes the model one of its context's changed models.
    @usableFromInline
    static func write<Model: PersistentModel>(
        _ newValue: Value, to model: Model,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) {
        let backing = model.persistentBackingData
        if backing.unfetchedSlots != nil { try? backing.loadUnfetchedValues(of: model) }
        if backing.tracksUndo {
            backing.context?.registerUndo(of: model, wrappedKeyPath, was: model[keyPath: storageKeyPath].value)
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

    init(
        options: Schema.Attribute.Options, originalName: String?, transformation: Schema.Attribute.Transformation? = nil
    ) {
        self.options = options
        self.originalName = originalName
        self.transformation = transformation
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
