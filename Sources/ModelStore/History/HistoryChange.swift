import Foundation

/// One change of a history transaction: SwiftData's `HistoryChange`.
///
/// Each case holds a generic value for the model type the change is about; match the type you
/// care about with `as`: `case .update(let update as DefaultHistoryUpdate<Trip>)`.
public enum HistoryChange: Sendable, CustomStringConvertible {
    /// A model was inserted.
    case insert(any HistoryInsert)
    /// A model's attributes or relationships changed.
    case update(any HistoryUpdate)
    /// A model was deleted.
    case delete(any HistoryDelete)

    /// The model the change is about.
    public var changedPersistentIdentifier: PersistentIdentifier {
        switch self {
        case .insert(let change): change.changedPersistentIdentifier
        case .update(let change): change.changedPersistentIdentifier
        case .delete(let change): change.changedPersistentIdentifier
        }
    }

    /// `insert|update|delete identifier`.
    public var description: String {
        switch self {
        case .insert(let change): "insert \(change.changedPersistentIdentifier)"
        case .update(let change): "update \(change.changedPersistentIdentifier)"
        case .delete(let change): "delete \(change.changedPersistentIdentifier)"
        }
    }
}

/// What every kind of history change tells: SwiftData's `HistoryChange` protocols' common part.
public protocol HistoryModelChange: Sendable {
    /// The model type the change is about.
    associatedtype Model: PersistentModel
    /// The model the change is about.
    var changedPersistentIdentifier: PersistentIdentifier { get }
    /// The model type the change is about.
    var changedModelType: any PersistentModel.Type { get }
    /// The change's position within its transaction (0 for the first).
    var changeIdentifier: Int64 { get }
    /// The number of the transaction the change belongs to.
    var transactionIdentifier: Int64 { get }
}

/// An insert recorded in history: SwiftData's `HistoryInsert`.
public protocol HistoryInsert: HistoryModelChange {}

/// An update recorded in history: SwiftData's `HistoryUpdate`.
public protocol HistoryUpdate: HistoryModelChange {
    /// The attributes and relationships the update changed.
    var updatedAttributes: HistoryUpdatedAttributes<Model> { get }
}

/// A delete recorded in history: SwiftData's `HistoryDelete`.
public protocol HistoryDelete: HistoryModelChange {
    /// The values the deleted model kept for history (its `.preserveValueOnDeletion` attributes).
    var tombstone: HistoryTombstone<Model> { get }
}

/// An inserted model of type `Model`: SwiftData's `DefaultHistoryInsert`.
public struct DefaultHistoryInsert<Model: PersistentModel>: HistoryInsert {
    /// The inserted model.
    public let changedPersistentIdentifier: PersistentIdentifier
    /// The change's position within its transaction.
    public let changeIdentifier: Int64
    /// The number of the transaction.
    public let transactionIdentifier: Int64
    /// The insert of `changedPersistentIdentifier`, change `changeIdentifier` of transaction `transactionIdentifier`.
    package init(
        changedPersistentIdentifier: PersistentIdentifier, changeIdentifier: Int64, transactionIdentifier: Int64
    ) {
        self.changedPersistentIdentifier = changedPersistentIdentifier
        self.changeIdentifier = changeIdentifier
        self.transactionIdentifier = transactionIdentifier
    }
    /// `Model.self`.
    public var changedModelType: any PersistentModel.Type { Model.self }
}

/// An updated model of type `Model`: SwiftData's `DefaultHistoryUpdate`.
public struct DefaultHistoryUpdate<Model: PersistentModel>: HistoryUpdate {
    /// The updated model.
    public let changedPersistentIdentifier: PersistentIdentifier
    /// The change's position within its transaction.
    public let changeIdentifier: Int64
    /// The number of the transaction.
    public let transactionIdentifier: Int64
    /// The attributes and relationships the update changed: `update.updatedAttributes.contains(\.name)`.
    public let updatedAttributes: HistoryUpdatedAttributes<Model>
    /// The update of `changedPersistentIdentifier`, change `changeIdentifier` of transaction `transactionIdentifier`.
    package init(
        changedPersistentIdentifier: PersistentIdentifier, changeIdentifier: Int64, transactionIdentifier: Int64,
        updatedAttributes: HistoryUpdatedAttributes<Model>
    ) {
        self.changedPersistentIdentifier = changedPersistentIdentifier
        self.changeIdentifier = changeIdentifier
        self.transactionIdentifier = transactionIdentifier
        self.updatedAttributes = updatedAttributes
    }
    /// `Model.self`.
    public var changedModelType: any PersistentModel.Type { Model.self }
}

/// A deleted model of type `Model`: SwiftData's `DefaultHistoryDelete`.
public struct DefaultHistoryDelete<Model: PersistentModel>: HistoryDelete {
    /// The deleted model.
    public let changedPersistentIdentifier: PersistentIdentifier
    /// The change's position within its transaction.
    public let changeIdentifier: Int64
    /// The number of the transaction.
    public let transactionIdentifier: Int64
    /// The values kept for history.
    public let tombstone: HistoryTombstone<Model>
    /// The delete of `changedPersistentIdentifier`, change `changeIdentifier` of transaction `transactionIdentifier`.
    package init(
        changedPersistentIdentifier: PersistentIdentifier, changeIdentifier: Int64, transactionIdentifier: Int64,
        tombstone: HistoryTombstone<Model>
    ) {
        self.changedPersistentIdentifier = changedPersistentIdentifier
        self.changeIdentifier = changeIdentifier
        self.transactionIdentifier = transactionIdentifier
        self.tombstone = tombstone
    }
    /// `Model.self`.
    public var changedModelType: any PersistentModel.Type { Model.self }
}

/// The attributes and relationships an update changed, asked by key path
/// (`updatedAttributes.contains(\.name)`, as with SwiftData's set of key paths) or by name.
///
/// Membership is decided by the stored property a key path reads, so any spelling of `\Trip.name`
/// matches. Iterating gives the schema's key paths (``Schema/Attribute/keyPath``).
public struct HistoryUpdatedAttributes<Model: PersistentModel>: Sequence, Sendable {
    /// The changed properties' names, as the schema names them, in schema order.
    public let names: [String]
    private let entity: Schema.Entity?

    /// The changed properties `names` of a model of `entity`.
    public init(names: [String], entity: Schema.Entity?) {
        self.names = names
        self.entity = entity
    }

    /// Whether the update changed the stored property `keyPath` reads.
    public func contains(_ keyPath: PartialKeyPath<Model>) -> Bool {
        guard let name = entity?.propertyName(for: keyPath) else { return false }
        return names.contains(name)
    }

    /// Whether the update changed the property named `name`.
    public func contains(name: String) -> Bool { names.contains(name) }

    /// How many properties changed.
    public var count: Int { names.count }

    /// Whether none did.
    public var isEmpty: Bool { names.isEmpty }

    /// The schema's key paths of the changed properties.
    public func makeIterator() -> IndexingIterator<[PartialKeyPath<Model>]> {
        names.compactMap { name -> PartialKeyPath<Model>? in
            switch entity?.property(named: name) {
            case .attribute(let attribute): attribute.keyPath as? PartialKeyPath<Model>
            case .relationship(let relationship): relationship.keyPath as? PartialKeyPath<Model>
            case nil: nil
            }
        }.makeIterator()
    }
}

/// The values a deleted model kept for history: its attributes marked `.preserveValueOnDeletion`,
/// read by key path (`tombstone[\.name]`) or by name. SwiftData's `HistoryTombstone`.
public struct HistoryTombstone<Model: PersistentModel>: Sendable {
    /// The preserved values, by attribute name, in the store's neutral form.
    public let values: [String: StoreValue]
    private let entity: Schema.Entity?

    /// A tombstone with these values of a model of `entity`.
    public init(values: [String: StoreValue], entity: Schema.Entity?) {
        self.values = values
        self.entity = entity
    }

    /// The preserved value of the attribute at `keyPath`, or `nil` if it was not preserved (or
    /// cannot be read as `Value`).
    public subscript<Value>(_ keyPath: KeyPath<Model, Value>) -> Value? {
        guard let name = entity?.propertyName(for: keyPath), let stored = values[name],
            let codec = ValueCodecs.codec(for: Value.self)
        else { return nil }
        return try? codec.decode(stored)
    }

    /// The preserved value of the attribute named `name`, in the store's neutral form.
    public subscript(name: String) -> StoreValue? { values[name] }
}
