import Foundation
import ModelStore

/// The schema a file was written with, and the codes its records use for entity names.
///
/// Every segment and checkpoint starts with the ``Schema/Description`` of the schema it was
/// written with, so each file can be read on its own: by tools without the app's model types
/// (`Schema(description)`), and after the app's schema has changed.
struct ShapeTable: Sendable, Equatable {
    /// The schema as data.
    let description: Schema.Description
    private let codes: [String: Int]

    init(description: Schema.Description) {
        self.description = description
        var codes: [String: Int] = [:]
        for (index, entity) in description.entities.enumerated() where codes[entity.name] == nil {
            codes[entity.name] = index
        }
        self.codes = codes
    }

    /// The shapes of a schema.
    init(schema: Schema) { self.init(description: schema.storedDescription) }

    /// The entities; an entity's code in records is its index here.
    var entities: [Schema.EntityDescription] { description.entities }

    /// The schema version the file was written with.
    var schemaVersion: Schema.Version { description.version }

    /// The code of an entity name, if the table has it.
    @inline(__always)
    func code(of entityName: String) -> Int? { codes[entityName] }

    static func == (lhs: ShapeTable, rhs: ShapeTable) -> Bool { lhs.description == rhs.description }

    /// Appends the description as length-prefixed JSON (headers are read once per file, so
    /// Foundation's coder is fast enough, and the text stays readable in a hex dump).
    func encode(into writer: inout ByteWriter) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            writer.write(try encoder.encode(description))
        } catch {
            throw DataStoreError(
                .invalidSchema, "the schema cannot be described for the log's header", underlyingError: error)
        }
    }

    static func decode(from reader: inout ByteReader) throws -> ShapeTable {
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
    var isRelationship: Bool { destination != nil }

    /// The value a model takes for this property when a file does not store it.
    var emptyValue: StoreValue {
        if let type { return type.zeroValue }
        return isToOne == false ? .references([]) : .null
    }
}
