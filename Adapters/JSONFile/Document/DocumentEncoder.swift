import Foundation
import ModelStore
import ModelStoreAdapterKit

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
    /// Whether the header gets a `checksum`: every plaintext document has one; a document sealed
    /// with AES-256-GCM does not, since its tag already authenticates every byte (the CRC-32C would
    /// be a second pass over the document on every save and every open that proves nothing more).
    var checksum = true
    /// Whether records are written without the spaces that line them up for a reader (the
    /// indentation, and the space after each `:` and `,`), still one per line: for a sealed
    /// document, which no one reads or diffs, so that fewer bytes are encrypted, written and read.
    var compact = false

    /// The document for the snapshots of `table`; `capacity` is a hint (the size of the previous document).
    func encode(_ table: SnapshotTable, capacity: Int = 1 << 16) -> JSONOutput {
        let out = JSONOutput(capacity: capacity + capacity / 8)
        out.ascii("{\n  \"format\": ")
        out.string(JSONFileFormat.name)
        out.ascii(",\n  \"formatVersion\": ")
        out.int(Int64(JSONFileFormat.version))
        var checksumContents: Range<Int>?
        if checksum {
            out.ascii(",\n  \"checksum\": \"")
            let checksumStart = out.count
            out.bytes(DocumentChecksum.placeholder)
            checksumContents = checksumStart..<out.count
            out.byte(UInt8(ascii: "\""))
        }
        out.ascii(",\n  \"schemaVersion\": ")
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
        if let checksumContents { DocumentChecksum.fill(out.base, count: out.count, contents: checksumContents) }
        return out
    }

    private func writeRecords(of entity: Schema.Entity, in table: SnapshotTable, _ writer: ValueWriter) {
        let out = writer.out
        guard table.count(of: entity.name) > 0, let columns = table.storedColumns(of: entity.name) else {
            out.byte(UInt8(ascii: "]"))
            return
        }
        let slots = entity.properties.indices
        let shapes = entity.properties.map(ValueShape.init)
        // Each key once, as bytes (`, "name": `), all in one buffer that the row loop reads through one
        // pointer: reading `keys[slot]` or `strings[index][row]` from arrays of arrays retained and
        // released the inner array on every row.
        var keyBytes: [UInt8] = []
        // How each property is written: its key's place in `keyBytes`; straight from a typed column
        // when the column has one and the shape writes that kind in its natural form, else through
        // its stored value; and whether a typed column that may hold `nil` has it looked up first.
        var plans: [(key: Range<Int>, way: Way, checksNull: Bool)] = []
        var integers: [[Int64]] = []
        var doubles: [[Double]] = []
        var strings: [[String]] = []
        var booleans: [[Bool]] = []
        /// Adds `column` to `list` and returns the way that reads it there, or `nil` without a column.
        func typed<Value>(
            _ column: [Value]?, _ list: inout [[Value]], _ way: (Int) -> Way
        ) -> Way? {
            guard let column else { return nil }
            list.append(column)
            return way(list.count - 1)
        }
        for slot in slots {
            let key = JSONOutput(capacity: 64)
            key.ascii(compact ? "," : ", ")
            key.key(entity.properties[slot].name)
            if !compact { key.byte(UInt8(ascii: " ")) }
            let keyStart = keyBytes.count
            keyBytes += key.bytes
            let isExternal =
                if case .attribute(let attribute) = entity.properties[slot] {
                    attribute.options.contains(.externalStorage)
                } else { false }
            let way: Way? =
                switch shapes[slot] {
                case _ where isExternal: nil
                case .int: typed(columns.integers(slot), &integers, Way.integer)
                case .double: typed(columns.doubles(slot), &doubles, Way.double)
                case .date: typed(columns.dates(slot), &doubles, Way.double)
                case .string: typed(columns.strings(slot), &strings, Way.string)
                case .bool: typed(columns.booleans(slot), &booleans, Way.bool)
                default: nil
                }
            plans.append(
                (
                    keyStart..<keyBytes.count, way ?? (isExternal ? .external : .value),
                    way != nil && columns.mayHoldNull(slot)
                ))
        }
        keyBytes.withUnsafeBufferPointer { keyBytes in
            withBuffers(of: integers) { integers in
                withBuffers(of: doubles) { doubles in
                    withBuffers(of: strings) { strings in
                        withBuffers(of: booleans) { booleans in
                            var isFirst = true
                            let (firstRow, nextRow): (StaticString, StaticString) =
                                compact
                                ? ("\n{\"$id\":", ",\n{\"$id\":") : ("\n      {\"$id\": ", ",\n      {\"$id\": ")
                            // Once the first rows are written, room for the rest at their size: a document
                            // larger than the capacity hint (a first save of many rows) then grows once,
                            // not by doubling and copying.
                            let sampleEnd = Swift.min(columns.rowCount, 256)
                            let sampleStart = out.count
                            for row in 0..<columns.rowCount where columns.isLive(row) {
                                if row == sampleEnd {
                                    let rest = columns.rowCount - row
                                    let perRow = (out.count - sampleStart) / sampleEnd + 1
                                    out.reserveCapacity(out.count + rest * perRow + rest / 16 + 4_096)
                                }
                                out.ascii(isFirst ? firstRow : nextRow)
                                isFirst = false
                                writer.writePrimaryKey(columns.primaryKey(at: row))
                                for slot in slots {
                                    let plan = plans[slot]
                                    out.bytes(UnsafeBufferPointer(rebasing: keyBytes[plan.key]))
                                    if plan.checksNull, columns.isNull(slot, at: row) {
                                        out.ascii("null")
                                        continue
                                    }
                                    switch plan.way {
                                    case .integer(let index): out.int(integers[index][row])
                                    case .double(let index): writer.writeDouble(doubles[index][row])
                                    case .string(let index): out.string(strings[index][row])
                                    case .bool(let index): booleans[index][row] ? out.ascii("true") : out.ascii("false")
                                    case .value: writer.write(columns.value(slot, at: row), as: shapes[slot])
                                    case .external: writeExternal(columns, slot: slot, row: row, shapes[slot], writer)
                                    }
                                }
                                out.byte(UInt8(ascii: "}"))
                            }
                        }
                    }
                }
            }
        }
        out.ascii("\n    ]")
    }

    /// Writes an externally stored value: a reference to its file when it has one, else the value.
    private func writeExternal(
        _ columns: SnapshotTable.StoredColumns, slot: Int, row: Int, _ shape: ValueShape, _ writer: ValueWriter
    ) {
        let value = columns.value(slot, at: row)
        if case .data = value, let name = externalFiles[ExternalSlot(id: columns.identifier(at: row), slot: slot)] {
            writer.out.ascii("{\"$file\": ")
            writer.out.string(name)
            writer.out.byte(UInt8(ascii: "}"))
        } else {
            writer.write(value, as: shape)
        }
    }

    /// Calls `body` with a buffer over each array's elements, all valid during the call.
    private func withBuffers<Element>(of arrays: [[Element]], _ body: ([UnsafeBufferPointer<Element>]) -> Void) {
        var buffers: [UnsafeBufferPointer<Element>] = []
        buffers.reserveCapacity(arrays.count)
        func open(_ index: Int) {
            guard index < arrays.count else { return body(buffers) }
            arrays[index].withUnsafeBufferPointer { buffer in
                buffers.append(buffer)
                open(index + 1)
            }
        }
        open(0)
    }

    /// How a property's values are written: from the typed column at an index of its kind's list, or
    /// through the stored value (an externally stored one possibly as a file reference).
    private enum Way {
        case integer(Int)
        case double(Int)
        case string(Int)
        case bool(Int)
        case value
        case external
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
        if entity.classAttribute != nil {
            // A class hierarchy's entity: its classes, as `Schema.ClassDescription` values.
            let classes = entity.classes.map {
                Schema.ClassDescription(
                    name: $0.name, superclassName: $0.superclassName, ownPropertyNames: $0.ownPropertyNames,
                    isAbstract: $0.isAbstract ? true : nil)
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            if let data = try? encoder.encode(classes) {
                out.ascii(",\n      \"classes\": ")
                out.raw(String(decoding: data, as: UTF8.self))
            }
        }
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
