import Foundation
import ModelStore
import ModelStoreAdapterKit

/// One save, as one log record: what it inserted, what it changed and what it deleted.
struct TransactionRecord: Sendable {
    /// The record kind byte of a transaction.
    static let kind: UInt8 = 1

    /// The transaction's number: 1 for the store's first save, then one more per save.
    var number: UInt64
    /// When the save happened.
    var timestamp: Date
    /// The author of the saving context (``EditingState/author``).
    var author: String?
    /// Inserted models with all their values.
    var inserted: [StoredRow]
    /// Updated models with only the values that changed.
    var updated: [StoredChange]
    /// Deleted models with the values of their `.preserveValueOnDeletion` attributes.
    var deleted: [StoredChange]

    /// Whether the record changes nothing.
    var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }

    /// Appends the framed record to `writer`.
    func encode(into writer: inout ByteWriter, context: IdentifierContext) throws {
        let start = Self.begin(&writer, number: number, timestamp: timestamp, author: author)
        writer.writeVarint(inserted.count)
        for row in inserted { row.encode(into: &writer, context: context) }
        // Through buffers, so no change is copied (its identifier and values retained) to be written.
        for changes in [updated, deleted] {
            writer.writeVarint(changes.count)
            changes.withUnsafeBufferPointer { changes in
                for index in changes.indices {
                    writer.write(changes[index].id, code: changes[index].code, in: context)
                    writer.writeVarint(changes[index].values.count)
                    for (slot, value) in changes[index].values {
                        writer.writeVarint(slot)
                        writer.write(value, in: context)
                    }
                }
            }
        }
        try Frame.finish(&writer, at: start)
    }

    /// Appends the framed record of a save that only deletes `identifiers`, none of them keeping
    /// values (no tombstones): the bytes ``encode(into:context:)`` writes for that record, without a
    /// ``StoredChange`` built, and its identifier copied, per model. `code` is the entity's code in
    /// `context`'s shape table, as ``StoredChange/code`` is.
    static func encodeDeletion(
        number: UInt64, timestamp: Date, author: String?, of identifiers: PersistentIdentifiers, code: Int?,
        into writer: inout ByteWriter, context: IdentifierContext
    ) throws {
        let start = begin(&writer, number: number, timestamp: timestamp, author: author)
        writer.writeVarint(0)  // inserted
        writer.writeVarint(0)  // updated
        writer.writeVarint(identifiers.count)
        for id in identifiers {
            writer.write(id, code: code, in: context)
            writer.writeVarint(0)  // no values
        }
        try Frame.finish(&writer, at: start)
    }

    /// Appends the framed record of a save that only inserts `identifiers`: the bytes
    /// ``encode(into:context:)`` writes for that record, with each model's values read by `values`
    /// as it is written, so no ``StoredRow`` is built and the rows are never all in memory at once.
    static func encodeInsertion(
        number: UInt64, timestamp: Date, author: String?, of identifiers: PersistentIdentifiers,
        into writer: inout ByteWriter, context: IdentifierContext, values: (PersistentIdentifier) -> [StoreValue]
    ) throws {
        let start = begin(&writer, number: number, timestamp: timestamp, author: author)
        writer.writeVarint(identifiers.count)
        var entityName = ""
        var code: Int?
        for id in identifiers {
            if id.entityName != entityName {
                entityName = id.entityName
                code = context.shapes.code(of: entityName)
            }
            let row = values(id)
            writer.write(id, code: code, in: context)
            writer.writeVarint(row.count)
            for value in row { writer.write(value, in: context) }
        }
        writer.writeVarint(0)  // updated
        writer.writeVarint(0)  // deleted
        try Frame.finish(&writer, at: start)
    }

    /// Begins a record's frame and writes the header every record starts with: the kind, the
    /// number, the time and the author. Returns the frame's start, for `Frame.finish`.
    private static func begin(_ writer: inout ByteWriter, number: UInt64, timestamp: Date, author: String?) -> Int {
        let start = Frame.begin(&writer)
        writer.write(kind)
        writer.writeVarint(number)
        writer.write(timestamp.timeIntervalSinceReferenceDate)
        writer.writeOptional(author)
        return start
    }

    /// Decodes a record's payload.
    static func decode(_ payload: UnsafeRawBufferPointer, context: IdentifierContext) throws -> TransactionRecord {
        var reader = ByteReader(payload)
        let kind = try reader.readByte()
        guard kind == Self.kind else { throw reader.error("unknown record kind \(kind)") }
        let number = try reader.readVarint()
        let timestamp = Date(timeIntervalSinceReferenceDate: try reader.readDouble())
        let author = try reader.readOptionalString()
        let insertCount = try reader.readCount(limit: reader.remaining)
        var inserted: [StoredRow] = []
        inserted.reserveCapacity(insertCount)
        for _ in 0..<insertCount { inserted.append(try StoredRow.decode(from: &reader, context: context)) }
        var lists: [[StoredChange]] = []
        for _ in 0..<2 {
            let count = try reader.readCount(limit: reader.remaining)
            var list: [StoredChange] = []
            list.reserveCapacity(count)
            for _ in 0..<count {
                let (code, id) = try reader.readIdentifier(in: context)
                let valueCount = try reader.readCount(limit: reader.remaining)
                var values: [(slot: Int, value: StoreValue)] = []
                values.reserveCapacity(valueCount)
                for _ in 0..<valueCount {
                    let slot = try reader.readCount()
                    values.append((slot, try reader.readValue(in: context)))
                }
                list.append(StoredChange(code: code, id: id, values: values))
            }
            lists.append(list)
        }
        guard reader.isAtEnd else { throw reader.error("\(reader.remaining) bytes follow the end of the record") }
        return TransactionRecord(
            number: number, timestamp: timestamp, author: author, inserted: inserted, updated: lists[0],
            deleted: lists[1])
    }
}
