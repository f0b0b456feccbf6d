import Foundation
import ModelStore

/// The schema records were written with, and the codes they use for entity names.
///
/// A store that keeps records writes its shape table beside them (the append log starts every
/// segment and checkpoint with one), so the records can be read on their own: by tools without
/// the app's model types (`Schema(description)`), and, through ``SchemaMapping``, after the app's
/// schema has changed.
public struct ShapeTable: Sendable, Equatable {
    /// The schema as data.
    public let description: Schema.Description
    @usableFromInline let codes: [String: Int]

    /// The table of a schema description: an entity's code is its index in the description.
    public init(description: Schema.Description) {
        self.description = description
        var codes: [String: Int] = [:]
        for (index, entity) in description.entities.enumerated() where codes[entity.name] == nil {
            codes[entity.name] = index
        }
        self.codes = codes
    }

    /// The shapes of a schema.
    public init(schema: Schema) { self.init(description: schema.storedDescription) }

    /// The entities; an entity's code in records is its index here.
    public var entities: [Schema.EntityDescription] { description.entities }

    /// The schema version the records were written with.
    public var schemaVersion: Schema.Version { description.version }

    /// The code of an entity name, if the table has it.
    @inlinable @inline(__always)
    public func code(of entityName: String) -> Int? { codes[entityName] }

    /// Whether two tables describe the same schema (the codes follow from the description).
    public static func == (lhs: ShapeTable, rhs: ShapeTable) -> Bool { lhs.description == rhs.description }

    /// Appends the description as length-prefixed JSON (headers are read once per file, so
    /// Foundation's coder is fast enough, and the text stays readable in a hex dump).
    public func encode(into writer: inout ByteWriter) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            writer.write(try encoder.encode(description))
        } catch {
            throw DataStoreError(
                .invalidSchema, "the schema cannot be described for the records' shape table", underlyingError: error)
        }
    }

    /// Reads a table written by ``encode(into:)``.
    public static func decode(from reader: inout ByteReader) throws -> ShapeTable {
        let json = try reader.readData()
        do {
            return ShapeTable(description: try JSONDecoder().decode(Schema.Description.self, from: json))
        } catch {
            throw reader.error("the schema description does not decode")
        }
    }
}

extension Schema.PropertyDescription {
    /// Whether this is a relationship rather than an attribute.
    public var isRelationship: Bool { destination != nil }

    /// The value a model takes for this property when its records do not store it.
    public var emptyValue: StoreValue {
        if let type { return type.zeroValue }
        return isToOne == false ? .references([]) : .null
    }
}
