import Foundation
import Observation

/// How the framework reads and writes one model type: the storage offsets of its wrapped
/// properties, found once per type, and the accessors that convert them to store values.
///
/// The fields are found once per type through ``StoredFieldReflection``, the framework's only use
/// of reflection (its assumptions are written down there). Fetch, save and snapshot paths read and
/// write wrapper storage through fixed offsets, as compiled code does.
final class ModelLayout: @unchecked Sendable {
    // Safety: every stored property is immutable after init, except `state`, which a Mutex guards.
    let modelType: any PersistentModel.Type
    /// The entity that stores the type: its own, or its hierarchy root's.
    let entityName: String
    /// The type's own name, which a hierarchy's entity records for each model.
    let className: String
    /// The class that declares the conformance (the type itself unless it subclasses a model class).
    let rootType: any PersistentModel.Type
    /// Where a class of a hierarchy keeps its values in the hierarchy's entity; `nil` when the
    /// entity's slots are this type's own fields in order.
    let storage: StorageMap?
    /// Persisted properties in declaration order; a property's index here is its slot.
    let fields: [FieldAccessor]
    let attributes: [AttributeAccessor]
    let relationships: [RelationshipAccessor]
    /// `.ephemeral` attributes: tracked, never stored.
    let ephemeralAttributes: [AttributeAccessor]
    /// Wrapped properties whose type cannot be stored: (property name, type name).
    /// Attributes that cannot be stored: each one's name, what is wrong, and how to fix it.
    let unsupportedProperties: [(name: String, problem: String, remedy: String)]
    let fieldsByName: [String: FieldAccessor]
    /// Each field's storage offset and, for the common scalar attributes, their type: plain data,
    /// so that the loops over every field of a model (``values(of:)``, ``apply(_:to:)``) read and
    /// write those in line, with no call through an accessor and no retain of one.
    private let plan: [(offset: Int, scalar: InlineScalar?)]
    /// Whether a saved model of this type can keep no copy of its saved values while it is
    /// unchanged (``BackingData/modelHoldsSavedValues``): its fields are attributes of value types
    /// that encode the same every time (no relationship, whose references can change under a model
    /// without a setter; no value transformer or composite `Codable` value, which may hold objects;
    /// no encrypted attribute, which seals with a new nonce each time), so the values read from the
    /// model are the values it was saved with until a setter runs.
    let savedValuesAreModelValues: Bool

    // Safety: the probe model is read and written only inside the layout's lock (`state`), and never
    // leaves it; the dictionaries are values.
    private struct State: @unchecked Sendable {
        var probe: any PersistentModel
        var namesByKeyPath: [AnyKeyPath: String] = [:]
        var fieldsByStorageKeyPath: [AnyKeyPath: RelationshipAccessor] = [:]
    }
    private let state: LockedValue<State>

    /// How one class of a hierarchy maps its fields onto its hierarchy's entity.
    struct StorageMap: Sendable {
        /// The entity slot of each of the class's fields, by field index.
        let slots: [Int]
        /// The values of a model of this class before its own are written: `nil` or empty in the
        /// slots of other classes' properties, and the class's name in the type slot.
        let filler: [StoreValue]
        /// The initial value of each non-optional field the entity stores as optional (a
        /// subclass's), by field index: what a model stored before the field existed reads.
        var nullFallbacks: [(index: Int, value: StoreValue)] = []
    }

    private init<M: PersistentModel>(_ type: M.Type) {
        modelType = type
        entityName = Schema.entityName(for: type)
        className = String(describing: type)
        rootType = M.RelatedModel.self
        storage = nil
        let probe = M()
        let base = Unmanaged.passUnretained(probe).toOpaque()
        var fields: [FieldAccessor] = []
        var ephemeral: [AttributeAccessor] = []
        var unsupported: [(String, String, String)] = []
        var ownKeyPaths: [AnyKeyPath: String] = [:]
        for field in StoredFieldReflection.fields(of: type) {
            let (label, offset, fieldType) = (field.name, field.offset, field.type)
            let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
            if let attribute = fieldType as? any AttributeField.Type {
                if let accessor = attribute.makeAccessor(name: name, offset: offset, probe: base) {
                    accessor.keyPath = attribute.makeKeyPath(M.self, offset: offset)
                    // The probe has no value to read through this property's own key path.
                    if let own = attribute.requiredValue(offset: offset, probe: base)?.keyPath {
                        ownKeyPaths[own] = name
                    }
                    if accessor.options.contains(.ephemeral) {
                        ephemeral.append(accessor)
                    } else {
                        fields.append(accessor)
                    }
                } else {
                    let (problem, remedy) = attribute.whyUnsupported(offset: offset, probe: base)
                    unsupported.append((name, problem, remedy))
                }
            } else if let relationship = fieldType as? any RelationshipField.Type {
                let accessor = relationship.makeAccessor(name: name, offset: offset, probe: base, model: M.self)
                accessor.keyPath = relationship.makeKeyPath(M.self, offset: offset)
                fields.append(accessor)
            }
        }
        for (slot, field) in fields.enumerated() { field.slot = slot }
        self.fields = fields
        self.attributes = fields.compactMap { $0 as? AttributeAccessor }
        self.relationships = fields.compactMap { $0 as? RelationshipAccessor }
        self.ephemeralAttributes = ephemeral
        self.unsupportedProperties = unsupported
        self.fieldsByName = Dictionary(fields.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.plan = fields.map { ($0.offset, ($0 as? AttributeAccessor)?.inlineScalar) }
        self.savedValuesAreModelValues = fields.allSatisfy { field in
            guard let attribute = field as? AttributeAccessor else { return false }
            return attribute.transformation == nil && !attribute.options.contains(.encrypted)
                && attribute.attributeType.encodesByValue
        }
        var names = ownKeyPaths
        for field in fields + ephemeral { if let keyPath = field.keyPath { names[keyPath] = field.name } }
        state = LockedValue(State(probe: probe, namesByKeyPath: names))
    }

    /// A copy of `plain` that reads and writes its values in a hierarchy's entity's slots.
    init(_ plain: ModelLayout, storage: StorageMap) {
        modelType = plain.modelType
        entityName = plain.entityName
        className = plain.className
        rootType = plain.rootType
        self.storage = storage
        fields = plain.fields
        attributes = plain.attributes
        relationships = plain.relationships
        ephemeralAttributes = plain.ephemeralAttributes
        unsupportedProperties = plain.unsupportedProperties
        fieldsByName = plain.fieldsByName
        plan = plain.plan
        savedValuesAreModelValues = plain.savedValuesAreModelValues
        state = plain.state
    }

    // MARK: Cache

    private static let layouts = LockedValue<[ObjectIdentifier: ModelLayout]>([:])
    @TaskLocal private static var typesBeingBuilt: Set<ObjectIdentifier> = []

    /// The layout of `type`, built on first use; `nil` only while `type`'s own probe is being created.
    static func of<M: PersistentModel>(_ type: M.Type) -> ModelLayout? {
        let key = ObjectIdentifier(type)
        if let layout = layouts.withLock({ $0[key] }) { return layout }
        if typesBeingBuilt.contains(key) { return nil }
        let layout = $typesBeingBuilt.withValue(typesBeingBuilt.union([key])) { ModelLayout(type) }
        return layouts.withLock { cache in
            if let existing = cache[key] { return existing }
            cache[key] = layout
            return layout
        }
    }

    /// The layout of a model type given as an existential metatype.
    static func of(existential type: any PersistentModel.Type) -> ModelLayout? {
        func open<M: PersistentModel>(_ type: M.Type) -> ModelLayout? { ModelLayout.of(type) }
        return open(type)
    }

    /// The accessor of the relationship stored at `storage` in `Model`.
    static func relationshipField<Model: PersistentModel>(
        _ type: Model.Type, storage: AnyKeyPath
    ) -> RelationshipAccessor? {
        guard let layout = of(type) else { return nil }
        return layout.relationshipField(storage: storage)
    }

    /// Records the public key path of a relationship, so inverse updates can notify its observers.
    static func noteWrappedKeyPath<Model: PersistentModel, Value>(
        _ wrapped: ReferenceWritableKeyPath<Model, Value>, storage: AnyKeyPath
    ) {
        guard let field = relationshipField(Model.self, storage: storage) else { return }
        field.noteWrappedKeyPath(wrapped)
    }

    private func relationshipField(storage: AnyKeyPath) -> RelationshipAccessor? {
        state.withLock { state in
            if let field = state.fieldsByStorageKeyPath[storage] { return field }
            guard let name = Self.propertyName(ofStorageKeyPath: storage),
                let field = fieldsByName[name] as? RelationshipAccessor
            else { return nil }
            state.fieldsByStorageKeyPath[storage] = field
            return field
        }
    }

    // MARK: Key paths

    /// The stored property a user key path (such as `\Trip.name`) reads, resolved once by applying
    /// it to a probe instance and cached. `nil` when the key path reads no wrapped property.
    func propertyName(for keyPath: AnyKeyPath) -> String? {
        state.withLock { state in
            if let name = state.namesByKeyPath[keyPath] { return name }
            let recorder = ProbeRecorder()
            let backing = state.probe.persistentBackingData
            backing.probe = recorder
            _ = state.probe[keyPath: keyPath]
            backing.probe = nil
            // A stored property is read exactly once, through its own wrapper; a computed property
            // that reads stored ones is not itself stored.
            guard recorder.accesses == 1, let wrapped = recorder.wrappedKeyPath,
                let storage = recorder.storageKeyPath, let name = Self.propertyName(ofStorageKeyPath: storage)
            else { return nil }
            if wrapped != keyPath {
                // A subclass's key path to an inherited property (`\BusinessTrip.name`) is another
                // value than the declaring class's (`\Trip.name`), which the wrapper reports.
                guard Self.isSubclassKeyPath(keyPath, of: wrapped),
                    Self.reads(keyPath, sameAs: wrapped, field: fieldsByName[name], probe: state.probe)
                else { return nil }
            }
            state.namesByKeyPath[keyPath] = name
            return name
        }
    }

    /// Whether `keyPath` is rooted at a subclass of the class `wrapped` is rooted at, with the same value type.
    private static func isSubclassKeyPath(_ keyPath: AnyKeyPath, of wrapped: AnyKeyPath) -> Bool {
        guard type(of: keyPath).valueType == type(of: wrapped).valueType,
            let subclass = type(of: keyPath).rootType as? AnyClass,
            let declaring = type(of: wrapped).rootType as? AnyClass
        else { return false }
        var current: AnyClass? = _getSuperclass(subclass)
        while let parent = current {
            if ObjectIdentifier(parent) == ObjectIdentifier(declaring) { return true }
            current = _getSuperclass(parent)
        }
        return false
    }

    /// Whether `keyPath` reads the field `wrapped` reads, value for value: after the probe's field is
    /// set to another value, both read the new one. (A computed property that reads the field, such
    /// as an uppercased copy, reads something else.) A field whose type has no other value to try is
    /// taken on trust, as the one property read.
    private static func reads(
        _ keyPath: AnyKeyPath, sameAs wrapped: AnyKeyPath, field: FieldAccessor?, probe: any PersistentModel
    ) -> Bool {
        guard let field = field as? AttributeAccessor else { return field != nil }
        guard let original = try? field.storeValue(of: probe),
            let other = otherValue(than: original, of: field.attributeType)
        else { return true }
        defer { try? field.load(original, into: probe) }
        guard (try? field.load(other, into: probe)) != nil else { return true }
        let (seen, expected) = (probe[keyPath: keyPath], probe[keyPath: wrapped])
        return String(describing: seen) == String(describing: expected)
    }

    /// A stored value of a scalar type other than `value`, or `nil` for other types.
    private static func otherValue(than value: StoreValue, of type: AttributeType) -> StoreValue? {
        let candidate: StoreValue
        switch type.unwrapped {
        case .string: candidate = .string("\u{2063}probe")
        case .integer(_, true): candidate = .int(97)
        case .integer(_, false): candidate = .uint(97)
        case .double, .float: candidate = .double(0.625)
        case .bool: candidate = .bool(value != .bool(true))
        case .date: candidate = .date(Date(timeIntervalSince1970: 1_234_567))
        case .uuid: candidate = .uuid(UUID())
        default: return nil
        }
        return candidate == value ? nil : candidate
    }

    /// `\Trip._name` names the property `name`. Only called once per key path.
    private static func propertyName(ofStorageKeyPath keyPath: AnyKeyPath) -> String? {
        let text = String(describing: keyPath)
        guard let dot = text.lastIndex(of: ".") else { return nil }
        let label = text[text.index(after: dot)...]
        return label.hasPrefix("_") ? String(label.dropFirst()) : String(label)
    }

    // MARK: Values

    /// The stored values of a model, in slot order.
    ///
    /// Throws ``DataStoreError/Code/invalidValue`` naming the entity and the property when a
    /// `Codable` value fails to encode itself: such a model cannot be saved as it is.
    func values(of model: AnyObject) throws -> [StoreValue] {
        let own = try ownValues(of: model)
        guard let storage else { return own }
        var values = storage.filler
        for index in own.indices { values[storage.slots[index]] = own[index] }
        return values
    }

    /// The stored values of a model's own fields, in field order.
    private func ownValues(of model: AnyObject) throws -> [StoreValue] {
        let base = Unmanaged.passUnretained(model).toOpaque().assumingMemoryBound(to: UInt8.self)
        var values: [StoreValue] = []
        values.reserveCapacity(plan.count)
        for index in plan.indices {
            if let scalar = plan[index].scalar {
                values.append(scalar.value(at: base + plan[index].offset))
                continue
            }
            let field = fields[index]
            do {
                values.append(try field.storeValue(of: model))
            } catch let error as DataStoreError where error.code == .invalidValue {
                // A value that cannot be stored; other errors (an encrypted attribute without a
                // key, say) already say what to fix.
                throw DataStoreError(
                    .invalidValue, "cannot store '\(entityName).\(field.name)': \(error.message)",
                    remedy: "Fix the value, or the type's encode(to:), before saving",
                    entityName: entityName, propertyNames: [field.name])
            }
        }
        return values
    }

    /// Whether `values`, in slot order, are bit for bit the stored values of the model's fields
    /// (``values(of:)``), compared without making an array of the model's own where the entity's
    /// slots are the type's fields.
    func holds(_ values: [StoreValue], in model: AnyObject) -> Bool {
        guard storage == nil else {
            guard let own = try? self.values(of: model), own.count == values.count else { return false }
            return zip(own, values).allSatisfy { $0.isIdentical(to: $1) }
        }
        guard values.count == plan.count else { return false }
        let base = Unmanaged.passUnretained(model).toOpaque().assumingMemoryBound(to: UInt8.self)
        for index in plan.indices {
            let value: StoreValue
            if let scalar = plan[index].scalar {
                value = scalar.value(at: base + plan[index].offset)
            } else {
                guard let stored = try? fields[index].storeValue(of: model) else { return false }
                value = stored
            }
            if !value.isIdentical(to: values[index]) { return false }
        }
        return true
    }

    /// Writes stored values into a model, without observation or change tracking (used to load models).
    func apply(_ values: [StoreValue], to model: AnyObject) throws {
        guard let storage else { return try applyOwn(values, to: model) }
        var own = storage.slots.map { $0 < values.count ? values[$0] : .null }
        for fallback in storage.nullFallbacks where own[fallback.index] == .null {
            own[fallback.index] = fallback.value
        }
        try applyOwn(own, to: model)
    }

    private func applyOwn(_ values: [StoreValue], to model: AnyObject) throws {
        let base = Unmanaged.passUnretained(model).toOpaque().assumingMemoryBound(to: UInt8.self)
        for index in 0..<min(plan.count, values.count) {
            if let scalar = plan[index].scalar, scalar.load(values[index], at: base + plan[index].offset) { continue }
            try fields[index].load(values[index], into: model)
        }
    }

    /// Replaces a registered model's values with ones read from the store (a merge, a refresh, a
    /// rollback) and tells the observations that read the model, since no setter ran.
    func reload(_ values: [StoreValue], into model: any PersistentModel) throws {
        defer { model.persistentBackingData.storedValuesDidChange() }
        try apply(values, to: model)
        model.persistentBackingData.unfetchedSlots = nil
    }
}

// MARK: - Field accessors

/// Reads and writes one wrapped property of one model type through its storage offset.
class FieldAccessor {
    let name: String
    let offset: Int
    let originalName: String?
    var slot = -1
    /// The key path ``Schema/Attribute/keyPath`` and ``Schema/Relationship/keyPath`` hand out; set once, at layout time.
    var keyPath: (any AnyKeyPath & Sendable)?

    init(name: String, offset: Int, originalName: String?) {
        self.name = name
        self.offset = offset
        self.originalName = originalName
    }

    @inline(__always)
    final func storage<T>(_ model: AnyObject, as: T.Type) -> UnsafeMutablePointer<T> {
        Unmanaged.passUnretained(model).toOpaque().advanced(by: offset).assumingMemoryBound(to: T.self)
    }

    /// The property's stored form; throws when a `Codable` value fails to encode itself.
    func storeValue(of model: AnyObject) throws -> StoreValue { fatalError("abstract") }
    /// Sets the property from its stored form, as a fetch does.
    func load(_ value: StoreValue, into model: AnyObject) throws { fatalError("abstract") }
}

/// A wrapped attribute's accessor.
class AttributeAccessor: FieldAccessor {
    /// The scalar type the attribute's values are, if it is one of those read and written in line.
    var inlineScalar: InlineScalar? { nil }

    let attributeType: AttributeType
    let options: Schema.Attribute.Options
    let defaultValue: StoreValue
    /// The value transformer the declaration names, if any.
    var transformation: Schema.Attribute.Transformation? { nil }

    init(
        name: String, offset: Int, originalName: String?, type: AttributeType, options: Schema.Attribute.Options,
        defaultValue: StoreValue
    ) {
        attributeType = type
        self.options = options
        self.defaultValue = defaultValue
        super.init(name: name, offset: offset, originalName: originalName)
    }
}

final class TypedAttributeAccessor<Value>: AttributeAccessor {
    let codec: ValueCodec<Value>
    /// The common scalar type `Value` is, if it is one: those are read and written in line,
    /// without the codec's closures or the generic value witnesses (a fetch and a save touch
    /// every attribute of every model).
    let scalar: InlineScalar?
    override var inlineScalar: InlineScalar? { scalar }
    let transformer: Schema.Attribute.Transformation?
    override var transformation: Schema.Attribute.Transformation? { transformer }

    /// `nil` when the property's initial value cannot be encoded: such a type cannot be stored.
    ///
    /// `defaultValue` is the stored initial value when the codec's own cannot stand for it (an
    /// encrypted attribute's, which is not sealed before the app gives a key).
    init?(
        name: String, offset: Int, codec: ValueCodec<Value>, probe: UnsafeMutableRawPointer,
        defaultValue given: StoreValue? = nil
    ) {
        self.codec = codec
        let wrapper = probe.advanced(by: offset).assumingMemoryBound(to: Attribute<Value>.self).pointee
        // A transformed or encrypted value goes through its codec, whatever its type.
        transformer = wrapper.transformation
        scalar =
            transformer == nil && !wrapper.options.contains(.encrypted) ? InlineScalar(Value.self) : nil
        guard let defaultValue = given ?? (try? codec.encode(wrapper.value)) else { return nil }
        super.init(
            name: name, offset: offset, originalName: wrapper.originalName, type: codec.attributeType,
            options: wrapper.options, defaultValue: defaultValue
        )
    }

    override func storeValue(of model: AnyObject) throws -> StoreValue {
        if let scalar { return scalar.value(at: storage(model, as: UInt8.self)) }
        return try codec.encode(storage(model, as: Attribute<Value>.self).pointee.value)
    }

    override func load(_ value: StoreValue, into model: AnyObject) throws {
        if let scalar, scalar.load(value, at: storage(model, as: UInt8.self)) { return }
        // Anything else (an integer read into a `Double`, say, or a mismatch to report) goes
        // through the codec.
        do {
            storage(model, as: Attribute<Value>.self).pointee.value = try codec.decode(value)
        } catch var error as DataStoreError {
            error.message = "property '\(name)': \(error.message)"
            throw error
        }
    }
}

/// The scalar attribute types read and written in line, by the layout's loops and by their
/// accessors: `String`, `Int`, `Int64`, `Double`, `Bool` and `Date`.
///
/// Each case reads the wrapper as the `Attribute` of the type it names, which is the property's
/// own type, so the same layout; the values are those of the types' codecs.
enum InlineScalar {
    case string, int, int64, double, bool, date

    /// The case for `Value`, or `nil` when it is not one of these types.
    init?<Value>(_ type: Value.Type) {
        if Value.self == String.self {
            self = .string
        } else if Value.self == Int.self {
            self = .int
        } else if Value.self == Int64.self {
            self = .int64
        } else if Value.self == Double.self {
            self = .double
        } else if Value.self == Bool.self {
            self = .bool
        } else if Value.self == Date.self {
            self = .date
        } else {
            return nil
        }
    }

    /// The stored form of the property whose wrapper is at `storage`.
    @inline(__always)
    func value(at storage: UnsafeMutablePointer<UInt8>) -> StoreValue {
        let raw = UnsafeMutableRawPointer(storage)
        return switch self {
        case .string: .string(raw.assumingMemoryBound(to: Attribute<String>.self).pointee.value)
        case .int: .int(Int64(raw.assumingMemoryBound(to: Attribute<Int>.self).pointee.value))
        case .int64: .int(raw.assumingMemoryBound(to: Attribute<Int64>.self).pointee.value)
        case .double: .double(raw.assumingMemoryBound(to: Attribute<Double>.self).pointee.value)
        case .bool: .bool(raw.assumingMemoryBound(to: Attribute<Bool>.self).pointee.value)
        case .date: .date(raw.assumingMemoryBound(to: Attribute<Date>.self).pointee.value)
        }
    }

    /// Sets the property whose wrapper is at `storage` when `value` is of the stored kind this
    /// type's codec produces; returns `false`, changing nothing, for any other value.
    @inline(__always)
    func load(_ value: StoreValue, at storage: UnsafeMutablePointer<UInt8>) -> Bool {
        let raw = UnsafeMutableRawPointer(storage)
        switch (self, value) {
        case (.string, .string(let x)): raw.assumingMemoryBound(to: Attribute<String>.self).pointee.value = x
        case (.int, .int(let x)) where Int(exactly: x) != nil:
            raw.assumingMemoryBound(to: Attribute<Int>.self).pointee.value = Int(x)
        case (.int64, .int(let x)): raw.assumingMemoryBound(to: Attribute<Int64>.self).pointee.value = x
        case (.double, .double(let x)): raw.assumingMemoryBound(to: Attribute<Double>.self).pointee.value = x
        case (.bool, .bool(let x)): raw.assumingMemoryBound(to: Attribute<Bool>.self).pointee.value = x
        case (.date, .date(let x)): raw.assumingMemoryBound(to: Attribute<Date>.self).pointee.value = x
        default: return false
        }
        return true
    }
}

protocol AttributeField {
    /// What the declaration says of a non-optional property kept in optional storage, if it is one.
    static func requiredValue(offset: Int, probe: UnsafeMutableRawPointer) -> RequiredValue?
    /// Why ``makeAccessor(name:offset:probe:)`` made no accessor: the problem and its fix.
    static func whyUnsupported(offset: Int, probe: UnsafeMutableRawPointer) -> (problem: String, remedy: String)
    static func makeAccessor(name: String, offset: Int, probe: UnsafeMutableRawPointer) -> AttributeAccessor?
    static func makeKeyPath<M: PersistentModel>(_ model: M.Type, offset: Int) -> any AnyKeyPath & Sendable
}

extension Attribute: AttributeField {
    static func requiredValue(offset: Int, probe: UnsafeMutableRawPointer) -> RequiredValue? {
        probe.advanced(by: offset).assumingMemoryBound(to: Attribute<Value>.self).pointee.declaration?.requiredValue
    }
    static func whyUnsupported(offset: Int, probe: UnsafeMutableRawPointer) -> (problem: String, remedy: String) {
        let wrapper = probe.advanced(by: offset).assumingMemoryBound(to: Attribute<Value>.self).pointee
        let typeName = String(describing: Value.self)
        if let transformation = wrapper.transformation {
            if case .registered(let name) = transformation.source {
                return (
                    "is stored through the value transformer registered as '\(name)', and none is",
                    "Register it with ValueTransformer.setValueTransformer(_:forName:) before the schema is built, "
                        + "or name its class: .transformable(by: \(name).self)"
                )
            }
            return (
                "is stored through the value transformer \(transformation), which cannot store its initial value",
                "Make transformedValue(_:) of \(transformation) turn a '\(typeName)' into Data"
            )
        }
        return (
            "has type '\(typeName)', which ModelStore cannot store",
            "Use a supported type (Bool, integers, Double, Float, Decimal, String, Date, Data, UUID, URL, optionals, "
                + "arrays and dictionaries of them, a RawRepresentable enum, or a Codable struct), store it through a "
                + "value transformer (.transformable(by:)), or mark the property @Transient"
        )
    }
    static func makeAccessor(name: String, offset: Int, probe: UnsafeMutableRawPointer) -> AttributeAccessor? {
        let wrapper = probe.advanced(by: offset).assumingMemoryBound(to: Attribute<Value>.self).pointee
        let codec =
            if let transformation = wrapper.transformation {
                transformation.codec(for: Value.self)
            } else {
                ValueCodecs.codec(for: Value.self)
            }
        guard let codec else { return nil }
        let isRequired = wrapper.declaration?.requiredValue != nil
        guard wrapper.options.contains(.encrypted) else {
            guard isRequired else {
                return TypedAttributeAccessor(name: name, offset: offset, codec: codec, probe: probe)
            }
            // No initial value: the empty Data stands for one, as for an encrypted attribute.
            return TypedAttributeAccessor(
                name: name, offset: offset, codec: requiringValue(codec), probe: probe, defaultValue: .data(Data()))
        }
        // Sealed when saved; the schema's initial value is the empty Data that stands for it.
        guard let initial = isRequired ? .data(Data()) : try? codec.encode(wrapper.value) else { return nil }
        let sealed = AttributeSealing.codec(
            wrapping: codec, attribute: name, originalName: wrapper.originalName, initialValue: wrapper.value)
        return TypedAttributeAccessor(
            name: name, offset: offset, codec: isRequired ? requiringValue(sealed) : sealed, probe: probe,
            defaultValue: initial == .null && sealed.attributeType != .data ? .null : .data(Data()))
    }

    /// `codec` for a non-optional property kept in optional storage: its stored type is not optional, and
    /// neither a missing value nor a stored one that reads back as none is accepted, except the empty
    /// Data that stands for the initial value (what a fetch of only some attributes puts in the others'
    /// slots), which reads back as none: the model then loads the value on first access.
    private static func requiringValue(_ codec: ValueCodec<Value>) -> ValueCodec<Value> {
        let none = (Value.self as? any NilRepresentable.Type)?.nilValue as? Value
        func isNone(_ value: Value) -> Bool { (value as? any NilRepresentable)?.isNil == true }
        return ValueCodec(
            codec.attributeType.unwrapped,
            encode: { value in
                guard !isNone(value) else {
                    throw DataStoreError.invalidValue(
                        "the model has no value to store, as the framework made it to load values into")
                }
                return try codec.encode(value)
            },
            decode: { stored in
                let standIn = stored == .data(Data())
                let value: Value
                do {
                    value = try codec.decode(stored)
                } catch {
                    if standIn, let none { return none }
                    throw error
                }
                guard isNone(value) else { return value }
                if standIn, let none { return none }
                throw DataStoreError.invalidValue(
                    "the store holds \(stored == .null ? "no value" : "a value that reads back as none"), and the "
                        + "property is not optional")
            })
    }
    static func makeKeyPath<M: PersistentModel>(_ model: M.Type, offset: Int) -> any AnyKeyPath & Sendable {
        \M.[storedAttribute: FieldOffset<Value>(offset: offset)]
    }
}

/// A wrapped relationship's accessor: loads faults, keeps inverses in step.
class RelationshipAccessor: FieldAccessor {
    let isToMany: Bool
    let deleteRule: Schema.Relationship.DeleteRule
    let minimumModelCount: Int
    let maximumModelCount: Int
    let destinationType: any PersistentModel.Type
    let declaredInverse: AnyKeyPath?
    private let inverseState = LockedValue<InverseState>(.unresolved)

    // Safety: the accessor it resolves to is immutable once made, and read only through the lock.
    private enum InverseState: @unchecked Sendable {
        case unresolved
        case resolved(RelationshipAccessor?)
    }

    init(
        name: String, offset: Int, originalName: String?, isToMany: Bool,
        deleteRule: Schema.Relationship.DeleteRule, minimumModelCount: Int, maximumModelCount: Int,
        destinationType: any PersistentModel.Type, declaredInverse: AnyKeyPath?
    ) {
        self.isToMany = isToMany
        self.deleteRule = deleteRule
        self.minimumModelCount = minimumModelCount
        self.maximumModelCount = maximumModelCount
        self.destinationType = destinationType
        self.declaredInverse = declaredInverse
        super.init(name: name, offset: offset, originalName: originalName)
    }

    /// The relationship on the destination that mirrors this one, declared on either side.
    var inverse: RelationshipAccessor? {
        if case .resolved(let inverse) = inverseState.withLock({ $0 }) { return inverse }
        let resolved = resolveInverse()
        inverseState.withLock { $0 = .resolved(resolved) }
        return resolved
    }

    var destinationEntityName: String { Schema.entityName(for: destinationType) }

    private func resolveInverse() -> RelationshipAccessor? {
        guard let destination = ModelLayout.of(existential: destinationType) else { return nil }
        if let declaredInverse, let name = destination.propertyName(for: declaredInverse) {
            return destination.fieldsByName[name] as? RelationshipAccessor
        }
        // Declared on the other side: find the destination relationship whose inverse is this one.
        for candidate in destination.relationships where candidate.declaredInverse != nil {
            guard let owner = ModelLayout.of(existential: candidate.destinationType), owner.fieldsByName[name] === self,
                let inverseName = owner.propertyName(for: candidate.declaredInverse!), inverseName == name
            else { continue }
            return candidate
        }
        return inferredInverse(in: destination)
    }

    /// The inverse SwiftData infers when neither side names one: the destination's only relationship
    /// back to this relationship's model type, when this is that type's only relationship to the
    /// destination and neither declares an inverse (so the pair cannot be read two ways). A
    /// relationship of a type to itself is never paired this way.
    private func inferredInverse(in destination: ModelLayout) -> RelationshipAccessor? {
        guard declaredInverse == nil else { return nil }
        let backs = destination.relationships.filter { candidate in
            guard let owner = ModelLayout.of(existential: candidate.destinationType) else { return false }
            return owner.fieldsByName[name] === self
        }
        guard backs.count == 1, let back = backs.first, back.declaredInverse == nil, back !== self,
            let owner = ModelLayout.of(existential: back.destinationType),
            ObjectIdentifier(owner.modelType) != ObjectIdentifier(destination.modelType)
        else { return nil }
        let forwards = owner.relationships.filter { $0.destinationEntityName == destination.entityName }
        guard forwards.count == 1, forwards[0] === self else { return nil }
        // Neither side may be named as the inverse of another relationship.
        let named = (owner.relationships + destination.relationships).filter { $0.declaredInverse != nil }
        for other in named {
            guard let layout = ModelLayout.of(existential: other.destinationType),
                let target = layout.propertyName(for: other.declaredInverse!)
            else { continue }
            if layout.fieldsByName[target] === self || layout.fieldsByName[target] === back { return nil }
        }
        return back
    }

    func noteWrappedKeyPath(_ keyPath: AnyKeyPath) {}
    /// The stored form: the related identifiers, or the unloaded fault as it was read.
    func references(of model: AnyObject) -> StoreValue { fatalError("abstract") }
    /// The related models, loading them if they are still a fault.
    func models(of model: AnyObject) -> [AnyObject] { fatalError("abstract") }
    /// Replaces the related models without touching the inverse (notifies observers, tracks the change).
    func replaceModels(_ models: [AnyObject], of model: AnyObject) { fatalError("abstract") }
    /// Loads the related models if the relationship is still a fault. A failed load keeps the fault
    /// (so nothing made up is ever saved) and is reported by the context's next save.
    func loadFault(of model: AnyObject) { fatalError("abstract") }
    /// Whether the relationship is still an unloaded fault.
    func isFault(_ model: AnyObject) -> Bool { fatalError("abstract") }
    /// The loaded related models, without loading a fault.
    func loadedModels(of model: AnyObject) -> [AnyObject] { fatalError("abstract") }

    /// Sets the related models and keeps the inverse side of every affected model in step.
    ///
    /// A to-many relationship is a set, as in SwiftData: a model listed twice is kept once, at its
    /// first place, so `pet.owner = owner; owner.pets.append(pet)` lists the pet once.
    func setModels(_ models: [AnyObject], of owner: AnyObject) {
        var newModels = models
        if isToMany && newModels.count > 1 {
            var seen = Set<ObjectIdentifier>()
            newModels = newModels.filter { seen.insert(ObjectIdentifier($0)).inserted }
        }
        let oldModels = self.models(of: owner)
        replaceModels(newModels, of: owner)
        guard let inverse else { return }
        let newIDs = Set(newModels.map(ObjectIdentifier.init))
        let oldIDs = Set(oldModels.map(ObjectIdentifier.init))
        for removed in oldModels where !newIDs.contains(ObjectIdentifier(removed)) {
            inverse.unlink(owner, from: removed)
        }
        for added in newModels where !oldIDs.contains(ObjectIdentifier(added)) {
            if inverse.isToMany {
                let current = inverse.models(of: added)
                if !current.contains(where: { $0 === owner }) { inverse.replaceModels(current + [owner], of: added) }
            } else {
                let previous = inverse.models(of: added).first
                if previous !== owner {
                    if let previous { unlink(added, from: previous) }
                    inverse.replaceModels([owner], of: added)
                }
            }
        }
    }

    /// Removes every model of a save's deletion from this relationship of `model`: from the loaded
    /// models (tracked and observed like any change) or from the unloaded fault.
    func removeReferences(to deletion: ModelContext.Deletion, of model: AnyObject) {
        if isFault(model) {
            removeFaultReferences(to: deletion.identifiers, of: model)
            return
        }
        let current = loadedModels(of: model)
        guard current.contains(where: { deletion.objects.contains(ObjectIdentifier($0)) }) else { return }
        replaceModels(current.filter { !deletion.objects.contains(ObjectIdentifier($0)) }, of: model)
    }

    /// Removes identifiers from the unloaded fault of this relationship of `model`.
    func removeFaultReferences(to identifiers: Set<PersistentIdentifier>, of model: AnyObject) {
        fatalError("abstract")
    }

    /// Removes `related` from this relationship of `model`.
    func unlink(_ related: AnyObject, from model: AnyObject) {
        let current = models(of: model)
        guard current.contains(where: { $0 === related }) else { return }
        replaceModels(current.filter { $0 !== related }, of: model)
    }
}

final class TypedRelationshipAccessor<Model: PersistentModel, Value: RelationshipValue>: RelationshipAccessor {
    private let wrappedKeyPath = LockedValue<WrappedKeyPath?>(nil)

    // Safety: a key path is an immutable object; it is set once, under the lock.
    private struct WrappedKeyPath: @unchecked Sendable {
        let keyPath: ReferenceWritableKeyPath<Model, Value>
    }

    init(name: String, offset: Int, probe: UnsafeMutableRawPointer) {
        let wrapper = probe.advanced(by: offset).assumingMemoryBound(to: Relationship<Value>.self).pointee
        super.init(
            name: name, offset: offset, originalName: wrapper.originalName, isToMany: Value.isToMany,
            deleteRule: wrapper.deleteRule, minimumModelCount: wrapper.minimumModelCount,
            maximumModelCount: wrapper.maximumModelCount, destinationType: Value.Destination.self,
            declaredInverse: wrapper.inverse
        )
    }

    override func noteWrappedKeyPath(_ keyPath: AnyKeyPath) {
        guard let typed = keyPath as? ReferenceWritableKeyPath<Model, Value> else { return }
        wrappedKeyPath.withLock { if $0 == nil { $0 = WrappedKeyPath(keyPath: typed) } }
    }

    override func storeValue(of model: AnyObject) throws -> StoreValue { references(of: model) }

    override func references(of model: AnyObject) -> StoreValue {
        let wrapper = storage(model, as: Relationship<Value>.self)
        if let fault = wrapper.pointee.fault { return fault }
        let related = wrapper.pointee.value.relatedModels
        if Value.isToMany {
            return .references(related.map { $0.persistentModelID })
        }
        return related.first.map { .reference($0.persistentModelID) } ?? .null
    }

    override func load(_ value: StoreValue, into model: AnyObject) throws {
        let wrapper = storage(model, as: Relationship<Value>.self)
        wrapper.pointee.value = Value(relatedModels: [])
        switch value {
        case .null, .references([]): wrapper.pointee.fault = nil
        case .reference, .references: wrapper.pointee.fault = value
        default:
            throw DataStoreError.invalidValue(
                "relationship '\(name)' expects stored references but found a \(value.kindName)")
        }
    }

    override func removeFaultReferences(to identifiers: Set<PersistentIdentifier>, of model: AnyObject) {
        let wrapper = storage(model, as: Relationship<Value>.self)
        guard let fault = wrapper.pointee.fault else { return }
        switch fault {
        case .reference(let id) where identifiers.contains(id): wrapper.pointee.fault = nil
        case .references(let ids) where ids.contains(where: identifiers.contains):
            let kept = ids.filter { !identifiers.contains($0) }
            wrapper.pointee.fault = kept.isEmpty ? nil : .references(kept)
        default: break
        }
    }

    override func isFault(_ model: AnyObject) -> Bool {
        storage(model, as: Relationship<Value>.self).pointee.fault != nil
    }

    override func loadedModels(of model: AnyObject) -> [AnyObject] {
        storage(model, as: Relationship<Value>.self).pointee.value.relatedModels
    }

    override func models(of model: AnyObject) -> [AnyObject] {
        let wrapper = storage(model, as: Relationship<Value>.self)
        if wrapper.pointee.fault != nil { loadFault(of: model) }
        return wrapper.pointee.value.relatedModels
    }

    override func loadFault(of model: AnyObject) {
        let wrapper = storage(model, as: Relationship<Value>.self)
        guard let fault = wrapper.pointee.fault else { return }
        let owner = unsafeDowncast(model, to: Model.self)
        do {
            let related = try ModelContext.loadRelated(fault, as: Value.Destination.self, of: owner)
            wrapper.pointee.value = Value(relatedModels: related)
            wrapper.pointee.fault = nil
            owner.persistentBackingData.context?.faultDidLoad(owner, property: name)
        } catch {
            // The fault stays: the model keeps its stored references, and the next save reports the failure.
            ModelContext.faultDidFail(owner, property: name, error: error)
        }
    }

    override func replaceModels(_ models: [AnyObject], of model: AnyObject) {
        let typed = unsafeDowncast(model, to: Model.self)
        let newValue = Value(relatedModels: models.map { unsafeDowncast($0, to: Value.Destination.self) })
        let backing = typed.persistentBackingData
        if backing.modelHoldsSavedValues { backing.keepSavedValuesBeforeWrite(of: typed) }
        let write = {
            let wrapper = self.storage(model, as: Relationship<Value>.self)
            wrapper.pointee.value = newValue
            wrapper.pointee.fault = nil
        }
        if let keyPath = wrappedKeyPath.withLock({ $0 })?.keyPath, let registrar = backing.existingRegistrar {
            registrar.withMutation(of: typed, keyPath: keyPath, write)
        } else {
            write()
        }
        backing.didMutate(typed)
    }
}

protocol RelationshipField {
    static func makeAccessor<M: PersistentModel>(
        name: String, offset: Int, probe: UnsafeMutableRawPointer, model: M.Type
    ) -> RelationshipAccessor
    static func makeKeyPath<M: PersistentModel>(_ model: M.Type, offset: Int) -> any AnyKeyPath & Sendable
}

extension Relationship: RelationshipField {
    static func makeAccessor<M: PersistentModel>(
        name: String, offset: Int, probe: UnsafeMutableRawPointer, model: M.Type
    ) -> RelationshipAccessor {
        TypedRelationshipAccessor<M, Value>(name: name, offset: offset, probe: probe)
    }
    static func makeKeyPath<M: PersistentModel>(_ model: M.Type, offset: Int) -> any AnyKeyPath & Sendable {
        \M.[storedRelationship: FieldOffset<Value>(offset: offset)]
    }
}

// MARK: - Schema key paths

/// Where a wrapped property's storage lies in its model object: the argument of the schema's key paths.
struct FieldOffset<Value>: Hashable, Sendable {
    let offset: Int
}

extension PersistentModel {
    /// Reads a wrapped attribute through its storage offset: what ``Schema/Attribute/keyPath`` reads.
    subscript<Value>(storedAttribute field: FieldOffset<Value>) -> Value {
        let object = Unmanaged.passUnretained(self).toOpaque()
        return object.advanced(by: field.offset).assumingMemoryBound(to: Attribute<Value>.self).pointee.value
    }

    /// Reads a wrapped relationship through its storage offset, loading it if it is still a fault:
    /// what ``Schema/Relationship/keyPath`` reads.
    subscript<Value: RelationshipValue>(storedRelationship field: FieldOffset<Value>) -> Value {
        let object = Unmanaged.passUnretained(self).toOpaque()
        let wrapper = object.advanced(by: field.offset).assumingMemoryBound(to: Relationship<Value>.self)
        if wrapper.pointee.fault != nil {
            ModelLayout.of(Self.self)?.relationships.first { $0.offset == field.offset }?.loadFault(of: self)
        }
        return wrapper.pointee.value
    }
}
