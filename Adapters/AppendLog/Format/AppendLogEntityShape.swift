import Foundation
import ModelStore

/// The shape of one entity as an append log records it: enough to read its records and draw
/// its schema without the app's model types.
///
/// Every log segment and checkpoint starts with the shapes of the schema it was written with, so
/// each file can be read on its own (by ``AppendLogStore/inspect(at:)``, by the `modelstore`
/// tool, and after the app's schema has changed).
public struct AppendLogEntityShape: Sendable, Hashable {
    /// The entity's name.
    public let name: String
    /// The stored properties, in the slot order the file's records use.
    public let properties: [Property]
    /// Sets of properties whose combined values are unique.
    public let uniquenessConstraints: [[String]]
    /// Sets of properties the entity declares indexes on.
    public let indices: [[String]]

    /// A stored property of an entity shape.
    public struct Property: Sendable, Hashable {
        /// The property's name.
        public let name: String
        /// The name the property had in an earlier schema version, if it was renamed.
        public let originalName: String?
        /// The property's type in Swift spelling, such as `String?`, `[Item]` or `Trip?`.
        public let typeName: String
        /// The attribute's options; empty for relationships.
        public let options: Schema.Attribute.Options
        /// The related entity, for a relationship; `nil` for an attribute.
        public let destination: String?
        /// Whether a relationship holds at most one model; `false` for attributes.
        public let isToOne: Bool
        /// The inverse relationship's name on the destination, if any.
        public let inverseName: String?
        /// What deleting a model does to related models, for a relationship.
        public let deleteRule: Schema.Relationship.DeleteRule?

        /// Whether this is a relationship rather than an attribute.
        public var isRelationship: Bool { destination != nil }
    }
}

extension AppendLogEntityShape {
    /// The shape of a schema entity.
    init(_ entity: Schema.Entity) {
        name = entity.name
        properties = entity.properties.map { property in
            switch property {
            case .attribute(let attribute):
                Property(
                    name: attribute.name, originalName: attribute.originalName,
                    typeName: attribute.valueType.description, options: attribute.options,
                    destination: nil, isToOne: false, inverseName: nil, deleteRule: nil)
            case .relationship(let relationship):
                Property(
                    name: relationship.name, originalName: relationship.originalName,
                    typeName: property.typeDescription, options: [],
                    destination: relationship.destination, isToOne: relationship.isToOne,
                    inverseName: relationship.inverseName, deleteRule: relationship.deleteRule)
            }
        }
        uniquenessConstraints = entity.uniquenessConstraints
        indices = entity.indices
    }

    func encode(into writer: inout ByteWriter) {
        writer.write(name)
        writer.writeVarint(properties.count)
        for property in properties {
            writer.write(property.name)
            writer.writeOptional(property.originalName)
            writer.write(property.typeName)
            writer.write(property.options.rawValue)
            writer.writeOptional(property.destination)
            writer.write(property.isToOne ? 1 as UInt8 : 0)
            writer.writeOptional(property.inverseName)
            writer.writeOptional(property.deleteRule?.rawValue)
        }
        for groups in [uniquenessConstraints, indices] {
            writer.writeVarint(groups.count)
            for group in groups {
                writer.writeVarint(group.count)
                for name in group { writer.write(name) }
            }
        }
    }

    static func decode(from reader: inout ByteReader) throws -> AppendLogEntityShape {
        let name = try reader.readString()
        let propertyCount = try reader.readCount(limit: 1 << 16)
        var properties: [Property] = []
        properties.reserveCapacity(propertyCount)
        for _ in 0..<propertyCount {
            let propertyName = try reader.readString()
            let originalName = try reader.readOptionalString()
            let typeName = try reader.readString()
            let options = Schema.Attribute.Options(rawValue: try reader.readByte())
            let destination = try reader.readOptionalString()
            let isToOne = try reader.readByte() != 0
            let inverseName = try reader.readOptionalString()
            let ruleName = try reader.readOptionalString()
            var deleteRule: Schema.Relationship.DeleteRule?
            if let ruleName {
                guard let rule = Schema.Relationship.DeleteRule(rawValue: ruleName) else {
                    throw reader.error("unknown delete rule '\(ruleName)'")
                }
                deleteRule = rule
            }
            properties.append(Property(
                name: propertyName, originalName: originalName, typeName: typeName, options: options, destination: destination,
                isToOne: isToOne, inverseName: inverseName, deleteRule: deleteRule))
        }
        var groups: [[[String]]] = []
        for _ in 0..<2 {
            let count = try reader.readCount(limit: 1 << 16)
            var list: [[String]] = []
            for _ in 0..<count {
                let size = try reader.readCount(limit: 1 << 16)
                var group: [String] = []
                for _ in 0..<size { group.append(try reader.readString()) }
                list.append(group)
            }
            groups.append(list)
        }
        return AppendLogEntityShape(
            name: name, properties: properties, uniquenessConstraints: groups[0], indices: groups[1])
    }
}

/// The entity shapes a file was written with, and the codes its records use for entity names.
struct ShapeTable: Sendable, Equatable {
    /// The shapes; an entity's code in records is its index here.
    let entities: [AppendLogEntityShape]
    /// The schema version the file was written with.
    let schemaVersion: Schema.Version
    private let codes: [String: Int]

    init(entities: [AppendLogEntityShape], schemaVersion: Schema.Version) {
        self.entities = entities
        self.schemaVersion = schemaVersion
        var codes: [String: Int] = [:]
        for (index, entity) in entities.enumerated() where codes[entity.name] == nil { codes[entity.name] = index }
        self.codes = codes
    }

    /// The shapes of a schema.
    init(schema: Schema) {
        self.init(entities: schema.entities.map(AppendLogEntityShape.init), schemaVersion: schema.version)
    }

    /// The code of an entity name, if the table has it.
    @inline(__always)
    func code(of entityName: String) -> Int? { codes[entityName] }

    static func == (lhs: ShapeTable, rhs: ShapeTable) -> Bool {
        lhs.entities == rhs.entities && lhs.schemaVersion == rhs.schemaVersion
    }

    func encode(into writer: inout ByteWriter) {
        writer.writeVarint(schemaVersion.major)
        writer.writeVarint(schemaVersion.minor)
        writer.writeVarint(schemaVersion.patch)
        writer.writeVarint(entities.count)
        for entity in entities { entity.encode(into: &writer) }
    }

    static func decode(from reader: inout ByteReader) throws -> ShapeTable {
        let major = try reader.readCount()
        let minor = try reader.readCount()
        let patch = try reader.readCount()
        let count = try reader.readCount(limit: 1 << 16)
        var entities: [AppendLogEntityShape] = []
        for _ in 0..<count { entities.append(try AppendLogEntityShape.decode(from: &reader)) }
        return ShapeTable(entities: entities, schemaVersion: Schema.Version(major, minor, patch))
    }
}
