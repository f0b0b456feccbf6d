import Foundation

/// A model's stored state, as a store keeps it and a context reads it.
///
/// SwiftData lets each store choose its snapshot type; ModelStore does too, but the context
/// speaks ``DefaultSnapshot``, and a store's own type converts to and from it.
public protocol DataStoreSnapshot: Codable, Sendable {
    /// The identifier of the model this snapshot describes.
    var persistentIdentifier: PersistentIdentifier { get }

    /// The same state under another identifier, with references rewritten through `remappedIdentifiers`.
    ///
    /// Stores call this on save to replace temporary identifiers with permanent ones. The copy
    /// MUST rewrite every to-one and to-many reference found in `remappedIdentifiers`.
    func copy(
        persistentIdentifier: PersistentIdentifier, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]?
    ) -> Self

    /// The snapshot in the store's form, from the context's form.
    init(_ snapshot: DefaultSnapshot)

    /// The snapshot in the context's form.
    var defaultSnapshot: DefaultSnapshot { get }
}

/// A model's stored values, in its entity's property order, with typed read access by name.
///
/// ```swift
/// let name: String = try snapshot.value(of: "name")
/// if case .reference(let tripID)? = snapshot["trip"] { … }
/// ```
///
/// Adapters can index and filter these snapshots directly, with no snapshot type of their own.
/// A to-one relationship is held as ``StoreValue/reference(_:)`` (or ``StoreValue/null``) and a
/// to-many one as ``StoreValue/references(_:)``.
public struct DefaultSnapshot: DataStoreSnapshot, Hashable {
    /// The identifier of the model.
    public var persistentIdentifier: PersistentIdentifier
    /// The entity the snapshot belongs to.
    public let entity: Schema.Entity
    /// The values, indexed by ``Schema/Property/slot``.
    public var values: [StoreValue]

    /// A snapshot with values in the entity's slot order.
    ///
    /// - Precondition: `values.count == entity.properties.count`.
    public init(persistentIdentifier: PersistentIdentifier, entity: Schema.Entity, values: [StoreValue]) {
        precondition(
            values.count == entity.properties.count,
            "a '\(entity.name)' snapshot needs \(entity.properties.count) values, not \(values.count)")
        self.persistentIdentifier = persistentIdentifier
        self.entity = entity
        self.values = values
    }

    /// A snapshot from values by property name; properties not named take their default value.
    ///
    /// Throws ``DataStoreError/invalidValue`` naming any name that is not a stored property of the entity.
    public init(persistentIdentifier: PersistentIdentifier, entity: Schema.Entity, namedValues: [String: StoreValue])
        throws
    {
        var values = entity.properties.map(\.initialValue)
        for (name, value) in namedValues {
            guard let slot = entity.slot(of: name) else {
                throw DataStoreError(
                    .invalidValue, "'\(name)' is not a stored property of '\(entity.name)'",
                    remedy: "Use one of: \(entity.properties.map { "'\($0.name)'" }.joined(separator: ", "))",
                    entityName: entity.name)
            }
            values[slot] = value
        }
        self.init(persistentIdentifier: persistentIdentifier, entity: entity, values: values)
    }

    /// The stored value of the property with this name, or `nil` if the entity has no such property.
    public subscript(name: String) -> StoreValue? {
        get { entity.slot(of: name).map { values[$0] } }
        set {
            guard let slot = entity.slot(of: name) else { return }
            values[slot] = newValue ?? .null
        }
    }

    /// The value of a property as a Swift type.
    ///
    /// Throws ``DataStoreError/notFound`` if the entity has no such property and
    /// ``DataStoreError/invalidValue`` if the stored value does not convert to `Value`.
    public func value<Value>(of name: String, as type: Value.Type = Value.self) throws -> Value {
        guard let slot = entity.slot(of: name) else {
            throw DataStoreError(
                .notFound, "'\(entity.name)' has no stored property '\(name)'", entityName: entity.name)
        }
        guard let codec = ValueCodecs.codec(for: type) else {
            throw DataStoreError(.invalidValue, "'\(Value.self)' is not a storable type", entityName: entity.name)
        }
        do {
            return try codec.decode(values[slot])
        } catch var error as DataStoreError {
            error.message = "'\(entity.name).\(name)': \(error.message)"
            throw error
        }
    }

    /// A snapshot is already in the context's form.
    public init(_ snapshot: DefaultSnapshot) { self = snapshot }

    /// The snapshot itself.
    public var defaultSnapshot: DefaultSnapshot { self }

    /// The snapshot under another identifier, with references rewritten.
    public func copy(
        persistentIdentifier: PersistentIdentifier, remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier]?
    ) -> DefaultSnapshot {
        var copy = self
        copy.persistentIdentifier = persistentIdentifier
        guard let remappedIdentifiers, !remappedIdentifiers.isEmpty else { return copy }
        for relationship in entity.relationships {
            switch copy.values[relationship.slot] {
            case .reference(let id):
                if let mapped = remappedIdentifiers[id] { copy.values[relationship.slot] = .reference(mapped) }
            case .references(let ids):
                if ids.contains(where: { remappedIdentifiers[$0] != nil }) {
                    copy.values[relationship.slot] = .references(ids.map { remappedIdentifiers[$0] ?? $0 })
                }
            default:
                break
            }
        }
        return copy
    }

    /// Removes references to these identifiers from the snapshot's relationships, in place (a
    /// save calls it on every snapshot it writes, so no copy is made when there is nothing to do).
    mutating func removeReferences(to identifiers: Set<PersistentIdentifier>) {
        guard !identifiers.isEmpty else { return }
        for relationship in entity.relationships {
            switch values[relationship.slot] {
            case .reference(let id) where identifiers.contains(id):
                values[relationship.slot] = .null
            case .references(let ids) where ids.contains(where: identifiers.contains):
                values[relationship.slot] = .references(ids.filter { !identifiers.contains($0) })
            default:
                break
            }
        }
    }

    /// Snapshots are equal when their identifiers, entities and values are.
    public static func == (lhs: DefaultSnapshot, rhs: DefaultSnapshot) -> Bool {
        lhs.persistentIdentifier == rhs.persistentIdentifier && lhs.entity.name == rhs.entity.name
            && lhs.values == rhs.values
    }

    /// Hashes the identifier.
    public func hash(into hasher: inout Hasher) { hasher.combine(persistentIdentifier) }

    private enum CodingKeys: String, CodingKey { case id, entity, values }

    /// Encodes the identifier, the entity name, and the values by property name.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(persistentIdentifier, forKey: .id)
        try container.encode(entity.name, forKey: .entity)
        var named: [String: StoreValue] = [:]
        for property in entity.properties { named[property.name] = values[property.slot] }
        try container.encode(named, forKey: .values)
    }

    /// Decodes a snapshot; the decoder's `userInfo[.modelStoreSchema]` must hold the ``Schema``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let schema = decoder.userInfo[.modelStoreSchema] as? Schema else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "decoding a DefaultSnapshot needs the Schema in userInfo[.modelStoreSchema]"))
        }
        let entityName = try container.decode(String.self, forKey: .entity)
        guard let entity = schema.entity(named: entityName) else {
            throw DecodingError.dataCorruptedError(
                forKey: .entity, in: container, debugDescription: "the schema has no entity '\(entityName)'")
        }
        let id = try container.decode(PersistentIdentifier.self, forKey: .id)
        let named = try container.decode([String: StoreValue].self, forKey: .values)
        do {
            try self.init(persistentIdentifier: id, entity: entity, namedValues: named)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .values, in: container, debugDescription: "\(error)")
        }
    }
}

extension CodingUserInfoKey {
    /// The key under which a decoder's `userInfo` holds the ``Schema`` that ``DefaultSnapshot`` decodes against.
    public static let modelStoreSchema = CodingUserInfoKey(rawValue: "ModelStore.schema")!
}
