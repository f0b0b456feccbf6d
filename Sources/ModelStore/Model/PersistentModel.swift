import Foundation
import Observation

/// A class whose stored properties ModelStore persists.
///
/// Declare a model as a `final class` with a `BackingData` and wrapped properties:
///
/// ```swift
/// final class Trip: PersistentModel {
///     @Attribute(.unique) var name: String = ""
///     @Attribute var start: Date = .now
///     @Relationship(deleteRule: .cascade, inverse: \Item.trip) var items: [Item] = []
///     @Relationship var destination: Destination?
///     var isExpanded = false          // not wrapped: not persisted
///
///     let persistentBackingData = BackingData()
///     init() {}
/// }
/// ```
///
/// Rules:
/// 1. Every persisted property is wrapped in ``Attribute`` or ``Relationship`` and has an
///    initial value. Properties without a wrapper are not persisted (``Transient`` makes one observable).
/// 2. The class has an `init()` that the framework calls to create models it fetches. It may
///    set properties; it must not insert the model anywhere.
/// 3. The class is `final`. Its wrapped properties are read and written by the framework through
///    their storage offsets, computed once per type, so fetch and save use no reflection.
///
/// Models are `Observable`: reads and writes of wrapped properties go through an
/// `ObservationRegistrar`, so `withObservationTracking` sees them. Models are not `Sendable`;
/// pass ``persistentModelID`` between isolation domains instead.
public protocol PersistentModel: AnyObject, Observable, Hashable, Identifiable, SendableMetatype, RelationshipContent {
    /// The class that declares the conformance: the model type itself, or for a subclass of a model
    /// class, the root class of its hierarchy, whose entity stores every class of the hierarchy.
    ///
    /// Never declare it; Swift infers it.
    associatedtype RelatedModel = Self

    /// Creates a model with every property at its initial value.
    ///
    /// A non-final model class declares it `required`, so that subclasses keep it.
    init()

    /// The framework's per-model state. Declare it as `let persistentBackingData = BackingData()`.
    var persistentBackingData: BackingData { get }

    /// Compound uniqueness constraints and indexes: ModelStore's `#Unique` and `#Index`.
    ///
    /// ```swift
    /// static var constraints: [ModelConstraint<Trip>] { [.unique(\.name, \.start), .index(\.start)] }
    /// ```
    ///
    /// In a class hierarchy the root class declares them, for the whole hierarchy.
    static var constraints: [ModelConstraint<RelatedModel>] { get }

    /// The classes of the model's hierarchy that are abstract, as Core Data's abstract entities
    /// are: they declare properties for their subclasses, and a model of exactly such a class
    /// cannot be saved. The root class declares them, for the whole hierarchy:
    ///
    /// ```swift
    /// class Vehicle: PersistentModel {
    ///     static var abstractClasses: [any PersistentModel.Type] { [Vehicle.self] }
    ///     …
    /// }
    /// ```
    static var abstractClasses: [any PersistentModel.Type] { get }
}

extension PersistentModel {
    /// No compound constraints or indexes.
    public static var constraints: [ModelConstraint<RelatedModel>] { [] }

    /// No abstract classes.
    public static var abstractClasses: [any PersistentModel.Type] { [] }

    /// The model's identifier: temporary until its first save, then the store's.
    public var persistentModelID: PersistentIdentifier {
        let backing = persistentBackingData
        if let id = backing.persistentIdentifier { return id }
        return backing.identifier(entityName: Schema.entityName(for: Self.self))
    }

    /// The model's identifier (``persistentModelID``), unless the model declares an `id` of its own.
    public var id: PersistentIdentifier { persistentModelID }

    /// The context the model is registered in, if any.
    public var modelContext: ModelContext? { persistentBackingData.context }

    /// Whether the model is marked for deletion in its context.
    public var isDeleted: Bool { persistentBackingData.state == .deleted }

    /// Whether the model has unsaved changes (it was inserted, changed or deleted since the last save).
    public var hasChanges: Bool {
        let backing = persistentBackingData
        return backing.state == .inserted || backing.state == .deleted || backing.isChanged
    }

    /// Models are equal when they are the same object.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// Whether a model constraint enforces uniqueness or only speeds up lookups.
public enum ModelConstraintKind: Sendable, Hashable {
    /// The combination of values must be unique among the entity's models.
    case unique
    /// An index over the properties, for faster filtering and sorting.
    case index
}

/// A compound uniqueness constraint or index declared on a model type.
public struct ModelConstraint<Model: PersistentModel>: Sendable {
    /// Uniqueness or index.
    public let kind: ModelConstraintKind
    /// The properties, in order.
    public let keyPaths: [any PartialKeyPath<Model> & Sendable]

    /// The combination of these properties must be unique (SwiftData's `#Unique`).
    public static func unique(_ keyPaths: (any PartialKeyPath<Model> & Sendable)...) -> Self {
        ModelConstraint(kind: .unique, keyPaths: keyPaths)
    }

    /// An index over these properties (SwiftData's `#Index`).
    public static func index(_ keyPaths: (any PartialKeyPath<Model> & Sendable)...) -> Self {
        ModelConstraint(kind: .index, keyPaths: keyPaths)
    }
}

/// A context and its container, held weakly, for the models in the context to share: see
/// ``BackingData/membership``.
final class ContextMembership {
    /// Set by the context once it is initialized; left `nil` in a membership that holds the
    /// container alone.
    weak var context: ModelContext?
    weak var container: ModelContainer?

    init(container: ModelContainer) { self.container = container }
}

/// The framework's state for one model object: its identity, its context, and its last saved values.
///
/// Every model declares one: `let persistentBackingData = BackingData()`. Its contents are the
/// framework's; code outside ModelStore only creates it.
///
/// It is `Observable` only so that observation can track "the model's stored values" as one
/// property: every wrapped property's getter reports reading them, and the context reports a
/// change when it replaces a registered model's values from the store (a merge of another
/// context's save, a refresh by a fetch, a rollback, a batch update), where no setter runs.
public final class BackingData: Observable {
    /// Creates the state of a model that is not yet in any context.
    public init() {}

    /// Where the model stands with respect to its context.
    @usableFromInline
    enum State: UInt8 {
        /// Not in any context.
        case detached
        /// Registered and saved.
        case registered
        /// Inserted, not yet saved.
        case inserted
        /// Deleted, not yet saved.
        case deleted
    }

    // The stored properties are declared words first, then the identifier, then the one-byte
    // flags: Swift lays a class out in declaration order, and so the object takes 85 bytes, a 96-byte
    // block of the heap. With the flags between the words it took 112, a 128-byte block: 32 bytes
    // more for every model in memory (`BackingDataLayoutTests`).

    /// The model's observation registrar, made by the first read of a wrapped property.
    ///
    /// Observation registers an observer only through a registrar's `access`, which the getters
    /// call, so a model none of whose properties was ever read has no observers, and its writes
    /// skip the registrar (a lock and a look-up per write) until then. Building a model and
    /// inserting it, the common case, never makes one.
    @exclusivity(unchecked) private var madeRegistrar: ObservationRegistrar?
    /// The context the model is in and its container, in one object that every model of the
    /// context shares (``ModelContext/membership``): joining a context costs one reference count,
    /// where a weak reference to each cost two updates of their side tables per model.
    @exclusivity(unchecked) var membership: ContextMembership?
    /// The model's context; `nil` when it is in none, or its context is gone.
    var context: ModelContext? { membership?.context }
    /// The container of the context the model joined, which usually outlives the context: a model
    /// whose context is gone, or that the context let go of (``ModelContext/reset()``), loads its
    /// relationships through it. Weak, so that models never keep a store open after the app
    /// released its container.
    var container: ModelContainer? { membership?.container }
    /// The values last read from or written to the store, in slot order, when the model keeps a
    /// copy of them: `nil` before the first save, and while ``modelHoldsSavedValues``. Read them
    /// with ``savedValues(of:layout:)``.
    @exclusivity(unchecked) private(set) var keptSavedValues: [StoreValue]?
    /// Set on the probe instance used to resolve key paths.
    var probe: ProbeRecorder? {
        didSet { isProbe = probe != nil }
    }
    /// The slots of the attributes a fetch with ``FetchDescriptor/propertiesToFetch`` left unloaded
    /// (they hold their initial values, and so do those slots of ``keptSavedValues``); `nil` when every
    /// value is loaded. Reading or writing any attribute, changing a relationship or deleting the
    /// model loads them first (``loadUnfetchedValues(of:)``).
    @usableFromInline @exclusivity(unchecked) var unfetchedSlots: [Int]?
    /// The model's identifier once it has one: temporary from its insert, the store's from its first save.
    @exclusivity(unchecked) var persistentIdentifier: PersistentIdentifier?
    @usableFromInline @exclusivity(unchecked) var state: State = .detached
    @usableFromInline @exclusivity(unchecked) var isChanged = false
    /// Whether the registrar was made. A flag of its own: `ObservationRegistrar` is opaque outside
    /// its library, so even testing the optional for `nil` goes through its value witnesses.
    @usableFromInline @exclusivity(unchecked) var hasRegistrar = false
    /// Whether the model's context has an undo manager, so each write registers how to undo it.
    @usableFromInline @exclusivity(unchecked) var tracksUndo = false
    /// Whether the model's own values are its saved values, so that it keeps no copy of them: set
    /// when a save or a fetch leaves a model of a type whose values read back as saved
    /// (``ModelLayout/savedValuesAreModelValues``) unchanged, and cleared by the first write, which
    /// copies the values first (``keepSavedValuesBeforeWrite(of:)``). A million saved models then
    /// hold no second array of their values each.
    @usableFromInline @exclusivity(unchecked) var modelHoldsSavedValues = false
    /// The registrar if a read made it, else `nil` (nothing can observe the model yet).
    @usableFromInline
    var existingRegistrar: ObservationRegistrar? { hasRegistrar ? madeRegistrar : nil }

    /// The registrar that observation tracking reads through, made on first use (see ``existingRegistrar``).
    @usableFromInline
    var registrar: ObservationRegistrar {
        if hasRegistrar, let madeRegistrar { return madeRegistrar }
        let registrar = ObservationRegistrar()
        madeRegistrar = registrar
        hasRegistrar = true
        return registrar
    }

    /// Whether a write of an attribute may store its value and do nothing else: no observer can
    /// be registered (no property was ever read), no undo is recorded, every attribute is loaded,
    /// and the write changes nothing in the context's bookkeeping (the model is new, or already
    /// among the changed models).
    ///
    /// The state this reads, and the rest a save touches per model, is marked
    /// `@exclusivity(unchecked)`: a model's state is only used from its context's isolation
    /// domain and never borrowed across a call, and the dynamic check of each access cost more
    /// than the write it guarded.
    @inlinable
    var acceptsPlainWrites: Bool {
        !hasRegistrar && !tracksUndo && !modelHoldsSavedValues && unfetchedSlots == nil
            && (isChanged || state == .detached || state == .inserted)
    }

    /// Whether a read of an attribute needs nothing but observation and the stored value: every
    /// attribute is loaded, and the model is not the probe that resolves key paths.
    @inlinable
    var readsPlainly: Bool { unfetchedSlots == nil && !isProbe }

    /// Whether ``probe`` is set, for the inlined read (``readsPlainly``).
    @usableFromInline @exclusivity(unchecked) var isProbe = false

    /// Whether the model has saved values: it was saved, or read from a store.
    var hasSavedValues: Bool { modelHoldsSavedValues || keptSavedValues != nil }

    /// The values last read from or written to the store, in slot order; `nil` before the first
    /// save. `layout` is the model's storage layout, which reads them from the model while it holds
    /// them (``modelHoldsSavedValues``).
    func savedValues(of model: AnyObject, layout: ModelLayout?) -> [StoreValue]? {
        guard modelHoldsSavedValues else { return keptSavedValues }
        return try? layout?.values(of: model)
    }

    /// Keeps `values` as the saved values (a copy the model holds apart from its own values).
    func keepSavedValues(_ values: [StoreValue]?) {
        keptSavedValues = values
        modelHoldsSavedValues = false
    }

    /// Records that the model's own values are its saved values: the model keeps no copy. Only for
    /// a model of a layout whose ``ModelLayout/savedValuesAreModelValues``, whose values are what the
    /// store holds.
    func markSavedValuesHeldByModel() {
        keptSavedValues = nil
        modelHoldsSavedValues = true
    }

    /// Keeps a copy of the saved values before a write changes the model's own, while the model
    /// holds them (``modelHoldsSavedValues``); every path that writes a stored property of a
    /// registered model calls it first.
    @usableFromInline @inline(never)
    func keepSavedValuesBeforeWrite(of model: any PersistentModel) {
        guard modelHoldsSavedValues else { return }
        let type = Swift.type(of: model)
        let layout = container?.schema.layout(for: type) ?? ModelLayout.of(existential: type)
        keepSavedValues(try? layout?.values(of: model))
    }

    /// Loads the attributes a fetch left out if the attribute at `keyPath` is one of them (reading
    /// an attribute that was fetched loads nothing).
    @inline(never)
    func loadUnfetchedValues(of model: any PersistentModel, reading keyPath: AnyKeyPath) {
        guard let slots = unfetchedSlots, let layout = ModelLayout.of(existential: type(of: model)),
            let name = layout.propertyName(for: keyPath), let field = layout.fieldsByName[name],
            slots.contains(field.slot)
        else { return }
        try? loadUnfetchedValues(of: model)
    }

    /// Loads the attributes a fetch left out (``unfetchedSlots``) from the model's store, all at
    /// once, as Core Data fulfils a fault. Does nothing when every value is loaded.
    ///
    /// Throws ``DataStoreError/Code/notFound`` when the store no longer has the model (another
    /// context or process deleted it), or what the store throws; the attributes then stay unloaded
    /// and a save of the model throws the same error rather than store initial values over them.
    @inline(never)
    func loadUnfetchedValues(of model: any PersistentModel) throws {
        guard let slots = unfetchedSlots else { return }
        guard let id = persistentIdentifier, let container = context?.container ?? container,
            let layout = ModelLayout.of(existential: type(of: model))
        else {
            throw DataStoreError(
                .notFound,
                "a model whose attributes were not all fetched (propertiesToFetch) has no container to "
                    + "load them from", remedy: "Keep the model's container open while the model is used")
        }
        let channel = try container.channel(for: id.entityName)
        guard
            let snapshot = try channel.cachedSnapshots([id], editingState: context?.editingState ?? EditingState())[id]
        else {
            let names = slots.map { "'\(layout.fields[$0].name)'" }.joined(separator: ", ")
            throw DataStoreError(
                .notFound,
                "\(names) of \(id) were not fetched (propertiesToFetch), and the store no longer has the model",
                remedy: "The model was deleted since it was fetched: fetch again", entityName: id.entityName)
        }
        unfetchedSlots = nil
        for slot in slots {
            try layout.fields[slot].load(snapshot.values[slot], into: model)
            keptSavedValues?[slot] = snapshot.values[slot]
        }
    }

    func identifier(entityName: String) -> PersistentIdentifier {
        if let persistentIdentifier { return persistentIdentifier }
        let id = PersistentIdentifier.temporary(entityName: entityName)
        persistentIdentifier = id
        return id
    }

    /// Stands for all of the model's stored values in observation tracking (see the type's summary).
    @usableFromInline
    var storedValues: Void { () }

    /// Reports that the model's stored values were replaced without their setters, to every
    /// observation that read any of its wrapped properties.
    func storedValuesDidChange() {
        existingRegistrar?.withMutation(of: self, keyPath: \.storedValues) {}
    }

    /// Notes a change of a stored property. A registered model becomes one of its context's changed
    /// models; a deleted one remembers it, so ``ModelContext/rollback()`` restores it.
    @usableFromInline
    func didMutate(_ model: AnyObject) {
        guard !isChanged else { return }
        switch state {
        case .registered:
            // A relationship changed (an attribute's setter loads before it writes): load the
            // attributes a fetch left out, so that a save stores their values, not initial ones.
            if unfetchedSlots != nil, let model = model as? any PersistentModel {
                try? loadUnfetchedValues(of: model)
            }
            isChanged = true
            context?.modelDidChange(model)
        case .deleted:
            isChanged = true
        case .inserted, .detached:
            break
        }
    }
}

/// Records which storage key path a probe access reached.
final class ProbeRecorder {
    var storageKeyPath: AnyKeyPath?
    var wrappedKeyPath: AnyKeyPath?
    var accesses = 0

    func record(storage: AnyKeyPath, wrapped: AnyKeyPath) {
        storageKeyPath = storage
        wrappedKeyPath = wrapped
        accesses += 1
    }
}
