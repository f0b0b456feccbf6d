import Foundation

/// A store that records every transaction it commits and lets contexts read and delete that
/// history: SwiftData's `HistoryProviding`.
///
/// Apps read history through ``ModelContext/fetchHistory(_:)`` and ``ModelContext/deleteHistory(_:)``.
/// Implementation requirements:
///
/// 1. Every committed save and every batch delete, update and insert MUST be recorded as one
///    transaction, atomically with the change itself: a transaction is in the history exactly
///    when its changes are in the store. A save that changes nothing records nothing.
/// 2. Each transaction MUST get a token larger than every earlier one of the store
///    (``DefaultHistoryToken/transactionNumber`` 1, 2, 3, …), and a durable store MUST keep tokens
///    and history across closing and reopening.
/// 3. A transaction MUST list each inserted model (under its permanent identifier), each updated
///    model with the names of the properties whose stored values changed, and each deleted model
///    with a tombstone holding exactly its `.preserveValueOnDeletion` attribute values.
/// 4. After history is deleted, a fetch whose predicate selects transactions by token and would
///    have returned a deleted one MUST throw ``DataStoreError/Code/historyTokenExpired``, never
///    return the later transactions with a silent gap. ``StoreHistory`` implements this check.
/// 5. The author of the saving context (``EditingState/author``) MUST be recorded with the transaction.
///
/// ``StoreHistory`` (adapter kit) keeps records, builds them from save requests, evaluates
/// descriptors and checks expiry, so most stores only persist its records.
public protocol HistoryProviding: DataStore {
    /// The transactions `descriptor` selects, oldest first unless it sorts otherwise.
    func fetchHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws
        -> [DefaultHistoryTransaction]

    /// Deletes the transactions `descriptor` selects; tokens that point into them expire.
    func deleteHistory(_ descriptor: HistoryDescriptor<DefaultHistoryTransaction>) throws
}

/// One transaction as a store keeps it: neutral, `Codable`, and free of model types.
@_spi(AdapterKit) public struct StoreHistoryRecord: Codable, Sendable, Hashable {
    /// One change of the transaction.
    public struct Change: Codable, Sendable, Hashable {
        /// What happened to the model.
        public enum Kind: String, Codable, Sendable, Hashable {
            /// Inserted.
            case insert
            /// Changed.
            case update
            /// Deleted.
            case delete
        }

        /// What happened.
        public var kind: Kind
        /// The model, under its permanent identifier.
        public var id: PersistentIdentifier
        /// For an update: the names of the properties whose stored values changed.
        public var updatedProperties: [String]
        /// For a delete: the values of its `.preserveValueOnDeletion` attributes, by name.
        public var tombstone: [String: StoreValue]

        /// A change.
        public init(
            _ kind: Kind, _ id: PersistentIdentifier, updatedProperties: [String] = [],
            tombstone: [String: StoreValue] = [:]
        ) {
            self.kind = kind
            self.id = id
            self.updatedProperties = updatedProperties
            self.tombstone = tombstone
        }
    }

    /// The transaction's number in its store (its token).
    public var number: Int64
    /// When it was committed.
    public var timestamp: Date
    /// The saving context's author.
    public var author: String?
    /// Its changes.
    public var changes: [Change]

    /// A record.
    public init(number: Int64, timestamp: Date, author: String?, changes: [Change]) {
        self.number = number
        self.timestamp = timestamp
        self.author = author
        self.changes = changes
    }
}

extension StoreHistoryRecord.Change {
    /// A delete of the model whose last stored values are `snapshot`, with its tombstone: the values
    /// of its `.preserveValueOnDeletion` attributes.
    @_spi(AdapterKit) public static func deletion(of snapshot: DefaultSnapshot) -> Self {
        deletion(of: snapshot.persistentIdentifier, entity: snapshot.entity) { slot in
            slot < snapshot.values.count ? snapshot.values[slot] : nil
        }
    }

    /// A delete of a model of `entity`, with its tombstone read through `value` (the stored value at
    /// a slot, `nil` if there is none), which is called only for `.preserveValueOnDeletion` attributes.
    static func deletion(
        of id: PersistentIdentifier, entity: Schema.Entity, value: (Int) -> StoreValue?
    ) -> Self {
        var tombstone: [String: StoreValue] = [:]
        for attribute in entity.attributes where attribute.options.contains(.preserveValueOnDeletion) {
            if let stored = value(attribute.slot) { tombstone[attribute.name] = stored }
        }
        return Self(.delete, id, tombstone: tombstone)
    }

    /// An update of `before` to `after` naming the properties whose stored values differ (bit for
    /// bit, ``StoreValue/isIdentical(to:)``), or `nil` when none does. Without `before`, every property.
    @_spi(AdapterKit) public static func update(from before: DefaultSnapshot?, to after: DefaultSnapshot) -> Self? {
        var names: [String] = []
        for property in after.entity.properties {
            let slot = property.slot
            let new = slot < after.values.count ? after.values[slot] : .null
            if let before, slot < before.values.count, before.values[slot].isIdentical(to: new) { continue }
            names.append(property.name)
        }
        return names.isEmpty ? nil : Self(.update, after.persistentIdentifier, updatedProperties: names)
    }
}

extension SnapshotTable {
    /// The history changes of a prepared save, read against the table before the save is applied:
    /// inserts, updates that change a stored value, and deletes with their tombstones.
    @_spi(AdapterKit) public func historyChanges(of save: PreparedSave) -> [StoreHistoryRecord.Change] {
        var changes = save.inserted.map { StoreHistoryRecord.Change(.insert, $0.persistentIdentifier) }
        changes += historyChanges(updating: save.updated)
        changes += historyChanges(deleting: save.deleted)
        return changes
    }

    /// The history changes of storing these snapshots over the table's.
    @_spi(AdapterKit) public func historyChanges(updating snapshots: [DefaultSnapshot]) -> [StoreHistoryRecord.Change] {
        snapshots.compactMap { StoreHistoryRecord.Change.update(from: snapshot(for: $0.persistentIdentifier), to: $0) }
    }

    /// The history changes of deleting every model of an entity, in identifier order.
    @_spi(AdapterKit) public func historyChanges(deletingEveryModelOf entityName: String) -> [StoreHistoryRecord
        .Change]
    {
        guard let table = tables[entityName] else { return [] }
        var changes: [StoreHistoryRecord.Change] = []
        changes.reserveCapacity(table.count)
        for row in 0..<table.rowCount where table.isLive(row) {
            changes.append(.deletion(of: table.ids[row], entity: table.entity) { table.value($0, at: row) })
        }
        return changes
    }

    /// The history changes of deleting these models (those the table has).
    @_spi(AdapterKit) public func historyChanges(deleting identifiers: [PersistentIdentifier]) -> [StoreHistoryRecord
        .Change]
    {
        var table: EntityTable?
        return identifiers.compactMap { id in
            // One table look-up per run of an entity; tombstones read from the columns, no snapshot.
            if table?.entity.name != id.entityName { table = tables[id.entityName] }
            guard let table, let row = table.row(of: id) else { return nil }
            return StoreHistoryRecord.Change.deletion(of: id, entity: table.entity) { table.value($0, at: row) }
        }
    }
}
