import Foundation
import Observation

/// The Swift types a relationship can have: an optional model (to-one), or an array of models or
/// an optional array of models (to-many).
public protocol RelationshipValue {
    /// The related model type.
    associatedtype Destination: PersistentModel
    /// Whether the relationship holds many models.
    static var isToMany: Bool { get }
    /// The related models, in order.
    var relatedModels: [Destination] { get }
    /// A value holding these related models (the first, for to-one).
    init(relatedModels: [Destination])
}

/// What an optional relationship can wrap: a model (`Trip?`, to-one) or an array of models
/// (`[Item]?`, to-many, the spelling SwiftData apps that sync through CloudKit use).
///
/// Every ``PersistentModel`` and every array of models conforms; nothing else needs to.
public protocol RelationshipContent {
    /// The related model type.
    associatedtype RelatedModel: PersistentModel
    /// Whether the content is many models.
    static var holdsMany: Bool { get }
    /// The models it holds, in order.
    var relatedContent: [RelatedModel] { get }
}

extension PersistentModel {
    /// `false`: a model is one.
    public static var holdsMany: Bool { false }
    /// The model itself (as its hierarchy's root class, for a subclass).
    public var relatedContent: [RelatedModel] { [self as! RelatedModel] }
}

extension Array: RelationshipContent where Element: PersistentModel {
    /// `true`: an array holds many.
    public static var holdsMany: Bool { true }
    /// The array's models.
    public var relatedContent: [Element] { self }
}

extension Optional: RelationshipValue where Wrapped: RelationshipContent {
    /// The wrapped content's model type.
    public typealias Destination = Wrapped.RelatedModel
    /// Whether the optional wraps an array (to-many) rather than a model (to-one).
    public static var isToMany: Bool { Wrapped.holdsMany }
    /// The related models, if any.
    public var relatedModels: [Wrapped.RelatedModel] { self.map(\.relatedContent) ?? [] }
    /// For to-one, the first model or `nil`; for to-many, the models (an empty array, not `nil`).
    ///
    /// A to-one relationship typed to a subclass holds `nil` for a model of another class.
    public init(relatedModels: [Wrapped.RelatedModel]) {
        self = Wrapped.holdsMany ? relatedModels as? Wrapped : relatedModels.first as? Wrapped
    }
}

extension Array: RelationshipValue where Element: PersistentModel {
    /// `true`: an array is a to-many relationship.
    public static var isToMany: Bool { true }
    /// The related models.
    public var relatedModels: [Element] { self }
    /// The models themselves.
    public init(relatedModels: [Element]) { self = relatedModels }
}

/// Marks a property as a persisted relationship:
/// `@Relationship(deleteRule: .cascade, inverse: \Item.trip) var items: [Item] = []`.
///
/// A to-one relationship is an optional model; a to-many relationship is an array of models, or an
/// optional one (`[Item]? = []`, as SwiftData apps that sync through CloudKit declare them), which
/// reads back as an array, empty rather than `nil` when nothing is related.
/// Related models load lazily on first access unless prefetched. Setting either side of a
/// relationship with an inverse updates the other side at once, in memory, even before the
/// models are inserted into a context.
@propertyWrapper
public struct Relationship<Value: RelationshipValue> {
    @usableFromInline var value: Value
    /// The stored references while the related models are not loaded yet.
    var fault: StoreValue?
    let deleteRule: Schema.Relationship.DeleteRule
    let inverse: PartialKeyPath<Value.Destination>?
    let minimumModelCount: Int
    let maximumModelCount: Int
    let originalName: String?

    /// A relationship with a delete rule, optional count limits (0: no limit), a former name and an
    /// optional inverse, in SwiftData's argument order.
    public init(
        wrappedValue: Value,
        deleteRule: Schema.Relationship.DeleteRule = .nullify,
        minimumModelCount: Int = 0,
        maximumModelCount: Int = 0,
        originalName: String? = nil,
        inverse: PartialKeyPath<Value.Destination>? = nil
    ) {
        value = wrappedValue
        self.deleteRule = deleteRule
        self.inverse = inverse
        self.minimumModelCount = minimumModelCount
        self.maximumModelCount = maximumModelCount
        self.originalName = originalName
    }

    /// An empty to-one relationship (`nil`), with a delete rule, an optional inverse and count limits.
    public init(
        deleteRule: Schema.Relationship.DeleteRule = .nullify,
        minimumModelCount: Int = 0,
        maximumModelCount: Int = 0,
        originalName: String? = nil,
        inverse: PartialKeyPath<Value.Destination>? = nil
    ) where Value: ExpressibleByNilLiteral {
        self.init(
            wrappedValue: nil, deleteRule: deleteRule, minimumModelCount: minimumModelCount,
            maximumModelCount: maximumModelCount, originalName: originalName, inverse: inverse)
    }

    /// An empty to-many relationship (`[]`), with a delete rule, an optional inverse and count limits.
    public init(
        deleteRule: Schema.Relationship.DeleteRule = .nullify,
        minimumModelCount: Int = 0,
        maximumModelCount: Int = 0,
        originalName: String? = nil,
        inverse: PartialKeyPath<Value.Destination>? = nil
    ) where Value: ExpressibleByArrayLiteral {
        self.init(
            wrappedValue: [], deleteRule: deleteRule, minimumModelCount: minimumModelCount,
            maximumModelCount: maximumModelCount, originalName: originalName, inverse: inverse)
    }

    /// Unavailable: `@Relationship` works only on properties of a ``PersistentModel`` class.
    @available(*, unavailable, message: "@Relationship can only be used on properties of a PersistentModel class")
    public var wrappedValue: Value {
        get { fatalError() }
        set { fatalError() }
    }

    /// Reads the relationship (loading it on first access) and writes it, keeping the inverse in step.
    public static subscript<Model: PersistentModel>(
        _enclosingInstance model: Model,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Model, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Model, Self>
    ) -> Value {
        get {
            let backing = model.persistentBackingData
            backing.registrar.access(model, keyPath: wrappedKeyPath)
            backing.registrar.access(backing, keyPath: \.storedValues)
            if let probe = backing.probe {
                probe.record(storage: storageKeyPath, wrapped: wrappedKeyPath)
                return model[keyPath: storageKeyPath].value
            }
            ModelLayout.noteWrappedKeyPath(wrappedKeyPath, storage: storageKeyPath)
            if model[keyPath: storageKeyPath].fault != nil {
                ModelLayout.relationshipField(Model.self, storage: storageKeyPath)?.loadFault(of: model)
            }
            return model[keyPath: storageKeyPath].value
        }
        set {
            let backing = model.persistentBackingData
            if backing.probe != nil {
                model[keyPath: storageKeyPath].value = newValue
                return
            }
            if backing.tracksUndo {
                backing.context?.registerUndo(of: model, wrappedKeyPath, was: model[keyPath: wrappedKeyPath])
            }
            guard let field = ModelLayout.relationshipField(Model.self, storage: storageKeyPath) else {
                // The type's layout is being built (this is its probe's initializer): no bookkeeping.
                model[keyPath: storageKeyPath].value = newValue
                model[keyPath: storageKeyPath].fault = nil
                return
            }
            field.setModels(newValue.relatedModels, of: model)
        }
    }
}
