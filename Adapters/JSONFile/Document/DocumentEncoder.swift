import Foundation
@_spi(AdapterKit) import ModelStore

/// Writes a whole document: the header, then every entity's records, one record per line.
struct DocumentEncoder {
    let schema: Schema
    let storeIdentifier: String
    let nextPrimaryKey: Int64
    /// Entities the schema doesn't have, written back as they were read.
    let preserved: [PreservedEntity]
    /// The file that holds each externally stored value.
    let externalFiles: [ExternalSlot: String]
    /// The `history` object, already encoded (see ``JSONFileHistory``), or `nil` for none.
    var history: [UInt8]? = nil

    /// The document for the snapshots of `table`; `capacity` is a hint (the size of the previous document).
    func encode(_ table: SnapshotTable, capacity: Int = 1 << 16) -> JSONOutput {
        let out = JSONOutput(capacity: capacity + capacity / 8)
        out.ascii("{\n  \"format\": ")
        out.string(JSONFileFormat.name)
        out.ascii(",\n  \"formatVersion\": ")
        out.int(Int64(JSONFileFormat.version))
        out.ascii(",\n  \"checksum\": \"")
        let checksumStart = out.count
        out.bytes(DocumentChecksum.placeholder)
        let checksum = checksumStart..<out.count
        out.ascii("\",\n  \"schemaVersion\": ")
        out.string(schema.version.description)
        out.ascii(",\n  \"storeIdentifier\": ")
        out.string(storeIdentifier)
        out.ascii(",\n  \"nextPrimaryKey\": ")
        out.int(nextPrimaryKey)
        out.ascii(",\n  \"entities\": [")
        var first = true
        for entity in schema.entities {
            out.ascii(first ? "\n    " : ",\n    ")
            first = false
            writeShape(of: entity, out)
        }
        for entity in preserved {
            guard let shape = entity.shape else { continue }
            out.ascii(first ? "\n    " : ",\n    ")
            first = false
            out.bytes(shape)
        }
        out.ascii(first ? "],\n  \"records\": {" : "\n  ],\n  \"records\": {")
        first = true
        let writer = ValueWriter(out: out, storeIdentifier: storeIdentifier)
        for entity in schema.entities {
            out.ascii(first ? "\n    " : ",\n    ")
            first = false
            out.key(entity.name)
            out.ascii(" [")
            writeRecords(of: entity, in: table, writer)
        }
        for entity in preserved {
            out.ascii(first ? "\n    " : ",\n    ")
            first = false
            out.key(entity.name)
            out.byte(UInt8(ascii: " "))
            out.bytes(entity.records)
        }
        out.ascii(first ? "}" : "\n  }")
        if let history {
            out.ascii(",\n  ")
            out.key(JSONFileHistory.key)
            out.byte(UInt8(ascii: " "))
            out.bytes(history)
        }
        out.ascii("\n}\n")
        DocumentChecksum.fill(out.base, count: out.count, contents: checksum)
        return out
    }

    private func writeRecords(of entity: Schema.Entity, in table: SnapshotTable, _ writer: ValueWriter) {
        let out = writer.out
        guard table.count(of: entity.name) > 0 else {
            out.byte(UInt8(ascii: "]"))
            return
        }
        let shapes = entity.properties.map(ValueShape.init)
        let isExternal = entity.properties.map { property in
            if case .attribute(let attribute) = property { return attribute.options.contains(.externalStorage) }
            return false
        }
        let hasExternal = isExternal.contains(true)
        // Each key once, as bytes: `, "name": `.
        let keys: [[UInt8]] = entity.properties.map { property in
            let key = JSONOutput(capacity: 64)
            key.ascii(", ")
            key.key(property.name)
            key.byte(UInt8(ascii: " "))
            return key.bytes
        }
        var isFirst = true
        table.forEachModel(of: entity.name) { id, values in
            out.ascii(isFirst ? "\n      {\"$id\": " : ",\n      {\"$id\": ")
            isFirst = false
            writer.writePrimaryKey(id.primaryKey)
            values.withUnsafeBufferPointer { values in
                for slot in 0..<values.count {
                    out.bytes(keys[slot])
                    if hasExternal, isExternal[slot], case .data = values[slot],
                        let name = externalFiles[ExternalSlot(id: id, slot: slot)]
                    {
                        out.ascii("{\"$file\": ")
                        out.string(name)
                        out.byte(UInt8(ascii: "}"))
                    } else {
                        writer.write(values[slot], as: shapes[slot])
                    }
                }
            }
            out.byte(UInt8(ascii: "}"))
        }
        out.ascii("\n    ]")
    }

    /// The entity as a ``Schema/EntityDescription`` (so tools can rebuild the schema from the file), with
    /// each property's Swift type spelled out for readers.
    private func writeShape(of entity: Schema.Entity, _ out: JSONOutput) {
        out.ascii("{\n      \"name\": ")
        out.string(entity.name)
        out.ascii(",\n      \"properties\": [")
        for (index, property) in entity.properties.enumerated() {
            out.ascii(index == 0 ? "\n        {\"name\": " : ",\n        {\"name\": ")
            out.string(property.name)
            out.ascii(", \"swiftType\": ")
            out.string(property.typeDescription)
            switch property {
            case .attribute(let attribute):
                out.ascii(", \"type\": ")
                out.raw(Self.typeJSON(attribute.valueType))
                out.ascii(", \"options\": ")
                writeNames(attribute.options.names, out)
                if let original = attribute.originalName {
                    out.ascii(", \"originalName\": ")
                    out.string(original)
                }
            case .relationship(let relationship):
                out.ascii(", \"options\": [], \"destination\": ")
                out.string(relationship.destination)
                out.ascii(relationship.isToOne ? ", \"isToOne\": true" : ", \"isToOne\": false")
                out.ascii(", \"deleteRule\": ")
                out.string(relationship.deleteRule.rawValue)
                if let inverse = relationship.inverseName {
                    out.ascii(", \"inverse\": ")
                    out.string(inverse)
                }
                out.ascii(", \"minimumModelCount\": ")
                out.int(Int64(relationship.minimumModelCount))
                out.ascii(", \"maximumModelCount\": ")
                out.int(Int64(relationship.maximumModelCount))
                if let original = relationship.originalName {
                    out.ascii(", \"originalName\": ")
                    out.string(original)
                }
            }
            out.byte(UInt8(ascii: "}"))
        }
        out.ascii(entity.properties.isEmpty ? "]" : "\n      ]")
        out.ascii(",\n      \"uniquenessConstraints\": ")
        writeNameLists(entity.uniquenessConstraints, out)
        out.ascii(",\n      \"indices\": ")
        writeNameLists(entity.indices, out)
        out.ascii("\n    }")
    }

    /// An attribute type in its `Codable` form, such as `{"bits":64,"signed":true,"type":"integer"}`.
    static func typeJSON(_ type: AttributeType) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(type) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    private func writeNames(_ names: [String], _ out: JSONOutput) {
        out.byte(UInt8(ascii: "["))
        for (position, name) in names.enumerated() {
            if position > 0 { out.ascii(", ") }
            out.string(name)
        }
        out.byte(UInt8(ascii: "]"))
    }

    private func writeNameLists(_ lists: [[String]], _ out: JSONOutput) {
        out.byte(UInt8(ascii: "["))
        for (index, names) in lists.enumerated() {
            if index > 0 { out.ascii(", ") }
            writeNames(names, out)
        }
        out.byte(UInt8(ascii: "]"))
    }
}
