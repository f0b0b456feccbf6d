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
    ///
    /// A context saving many new models may make this array only when it is first read (then kept,
    /// and shared by the request's copies). A store that can write them a chunk at a time reads
    /// ``insertedCount`` and ``forEachInsertedChunk(_:)`` instead, and never holds them all.
    public var inserted: [Snapshot] {
        get { insertedSource?.all ?? storedInserted }
        set {
            storedInserted = newValue
            insertedSource = nil
        }
    }
    /// How many models ``inserted`` holds, without building it.
    public var insertedCount: Int { insertedSource?.count ?? storedInserted.count }
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
    /// ``inserted`` when it is an array of its own.
    private var storedInserted: [Snapshot]
    /// Where ``inserted`` comes from when the context makes it on demand.
    private(set) var insertedSource: InsertedSnapshotSource<Snapshot>?

    /// A save request.
    public init(editingState: EditingState, inserted: [Snapshot], updated: [Snapshot], deleted: [Snapshot]) {
        self.editingState = editingState
        self.storedInserted = inserted
        self.updated = updated
        self.deleted = deleted
    }

    /// A save request whose inserted snapshots `source` makes on demand.
    init(
        editingState: EditingState, inserted source: InsertedSnapshotSource<Snapshot>, updated: [Snapshot],
        deleted: [Snapshot]
    ) {
        self.init(editingState: editingState, inserted: [], updated: updated, deleted: deleted)
        insertedSource = source
    }

    /// Calls `body` with the inserted snapshots, in order, a chunk at a time: each chunk is made
    /// when `body` has returned from the one before, so that a large insert's snapshots never all
    /// sit in memory. The chunks together are ``inserted``; a request whose ``inserted`` is an
    /// array of its own, or was read already, gives it as one chunk. Calls `body` only with chunks
    /// that hold snapshots, and may be called again.
    public func forEachInsertedChunk(_ body: ([Snapshot]) throws -> Void) rethrows {
        if let insertedSource {
            try insertedSource.forEachChunk(body)
        } else if !storedInserted.isEmpty {
            try body(storedInserted)
        }
    }

    /// Lets go of the inserted snapshots' source, having first made ``inserted`` when a copy of
    /// this request that shares the source is held elsewhere (a store kept one): that copy then
    /// reads the snapshots as they were when the store saved.
    mutating func releaseInserted() {
        if !isKnownUniquelyReferenced(&insertedSource), let insertedSource { _ = insertedSource.all }
        insertedSource = nil
        storedInserted = []
    }

    /// Whether the inserted snapshots are made on demand: a context does so only for models whose
    /// stored values are all plain attributes, so none of them has a relationship (a store can
    /// then skip looking for one without making the snapshots).
    package var makesInsertedOnDemand: Bool { insertedSource != nil }

    /// A function that returns the inserted snapshots' next chunk on each call, and an empty array
    /// after the last: ``forEachInsertedChunk(_:)`` for a reader that pulls (a batch insert).
    @usableFromInline
    package func insertedChunkPuller() -> () -> [Snapshot] {
        if let insertedSource { return insertedSource.chunkPuller() }
        var taken = false
        let all = storedInserted
        return {
            defer { taken = true }
            return taken ? [] : all
        }
    }
}

extension DataStoreSaveChangesRequest where Snapshot == DefaultSnapshot {
    /// The inserted snapshots as a batch insert, for a store that writes a save of new models only
    /// with its batch insert. When the context makes them on demand for models of one entity, the
    /// batch is made from their values a chunk at a time, so a store that takes values
    /// (`SnapshotTable`, SQLite) reads no snapshot; otherwise its chunks are those of
    /// ``insertedChunkPuller()``. Either way the batch holds the inserted models in order.
    @usableFromInline
    package func insertedBatch() -> DataStoreBatchInsertRequest<DefaultSnapshot> {
        if let rows = insertedSource?.rowPuller() {
            return DataStoreBatchInsertRequest(expectedCount: insertedCount, editingState: editingState, nextRows: rows)
        }
        return DataStoreBatchInsertRequest(
            expectedCount: insertedCount, editingState: editingState, nextChunk: insertedChunkPuller())
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
    ///
    /// For a result made from the identifiers of every inserted snapshot
    /// (``init(for:inserted:identifiers:snapshotsToReregister:historyToken:)``), every entry is set:
    /// a snapshot that kept its identifier has that one.
    public var mintedIdentifiersInRequestOrder: [PersistentIdentifier?]? {
        switch mapping.ordered {
        case .minted(let minted): minted
        case .identifiers(let identifiers): identifiers.map { $0 }
        case nil: nil
        }
    }
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

    /// A save result with the identifier of every inserted snapshot in the request's order, as a
    /// batch insert returns them (``PersistentIdentifiers``, which keeps runs of consecutive keys in
    /// a few integers): what a store that wrote the request's ``DataStoreSaveChangesRequest/forEachInsertedChunk(_:)``
    /// returns, with no list of its own per model. ``remappedIdentifiers`` is built only if someone
    /// asks for it.
    ///
    /// - Parameters:
    ///   - storeIdentifier: The store that saved.
    ///   - request: The request saved.
    ///   - identifiers: The identifier each of the request's inserted snapshots has in the store, in
    ///     the same order (its own for one that kept it).
    ///   - snapshotsToReregister: Post-save snapshots whose values the store changed.
    ///   - historyToken: The transaction the save recorded, if the store keeps history.
    public init<Inserted: DataStoreSnapshot>(
        for storeIdentifier: String, inserted request: DataStoreSaveChangesRequest<Inserted>,
        identifiers: PersistentIdentifiers, snapshotsToReregister: [PersistentIdentifier: Snapshot] = [:],
        historyToken: DefaultHistoryToken? = nil
    ) {
        precondition(
            request.insertedCount == identifiers.count, "one identifier per inserted snapshot, in the request's order")
        self.storeIdentifier = storeIdentifier
        self.mapping = IdentifierMapping(identifiers: identifiers) {
            var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
            remapped.reserveCapacity(identifiers.count)
            var position = 0
            request.forEachInsertedChunk { chunk in
                for snapshot in chunk {
                    let (temporary, permanent) = (snapshot.persistentIdentifier, identifiers[position])
                    if temporary != permanent { remapped[temporary] = permanent }
                    position += 1
                }
            }
            return remapped
        }
        self.snapshotsToReregister = snapshotsToReregister
        self.historyToken = historyToken
    }
}

/// The permanent identifiers of a save result: a dictionary, or a list in the request's order from
/// which the dictionary is built on first use (shared by copies of the result, built once).
final class IdentifierMapping: Sendable {
    /// The permanent identifiers in the request's order, as a store gave them.
    enum Ordered {
        /// Each inserted snapshot's new identifier, `nil` for one that kept its own.
        case minted([PersistentIdentifier?])
        /// Each inserted snapshot's identifier in the store.
        case identifiers(PersistentIdentifiers)

        /// How many inserted snapshots the list covers.
        var count: Int {
            switch self {
            case .minted(let minted): minted.count
            case .identifiers(let identifiers): identifiers.count
            }
        }

        /// The permanent identifier of the inserted snapshot at `position`, `nil` when it kept its own.
        subscript(position: Int) -> PersistentIdentifier? {
            switch self {
            case .minted(let minted): minted[position]
            case .identifiers(let identifiers): identifiers[position]
            }
        }
    }

    let ordered: Ordered?
    private let build: @Sendable () -> [PersistentIdentifier: PersistentIdentifier]
    private let built: Mutex<[PersistentIdentifier: PersistentIdentifier]?>

    init(_ dictionary: [PersistentIdentifier: PersistentIdentifier]) {
        ordered = nil
        build = { dictionary }
        built = Mutex(dictionary)
    }

    init(minted: [PersistentIdentifier?], build: @escaping @Sendable () -> [PersistentIdentifier: PersistentIdentifier])
    {
        ordered = .minted(minted)
        self.build = build
        built = Mutex(nil)
    }

    init(
        identifiers: PersistentIdentifiers,
        build: @escaping @Sendable () -> [PersistentIdentifier: PersistentIdentifier]
    ) {
        ordered = .identifiers(identifiers)
        self.build = build
        built = Mutex(nil)
    }

    /// The same identifiers in order, without the means to build the dictionary (which may hold the
    /// request, and with it the snapshots or the models): for a caller that reads them only by
    /// position. Reading its ``dictionary`` is a programming error.
    var orderedOnly: IdentifierMapping? {
        let unavailable: @Sendable () -> [PersistentIdentifier: PersistentIdentifier] = {
            preconditionFailure("a mapping kept for its identifiers in order has no dictionary")
        }
        return switch ordered {
        case .minted(let minted): IdentifierMapping(minted: minted, build: unavailable)
        case .identifiers(let identifiers): IdentifierMapping(identifiers: identifiers, build: unavailable)
        case nil: nil
        }
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
