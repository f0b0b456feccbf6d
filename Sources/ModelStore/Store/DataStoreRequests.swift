import Foundation
import Synchronization

/// A fetch a context sends to a store. SwiftData's `DataStoreFetchRequest`, with a public initializer.
public struct DataStoreFetchRequest<T: PersistentModel>: Sendable {
    /// What the user asked for, as they wrote it.
    public var descriptor: FetchDescriptor<T>
    /// The context asking.
    public var editingState: EditingState
    /// The store-neutral query for stores that conform to ``DataStoreQuerying``: the part of the
    /// predicate and sort the store said it can run. When it is set, such a store MUST apply it
    /// and MUST NOT apply the descriptor's predicate, sort, offset or limit; the context evaluates
    /// the rest. `nil` for SwiftData-style stores, which read ``descriptor``.
    public var query: StoreQuery?

    /// A request for a descriptor.
    public init(descriptor: FetchDescriptor<T>, editingState: EditingState, query: StoreQuery? = nil) {
        self.descriptor = descriptor
        self.editingState = editingState
        self.query = query
    }

    /// The query a store that runs the whole request answers: ``query``, or every model of `T`'s
    /// entity when there is none.
    public var resolvedQuery: StoreQuery { query ?? StoreQuery(entityName: Schema.entityName(for: T.self)) }
}

/// What a store returns from a fetch. SwiftData's `DataStoreFetchResult`.
public struct DataStoreFetchResult<T: PersistentModel, Snapshot: DataStoreSnapshot>: Sendable {
    /// The descriptor that was fetched.
    public var descriptor: FetchDescriptor<T>
    /// The snapshots of the requested entity, in result order.
    public var fetchedSnapshots: [Snapshot]
    /// Snapshots of related models the store loaded along (for prefetching).
    public var relatedSnapshots: [PersistentIdentifier: Snapshot]
    /// Whether the fetched snapshots hold stored values only for the query's
    /// ``StoreQuery/propertiesToFetch`` and every relationship, the other attributes holding their
    /// default values (`false` unless the store sets it). The context then leaves those attributes
    /// unloaded in the models and reads the whole model from the store when one is first accessed.
    public var omitsUnrequestedProperties = false

    /// A result.
    public init(
        descriptor: FetchDescriptor<T>, fetchedSnapshots: [Snapshot],
        relatedSnapshots: [PersistentIdentifier: Snapshot] = [:]
    ) {
        self.descriptor = descriptor
        self.fetchedSnapshots = fetchedSnapshots
        self.relatedSnapshots = relatedSnapshots
    }
}

/// The changes of one save. SwiftData's `DataStoreSaveChangesRequest`.
public struct DataStoreSaveChangesRequest<Snapshot: DataStoreSnapshot>: Sendable {
    /// New models, under temporary identifiers.
    public var inserted: [Snapshot]
    /// Changed models, with all their values.
    public var updated: [Snapshot]
    /// Deleted models, with their last values.
    public var deleted: [Snapshot]
    /// The context saving.
    public var editingState: EditingState
    /// For updated models: the stored attribute values this save was checked against, by
    /// identifier, in slot order (relationship slots are not compared).
    ///
    /// The context fills it with what it read from the store when it checked for conflicts (its
    /// ``ModelContext/mergePolicy``). A store SHOULD compare each model's stored attributes with
    /// these under the lock its write holds, and throw ``DataStoreError/Code/conflict`` when any
    /// differs (``checkExpectedValues(skipping:stored:)`` does it), so that a change another context
    /// or process made between that check and this write is refused rather than overwritten. A
    /// store that checks versions of its own (the PostgreSQL store) may ignore it.
    public var expectedValues: [PersistentIdentifier: [StoreValue]] = [:]

    /// A save request.
    public init(editingState: EditingState, inserted: [Snapshot], updated: [Snapshot], deleted: [Snapshot]) {
        self.editingState = editingState
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }
}

extension Schema.Entity {
    /// The attributes whose values differ, bit for bit, between two value lists in slot order:
    /// what a conflict check compares (relationships are not).
    func attributes(
        differingBetween first: [StoreValue], and second: [StoreValue],
        skipping skipped: (Schema.Attribute) -> Bool = { _ in false }
    ) -> [Schema.Attribute] {
        attributes.filter { attribute in
            attribute.slot < first.count && attribute.slot < second.count && !skipped(attribute)
                && !first[attribute.slot].isIdentical(to: second[attribute.slot])
        }
    }
}

extension DataStoreSaveChangesRequest where Snapshot == DefaultSnapshot {
    /// Throws ``DataStoreError/Code/conflict`` naming the models and attributes whose stored values
    /// (`stored`, read under the write's lock) differ from ``expectedValues``; does nothing for
    /// models without expected values or that `stored` does not find.
    ///
    /// - Parameters:
    ///   - skipped: Attributes not to compare (for example values a store reads in another form).
    ///   - stored: The model's stored snapshot, or `nil`.
    public func checkExpectedValues(
        skipping skipped: (Schema.Attribute) -> Bool = { _ in false },
        stored: (PersistentIdentifier) throws -> DefaultSnapshot?
    ) throws {
        guard !expectedValues.isEmpty else { return }
        var conflicts: [(id: PersistentIdentifier, entity: String, attributes: [String])] = []
        for snapshot in updated {
            let id = snapshot.persistentIdentifier
            guard let expected = expectedValues[id], let current = try stored(id) else { continue }
            let differing = current.entity.attributes(
                differingBetween: expected, and: current.values, skipping: skipped)
            if !differing.isEmpty { conflicts.append((id, current.entity.name, differing.map(\.name))) }
        }
        guard let first = conflicts.first else { return }
        throw DataStoreError.conflict(
            conflicts.map { ($0.id, $0.attributes) }, entityName: first.entity, propertyNames: first.attributes)
    }
}

/// What a store returns from a save. SwiftData's `DataStoreSaveChangesResult`.
public struct DataStoreSaveChangesResult<Snapshot: DataStoreSnapshot>: Sendable {
    /// The identifier of the store that saved.
    public var storeIdentifier: String
    /// The permanent identifier of every inserted model, by its temporary identifier.
    ///
    /// A result made with the identifiers in the request's order
    /// (``init(for:inserted:mintedInOrder:snapshotsToReregister:historyToken:)``) builds this on its
    /// first read, once.
    public var remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier] {
        get { mapping.dictionary }
        set { mapping = IdentifierMapping(newValue) }
    }
    /// The permanent identifier of each of the request's inserted snapshots, in the order of
    /// ``DataStoreSaveChangesRequest/inserted`` (`nil` for one that kept its own), when the store
    /// reported them that way; `nil` otherwise. A caller that has the request can read these instead
    /// of looking each identifier up in ``remappedIdentifiers``.
    public var mintedIdentifiersInRequestOrder: [PersistentIdentifier?]? { mapping.minted }
    /// Post-save snapshots whose values the store changed (by permanent identifier).
    public var snapshotsToReregister: [PersistentIdentifier: Snapshot]
    /// The token of the transaction the save recorded, for a store that keeps history
    /// (``HistoryProviding``); `nil` otherwise, or when the save changed nothing.
    public var historyToken: DefaultHistoryToken?
    /// How the permanent identifiers were given: a dictionary, or in the request's order.
    var mapping: IdentifierMapping

    /// A save result.
    public init(
        for storeIdentifier: String,
        remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier] = [:],
        snapshotsToReregister: [PersistentIdentifier: Snapshot] = [:], historyToken: DefaultHistoryToken? = nil
    ) {
        self.storeIdentifier = storeIdentifier
        self.mapping = IdentifierMapping(remappedIdentifiers)
        self.snapshotsToReregister = snapshotsToReregister
        self.historyToken = historyToken
    }

    /// A save result with the permanent identifiers in the request's order, as
    /// `DataStoreSaveChangesRequest.mintIdentifiers(storeIdentifier:nextPrimaryKey:)` mints them:
    /// a large insert's caller reads them by position, and ``remappedIdentifiers`` is built only if
    /// someone asks for it.
    ///
    /// - Parameters:
    ///   - storeIdentifier: The store that saved.
    ///   - inserted: The request's ``DataStoreSaveChangesRequest/inserted`` snapshots.
    ///   - minted: Each one's permanent identifier, in the same order; `nil` for one that kept its own.
    ///   - snapshotsToReregister: Post-save snapshots whose values the store changed.
    ///   - historyToken: The transaction the save recorded, if the store keeps history.
    public init<Inserted: DataStoreSnapshot>(
        for storeIdentifier: String, inserted: [Inserted], mintedInOrder minted: [PersistentIdentifier?],
        snapshotsToReregister: [PersistentIdentifier: Snapshot] = [:], historyToken: DefaultHistoryToken? = nil
    ) {
        precondition(inserted.count == minted.count, "one minted identifier (or nil) per inserted snapshot")
        self.storeIdentifier = storeIdentifier
        self.mapping = IdentifierMapping(minted: minted) {
            DataStoreSaveChangesRequest<Inserted>.remapping(inserted, minted)
        }
        self.snapshotsToReregister = snapshotsToReregister
        self.historyToken = historyToken
    }
}

/// The permanent identifiers of a save result: a dictionary, or a list in the request's order from
/// which the dictionary is built on first use (shared by copies of the result, built once).
final class IdentifierMapping: Sendable {
    let minted: [PersistentIdentifier?]?
    private let build: @Sendable () -> [PersistentIdentifier: PersistentIdentifier]
    private let built: Mutex<[PersistentIdentifier: PersistentIdentifier]?>

    init(_ dictionary: [PersistentIdentifier: PersistentIdentifier]) {
        minted = nil
        build = { dictionary }
        built = Mutex(dictionary)
    }

    init(minted: [PersistentIdentifier?], build: @escaping @Sendable () -> [PersistentIdentifier: PersistentIdentifier])
    {
        self.minted = minted
        self.build = build
        built = Mutex(nil)
    }

    var dictionary: [PersistentIdentifier: PersistentIdentifier] {
        built.withLock { built in
            if let built { return built }
            let dictionary = build()
            built = dictionary
            return dictionary
        }
    }
}

extension DataStoreSaveChangesRequest {
    /// The permanent identifiers `minted` gave `inserted`, by old identifier.
    @inlinable
    package static func remapping(
        _ inserted: [Snapshot], _ minted: [PersistentIdentifier?]
    ) -> [PersistentIdentifier: PersistentIdentifier] {
        var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
        remapped.reserveCapacity(inserted.count)
        for (snapshot, permanent) in zip(inserted, minted) {
            if let permanent { remapped[snapshot.persistentIdentifier] = permanent }
        }
        return remapped
    }
}
