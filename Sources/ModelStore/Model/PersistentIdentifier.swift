import Foundation
import Synchronization

/// The identity of a model: which store holds it, which entity it belongs to, and its key there.
///
/// Identifiers are values: `Sendable`, `Hashable`, `Comparable` and `Codable`, so they cross
/// actors and processes freely. A model inserted into a context gets a *temporary* identifier
/// (``isTemporary`` is `true`); the store mints a permanent one on save and the context remaps
/// every reference.
///
/// Unlike SwiftData, the primary key is public, so an adapter can index by it and a tool can
/// print it.
public struct PersistentIdentifier: Hashable, Comparable, Codable, Sendable {
    /// The store and entity of this identifier, shared by every identifier of them (see ``Scope``).
    public let scope: Scope
    /// The key of the model within its entity and store.
    public let primaryKey: PrimaryKey

    /// The ``DataStore/identifier`` of the store that minted this identifier, or `nil` while it is temporary.
    @inlinable public var storeIdentifier: String? { scope.storeIdentifier }
    /// The name of the entity (the model type's name, see ``Schema/entityName(for:)``).
    @inlinable public var entityName: String { scope.entityName }

    /// Whether a store has yet to mint a permanent identifier for this model.
    @inlinable public var isTemporary: Bool { scope.isTemporary }

    @usableFromInline
    init(scope: Scope, primaryKey: PrimaryKey) {
        self.scope = scope
        self.primaryKey = primaryKey
    }

    @usableFromInline
    init(storeIdentifier: String?, entityName: String, primaryKey: PrimaryKey) {
        self.init(scope: Scope(storeIdentifier: storeIdentifier, entityName: entityName), primaryKey: primaryKey)
    }

    /// Mints a permanent identifier: what a store calls when it assigns a key to a new model.
    ///
    /// - Parameters:
    ///   - storeIdentifier: the minting store's ``DataStore/identifier``.
    ///   - entityName: the model's entity name.
    ///   - primaryKey: the model's key, unique within the entity in that store.
    @inlinable
    public static func identifier(for storeIdentifier: String, entityName: String, primaryKey: Int64) -> Self {
        PersistentIdentifier(storeIdentifier: storeIdentifier, entityName: entityName, primaryKey: .int(primaryKey))
    }

    /// Mints a permanent identifier with a string key (for stores whose keys are text, such as UUIDs).
    @inlinable
    public static func identifier(for storeIdentifier: String, entityName: String, primaryKey: String) -> Self {
        PersistentIdentifier(storeIdentifier: storeIdentifier, entityName: entityName, primaryKey: .string(primaryKey))
    }

    /// Mints a permanent identifier whose key is a UUID (stored as its string).
    public static func identifier(for storeIdentifier: String, entityName: String, primaryKey: UUID) -> Self {
        identifier(for: storeIdentifier, entityName: entityName, primaryKey: primaryKey.uuidString)
    }

    /// Mints a permanent identifier from any key that prints losslessly, such as `UUID` or `Int`.
    public static func identifier<Key: LosslessStringConvertible & Hashable>(
        for storeIdentifier: String, entityName: String, primaryKey: Key
    ) -> Self {
        if let int = primaryKey as? Int {
            return identifier(for: storeIdentifier, entityName: entityName, primaryKey: Int64(int))
        }
        if let int = primaryKey as? Int64 {
            return identifier(for: storeIdentifier, entityName: entityName, primaryKey: int)
        }
        return identifier(for: storeIdentifier, entityName: entityName, primaryKey: primaryKey.description)
    }

    private static let temporaryCounter = Atomic<Int64>(0)

    /// Mints a temporary identifier, unique in this process, for a model that has not been saved yet.
    public static func temporary(entityName: String) -> Self {
        let key = temporaryCounter.add(1, ordering: .relaxed).newValue
        return PersistentIdentifier(scope: Scope(storeIdentifier: nil, entityName: entityName), primaryKey: .int(key))
    }

    /// The same model under another store identifier and key (used when converting between stores).
    public func rekeyed(storeIdentifier: String, primaryKey: PrimaryKey) -> Self {
        PersistentIdentifier(storeIdentifier: storeIdentifier, entityName: entityName, primaryKey: primaryKey)
    }

    /// Identifiers are equal when their keys, entities and stores are (keys compared first: they
    /// differ most often; the entity and store are one comparison of their shared ``scope``).
    @inlinable
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.primaryKey == rhs.primaryKey && lhs.scope == rhs.scope
    }

    /// Hashes the key alone: keys are unique within a store, so the entity and store names would
    /// add hashing work without telling identifiers apart.
    @inlinable
    public func hash(into hasher: inout Hasher) {
        switch primaryKey {
        case .int(let value): hasher.combine(value)
        case .string(let value): hasher.combine(value)
        }
    }

    /// Orders identifiers by entity, then store, then key (integer keys numerically).
    public static func < (lhs: Self, rhs: Self) -> Bool {
        if lhs.scope == rhs.scope { return lhs.primaryKey < rhs.primaryKey }
        if lhs.entityName != rhs.entityName { return lhs.entityName < rhs.entityName }
        if lhs.storeIdentifier != rhs.storeIdentifier {
            return (lhs.storeIdentifier ?? "") < (rhs.storeIdentifier ?? "")
        }
        return lhs.primaryKey < rhs.primaryKey
    }
}

extension PersistentIdentifier {
    private enum CodingKeys: String, CodingKey {
        case storeIdentifier, entityName, primaryKey
    }

    /// Decodes `storeIdentifier` (absent for a temporary identifier), `entityName` and `primaryKey`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            storeIdentifier: try container.decodeIfPresent(String.self, forKey: .storeIdentifier),
            entityName: try container.decode(String.self, forKey: .entityName),
            primaryKey: try container.decode(PrimaryKey.self, forKey: .primaryKey))
    }

    /// Encodes `storeIdentifier` (left out while temporary), `entityName` and `primaryKey`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(storeIdentifier, forKey: .storeIdentifier)
        try container.encode(entityName, forKey: .entityName)
        try container.encode(primaryKey, forKey: .primaryKey)
    }
}

extension PersistentIdentifier: CustomStringConvertible {
    /// `Entity(store:key)`, or `Entity(temporary:key)` before the first save.
    public var description: String {
        "\(entityName)(\(storeIdentifier ?? "temporary"):\(primaryKey))"
    }
}

/// The key of a model within its entity and store: an integer or a string.
public enum PrimaryKey: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
    /// An integer key, as minted by the stores that ship with ModelStore.
    case int(Int64)
    /// A string key, for stores with textual keys.
    case string(String)

    /// The key as text: the integer in decimal, or the string itself.
    public var description: String {
        switch self {
        case .int(let v): String(v)
        case .string(let v): v
        }
    }

    /// The integer key, if this is one.
    public var intValue: Int64? {
        if case .int(let v) = self { return v }
        return nil
    }

    /// Integer keys order numerically and before string keys.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.int(let a), .int(let b)): a < b
        case (.string(let a), .string(let b)): a < b
        case (.int, .string): true
        case (.string, .int): false
        }
    }

    /// Decodes an integer key from a number and a string key from a string.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let int = try? container.decode(Int64.self) {
            self = .int(int)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    /// Encodes an integer key as a number and a string key as a string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .int(let v): try container.encode(v)
        case .string(let v): try container.encode(v)
        }
    }
}
