import Foundation

/// A store that deletes, updates and inserts many models in one call, without materialising them.
///
/// The context resolves which models a batch touches (pushing the predicate down as far as the
/// store can run it, and evaluating the rest in memory) and checks delete rules and uniqueness,
/// so every batch request names its models by identifier.
public protocol DataStoreBatching: DataStore {
    /// Deletes exactly the models in `request.identifiers`, atomically.
    func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws

    /// Deletes every stored model of `T`'s entity, atomically, and returns their identifiers.
    ///
    /// The context sends it for a batch delete without a predicate (`context.delete(model:)`) of
    /// an entity that no relationship touches, so no delete rule applies. A store can drop the
    /// entity's rows at once (SQL's `DELETE` without `WHERE`) instead of being sent every
    /// identifier and checking each. The default fetches the identifiers and calls
    /// ``delete(_:)``; it is atomic only as far as that fetch and delete are.
    func deleteEveryModel<T: PersistentModel>(_ request: DataStoreDeleteEveryModelRequest<T>) throws
        -> [PersistentIdentifier]

    /// Sets the given values on exactly the models in `request.identifiers`, atomically.
    func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws

    /// Inserts the snapshots atomically, minting a permanent identifier for each, and returns the
    /// permanent identifiers in the order of `request.snapshots`.
    func insert(_ request: DataStoreBatchInsertRequest<Snapshot>) throws -> [PersistentIdentifier]
}

/// A batch delete. SwiftData's `DataStoreBatchDeleteRequest`, with the resolved identifiers.
public struct DataStoreBatchDeleteRequest<T: PersistentModel>: Sendable {
    /// The predicate the caller gave, for information.
    public var predicate: Predicate<T>?
    /// The models to delete.
    public var identifiers: [PersistentIdentifier]
    /// Whether subclasses of `T` were included (models have no subclasses in ModelStore).
    public var includeSubclasses: Bool
    /// The context deleting.
    public var editingState: EditingState

    /// A batch delete request.
    public init(
        predicate: Predicate<T>? = nil, identifiers: [PersistentIdentifier], includeSubclasses: Bool = true,
        editingState: EditingState
    ) {
        self.predicate = predicate
        self.identifiers = identifiers
        self.includeSubclasses = includeSubclasses
        self.editingState = editingState
    }
}

/// A batch delete of every stored model of `T`'s entity: ``DataStoreBatching/deleteEveryModel(_:)``.
public struct DataStoreDeleteEveryModelRequest<T: PersistentModel>: Sendable {
    /// The context deleting.
    public var editingState: EditingState

    /// A request to delete every model of `T`.
    public init(editingState: EditingState) {
        self.editingState = editingState
    }
}

extension DataStoreBatching {
    /// Fetches every identifier of `T`'s entity, deletes them with ``delete(_:)``, and returns them.
    public func deleteEveryModel<T: PersistentModel>(_ request: DataStoreDeleteEveryModelRequest<T>) throws
        -> [PersistentIdentifier]
    {
        var descriptor = FetchDescriptor<T>()
        descriptor.includePendingChanges = false
        let identifiers = try fetchIdentifiers(
            DataStoreFetchRequest(
                descriptor: descriptor, editingState: request.editingState,
                query: self is any DataStoreQuerying ? StoreQuery(entityName: Schema.entityName(for: T.self)) : nil))
        guard !identifiers.isEmpty else { return [] }
        try delete(DataStoreBatchDeleteRequest<T>(identifiers: identifiers, editingState: request.editingState))
        return identifiers
    }
}

/// A batch update: the same new values for many models.
public struct DataStoreBatchUpdateRequest<T: PersistentModel>: Sendable {
    /// The models to update.
    public var identifiers: [PersistentIdentifier]
    /// The new values, by property slot.
    public var values: [Int: StoreValue]
    /// The context updating.
    public var editingState: EditingState

    /// A batch update request.
    public init(identifiers: [PersistentIdentifier], values: [Int: StoreValue], editingState: EditingState) {
        self.identifiers = identifiers
        self.values = values
        self.editingState = editingState
    }
}

/// A batch insert: many new models as snapshots under temporary identifiers.
public struct DataStoreBatchInsertRequest<Snapshot: DataStoreSnapshot>: Sendable {
    /// The new models.
    public var snapshots: [Snapshot]
    /// The context inserting.
    public var editingState: EditingState

    /// A batch insert request.
    public init(snapshots: [Snapshot], editingState: EditingState) {
        self.snapshots = snapshots
        self.editingState = editingState
    }
}
