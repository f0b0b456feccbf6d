import Foundation
import ModelStore

/// Reads rows written with a shape table as snapshots of the schema the store is opened with: the
/// lightweight migration of a store that keeps records.
///
/// Properties are matched by name (or by the current property's `originalName`); a property the
/// records lack takes its default value, and one the schema no longer has is dropped. When the
/// shapes are the schema's own, rows are used as they are.
public struct SchemaMapping: Sendable {
    private struct EntityMap: Sendable {
        let entity: Schema.Entity?
        /// The current slot of each stored slot (`-1`: dropped), or `nil` when the slots are the same.
        let slots: [Int]?
        let storedCount: Int
        let defaults: [StoreValue]
    }

    private let maps: [EntityMap]
    private let schema: Schema
    private let storeName: String

    /// The mapping from records written with `shapes` to snapshots of `schema`; errors name the
    /// store as `storeName` ("the append log").
    public init(shapes: ShapeTable, schema: Schema, storeName: String = "the store") {
        self.schema = schema
        self.storeName = storeName
        maps = shapes.entities.map { shape in
            guard let entity = schema.entity(named: shape.name) else {
                return EntityMap(entity: nil, slots: nil, storedCount: shape.properties.count, defaults: [])
            }
            let identical =
                shape.properties.count == entity.properties.count
                && zip(shape.properties, entity.properties).allSatisfy { stored, current in
                    stored.name == current.name && stored.isRelationship == Self.isRelationship(current)
                }
            if identical {
                return EntityMap(entity: entity, slots: nil, storedCount: shape.properties.count, defaults: [])
            }
            let slots = shape.properties.map { stored -> Int in
                let match = entity.properties.first { current in
                    Self.isRelationship(current) == stored.isRelationship
                        && (current.name == stored.name || Self.originalName(of: current) == stored.name)
                }
                return match?.slot ?? -1
            }
            return EntityMap(
                entity: entity, slots: slots, storedCount: shape.properties.count, defaults: Self.defaults(of: entity))
        }
    }

    private static func isRelationship(_ property: Schema.Property) -> Bool {
        if case .relationship = property { return true }
        return false
    }

    private static func originalName(of property: Schema.Property) -> String? {
        switch property {
        case .attribute(let attribute): attribute.originalName
        case .relationship(let relationship): relationship.originalName
        }
    }

    private static func defaults(of entity: Schema.Entity) -> [StoreValue] {
        entity.properties.map { property in
            switch property {
            case .attribute(let attribute): attribute.defaultValue
            case .relationship(let relationship): relationship.isToOne ? .null : .references([])
            }
        }
    }

    private func map(code: Int?, id: PersistentIdentifier) throws -> EntityMap {
        guard let code, code < maps.count, maps[code].entity != nil else {
            throw DataStoreError(
                .invalidSchema,
                "\(storeName) holds '\(id.entityName)' models, but the schema it is opened with has no entity "
                    + "'\(id.entityName)'",
                remedy:
                    "Add the '\(id.entityName)' model type to the container, or migrate the store to a schema "
                    + "without it",
                entityName: id.entityName)
        }
        return maps[code]
    }

    /// The snapshot a stored row describes in the current schema.
    ///
    /// Throws ``ReplayProblem`` when the row's value count does not fit its shape, and
    /// `DataStoreError` (`.invalidSchema`) when the schema has no entity for it.
    public func snapshot(_ row: StoredRow) throws -> DefaultSnapshot {
        let map = try map(code: row.code, id: row.id)
        guard row.values.count == map.storedCount else {
            throw ReplayProblem(
                reason:
                    "stores \(row.values.count) values for a '\(row.id.entityName)', whose shape has \(map.storedCount)"
            )
        }
        guard let slots = map.slots else {
            return DefaultSnapshot(persistentIdentifier: row.id, entity: map.entity!, values: row.values)
        }
        var values = map.defaults
        for (stored, slot) in slots.enumerated() where slot >= 0 { values[slot] = row.values[stored] }
        return DefaultSnapshot(persistentIdentifier: row.id, entity: map.entity!, values: values)
    }

    /// The changes of a stored update or tombstone, by current slot; values of dropped properties are left out.
    ///
    /// Throws ``ReplayProblem`` for a slot the shape lacks, and `DataStoreError` (`.invalidSchema`)
    /// when the schema has no entity for it.
    public func changes(_ change: StoredChange) throws -> [(slot: Int, value: StoreValue)] {
        let map = try map(code: change.code, id: change.id)
        var result: [(slot: Int, value: StoreValue)] = []
        result.reserveCapacity(change.values.count)
        for (slot, value) in change.values {
            guard slot < map.storedCount else {
                throw ReplayProblem(
                    reason: "changes slot \(slot) of a '\(change.id.entityName)', whose shape has \(map.storedCount)")
            }
            if let slots = map.slots {
                if slots[slot] >= 0 { result.append((slots[slot], value)) }
            } else {
                result.append((slot, value))
            }
        }
        return result
    }
}
