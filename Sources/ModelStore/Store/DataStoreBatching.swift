import Foundation

/// A store that deletes, updates and inserts many models in one call, without materialising them.
///
/// The context resolves which models a batch touches (pushing the predicate down as far as the
/// store can run it, and evaluating the rest in memory) and checks delete rules and uniqueness,
/// so every batch request names its models by identifier.
public protocol DataStoreBatching: DataStore {
    /// Deletes exactly the models in `request.identifiers`, atomically.
    func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws

    /// Deletes every stored model of `T`'s entity, atomically, and returns their identifiers (as runs
    /// of keys where they form them: see ``PersistentIdentifiers``).
    ///
    /// The context sends it for a batch delete without a predicate (`context.delete(model:)`) of
    /// an entity that no relationship touches, so no delete rule applies. A store can drop the
    /// entity's rows at once (SQL's `DELETE` without `WHERE`) instead of being sent every
    /// identifier and checking each. The default fetches the identifiers and calls
    /// ``delete(_:)``; it is atomic only as far as that fetch and delete are.
    func deleteEveryModel<T: PersistentModel>(_ request: DataStoreDeleteEveryModelRequest<T>) throws
        -> PersistentIdentifiers

    /// Sets the given values on exactly the models in `request.identifiers`, atomically.
    func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws

    /// Inserts the snapshots atomically, minting a permanent identifier for each, and returns the
    /// permanent identifiers in the order of `request.snapshots`.
    ///
    /// A store that mints a batch's keys one after another returns them as one run of keys (see
    /// ``PersistentIdentifiers``), so a large batch returns no identifier per model. A store that
    /// can take a batch back (a transaction, or rows it can truncate) reads it a chunk at a time
    /// with ``DataStoreBatchInsertRequest/forEachChunk(_:)``; any other reads
    /// ``DataStoreBatchInsertRequest/allSnapshots()``.
    func insert(_ request: DataStoreBatchInsertRequest<Snapshot>) throws -> PersistentIdentifiers
}

/// A batch delete. SwiftData's `DataStoreBatchDeleteRequest`, with the resolved identifiers.
public struct DataStoreBatchDeleteRequest<T: PersistentModel>: Sendable {
    /// The predicate the caller gave, for information.
    public var predicate: Predicate<T>?
    /// The models to delete.
    public var identifiers: [PersistentIdentifier]
    /// Whether models of `T`'s subclasses were deleted too; when not, the context deletes models of
    /// `T`'s own class as models, and this request is not made.
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
        -> PersistentIdentifiers
    {
        var descriptor = FetchDescriptor<T>()
        descriptor.includePendingChanges = false
        let identifiers = try fetchIdentifiers(
            DataStoreFetchRequest(
                descriptor: descriptor, editingState: request.editingState,
                query: self is any DataStoreQuerying ? StoreQuery(entityName: Schema.entityName(for: T.self)) : nil))
        guard !identifiers.isEmpty else { return [] }
        try delete(DataStoreBatchDeleteRequest<T>(identifiers: identifiers, editingState: request.editingState))
        return PersistentIdentifiers(identifiers)
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

/// A batch insert: many new models as snapshots under temporary identifiers, read once, a chunk at
/// a time.
///
/// The context builds a large batch's snapshots as the store reads them (``forEachChunk(_:)``), so
/// a million rows never sit in memory as snapshots all at once: a store that can write a chunk and
/// take it back if a later one fails (inside a transaction, or by truncating what it appended)
/// reads chunk by chunk; any other store reads them all with ``allSnapshots()``. Building a chunk
/// can throw (a value that does not encode); the error comes out of the call that read it, and the
/// store must then leave itself as it was.
///
/// The rows can be read only once: a second read is a programming error and stops the program.
public struct DataStoreBatchInsertRequest<Snapshot: DataStoreSnapshot> {
    /// The context inserting.
    public var editingState: EditingState
    /// How many snapshots the batch is expected to hold (exact for an array, an estimate for a
    /// sequence), for reserving capacity.
    public let expectedCount: Int
    private let source: BatchInsertSource<Snapshot>
    /// The chunks as values, for a request the context made from rows (``ModelContext/insert(_:rows:)``):
    /// `SnapshotTable` takes them as they are, and every other reader gets snapshots made from them.
    private var rows: BatchRowSource? = nil

    /// A batch insert of the snapshots in `snapshots`, read as one chunk.
    public init(snapshots: [Snapshot], editingState: EditingState) {
        var taken = false
        self.init(expectedCount: snapshots.count, editingState: editingState) {
            guard !taken else { return [] }
            taken = true
            return snapshots
        }
    }

    /// A batch insert whose snapshots come from `nextChunk`, which returns the next chunk, and an
    /// empty array after the last. It is called only while a store reads the request. A snapshot
    /// may refer by temporary identifier only to snapshots of its own chunk (a store mints and
    /// rewrites such references a chunk at a time).
    public init(
        expectedCount: Int, editingState: EditingState, nextChunk: @escaping () throws -> [Snapshot]
    ) {
        self.editingState = editingState
        self.expectedCount = expectedCount
        source = BatchInsertSource(nextChunk)
    }

    /// Calls `body` with each chunk of snapshots in order, building each only when `body` has
    /// returned from the one before. Rethrows the first error, of `body` or of building a chunk.
    public func forEachChunk(_ body: ([Snapshot]) throws -> Void) throws {
        try source.read(body)
    }

    /// For a request made from rows, calls `body` with each chunk as the context made it, with no
    /// snapshot built, and returns `true`; returns `false`, reading nothing, for any other request.
    package func forEachRowChunk(_ body: (inout BatchRows) throws -> Void) throws -> Bool {
        guard let rows else { return false }
        source.markRead()
        while var chunk = try rows.pull() { try body(&chunk) }
        return true
    }

    /// The next chunk, or an empty array after the last: for a request that converts this one's
    /// snapshots a chunk at a time.
    func nextChunk() throws -> [Snapshot] {
        try source.pull()
    }

    /// Every snapshot of the batch, in order, in one array.
    public func allSnapshots() throws -> [Snapshot] {
        var all: [Snapshot] = []
        try source.read { chunk in
            if all.isEmpty {
                all = chunk
                all.reserveCapacity(max(expectedCount, chunk.count))
            } else {
                all.append(contentsOf: chunk)
            }
        }
        return all
    }
}

extension DataStoreBatchInsertRequest where Snapshot == DefaultSnapshot {
    /// A batch insert whose chunks `nextChunk` makes from values, a chunk at a time (an empty one
    /// after the last). A reader that takes snapshots gets each chunk's rows as snapshots of new
    /// models; `SnapshotTable` takes the values as they are.
    @usableFromInline
    init(expectedCount: Int, editingState: EditingState, nextRows: @escaping () throws -> BatchRows) {
        let rows = BatchRowSource(nextRows)
        self.init(expectedCount: expectedCount, editingState: editingState) {
            try rows.pull()?.snapshots() ?? []
        }
        self.rows = rows
    }
}

/// A chunk of a batch insert made from values (``ModelContext/insert(_:rows:)``): new models of one
/// entity, their values in slot order, row after row, in one array. No row is an array or a
/// snapshot of its own until a store that takes snapshots asks for them.
@usableFromInline
package struct BatchRows {
    @usableFromInline package let entity: Schema.Entity
    /// Every row's values, ``width`` of them per row.
    @usableFromInline package var values: [StoreValue] = []
    /// How many rows the chunk holds.
    @usableFromInline package var count = 0

    /// An empty chunk with room for `capacity` rows.
    @usableFromInline
    package init(entity: Schema.Entity, capacity: Int) {
        self.entity = entity
        values.reserveCapacity(capacity * entity.properties.count)
    }

    /// The rows of snapshots of `entity`, in order. Inlinable, so a caller in another module (the
    /// adapter kit's table) gets it specialized for its collection.
    @inlinable
    package init(entity: Schema.Entity, snapshots: some Collection<DefaultSnapshot>) {
        self.init(entity: entity, capacity: snapshots.count)
        for snapshot in snapshots { values.append(contentsOf: snapshot.values) }
        count = snapshots.count
    }

    /// How many values a row has: one per property.
    package var width: Int { entity.properties.count }

    /// The value of `slot` in row `row`.
    @inline(__always)
    package subscript(row: Int, slot: Int) -> StoreValue { values[row &* width &+ slot] }

    /// The values of row `row`, in slot order, as an array of their own.
    package func values(ofRow row: Int) -> [StoreValue] {
        let width = width
        return Array(values[row &* width..<(row &+ 1) &* width])
    }

    /// The rows as snapshots of new models (temporary identifiers), for a store that takes snapshots.
    package func snapshots() -> [DefaultSnapshot] {
        (0..<count).map { row in
            DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: entity.name), entity: entity, values: values(ofRow: row))
        }
    }
}

/// The chunks of a batch insert made from values, read once.
private final class BatchRowSource {
    private var nextRows: (() throws -> BatchRows)?

    init(_ nextRows: @escaping () throws -> BatchRows) { self.nextRows = nextRows }

    /// The next chunk, or `nil` after the last.
    func pull() throws -> BatchRows? {
        guard let next = nextRows else { return nil }
        let chunk = try next()
        if chunk.count == 0 {
            nextRows = nil
            return nil
        }
        return chunk
    }
}

/// The chunks of a ``DataStoreBatchInsertRequest``, read once.
private final class BatchInsertSource<Snapshot> {
    private var nextChunk: (() throws -> [Snapshot])?
    private var wasRead = false

    init(_ nextChunk: @escaping () throws -> [Snapshot]) {
        self.nextChunk = nextChunk
    }

    /// Records that the request is being read, which it may be once.
    func markRead() {
        precondition(!wasRead, "a batch insert request's snapshots were read twice; read them once")
        wasRead = true
    }

    func read(_ body: ([Snapshot]) throws -> Void) throws {
        markRead()
        while true {
            let chunk = try pull()
            if chunk.isEmpty { return }
            try body(chunk)
        }
    }

    /// The next chunk, or an empty array after the last.
    func pull() throws -> [Snapshot] {
        guard let next = nextChunk else { return [] }
        let chunk = try next()
        if chunk.isEmpty { nextChunk = nil }
        return chunk
    }
}
