import Foundation
import ModelStore

/// One transaction as a store keeps it: neutral, `Codable`, and free of model types.
public struct StoreHistoryRecord: Codable, Sendable, Hashable {
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
    public static func deletion(of snapshot: DefaultSnapshot) -> Self {
        deletion(of: snapshot.persistentIdentifier, entity: snapshot.entity) { slot in
            slot < snapshot.values.count ? snapshot.values[slot] : nil
        }
    }

    /// A delete of a model of `entity`, with its tombstone read through `value` (the stored value at
    /// a slot, `nil` if there is none), which is called only for `.preserveValueOnDeletion` attributes.
    static func deletion(
        of id: PersistentIdentifier, entity: Schema.Entity, value: (Int) -> StoreValue?
    ) -> Self {
        // One delete: read the attributes in place rather than build the list many deletes share.
        var tombstone: [String: StoreValue] = [:]
        for attribute in entity.attributes where attribute.options.contains(.preserveValueOnDeletion) {
            if let stored = value(attribute.slot) { tombstone[attribute.name] = stored }
        }
        return Self(.delete, id, tombstone: tombstone)
    }

    /// The slots and names of an entity's `.preserveValueOnDeletion` attributes: what a tombstone keeps.
    /// Found once for many deletes, so a delete does not walk the entity's attributes.
    static func tombstoneAttributes(of entity: Schema.Entity) -> [(slot: Int, name: String)] {
        entity.attributes.filter { $0.options.contains(.preserveValueOnDeletion) }.map { ($0.slot, $0.name) }
    }

    /// A delete whose tombstone keeps the values of `kept` (``tombstoneAttributes(of:)``), read through
    /// `value`.
    static func deletion(
        of id: PersistentIdentifier, keeping kept: [(slot: Int, name: String)], value: (Int) -> StoreValue?
    ) -> Self {
        var tombstone: [String: StoreValue] = [:]
        for (slot, name) in kept {
            if let stored = value(slot) { tombstone[name] = stored }
        }
        return Self(.delete, id, tombstone: tombstone)
    }

    /// An update of `before` to `after` naming the properties whose stored values differ (bit for
    /// bit, `StoreValue.isIdentical(to:)`), or `nil` when none does. Without `before`, every property.
    public static func update(from before: DefaultSnapshot?, to after: DefaultSnapshot) -> Self? {
        var names: [String] = []
        let properties = after.entity.propertyNames
        for slot in properties.indices {
            let new = slot < after.values.count ? after.values[slot] : .null
            if let before, slot < before.values.count, before.values[slot].isIdentical(to: new) { continue }
            names.append(properties[slot])
        }
        return names.isEmpty ? nil : Self(.update, after.persistentIdentifier, updatedProperties: names)
    }
}
