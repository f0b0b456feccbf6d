import Foundation
import ModelStore

/// A model's values as records store them, in the slot order of the records' shape table.
///
/// ``SchemaMapping`` turns a row of any earlier shape into a snapshot of the current schema.
public struct StoredRow: Sendable {
    /// The entity's code in the records' shape table, or `nil` for an entity the table lacks. The
    /// identifier is written with this code, not looked up again, so it must be the code in the
    /// shape table of the context the row is encoded with.
    public var code: Int?
    /// The model.
    public var id: PersistentIdentifier
    /// The values, one per property of the records' shape of the entity.
    public var values: [StoreValue]

    /// A row of the model `id`, whose entity has `code` in the shape table, holding `values`.
    @inlinable
    public init(code: Int?, id: PersistentIdentifier, values: [StoreValue]) {
        self.code = code
        self.id = id
        self.values = values
    }

    /// Appends the identifier, the value count and the values.
    public func encode(into writer: inout ByteWriter, context: IdentifierContext) {
        writer.write(id, code: code, in: context)
        writer.writeVarint(values.count)
        for value in values { writer.write(value, in: context) }
    }

    /// Appends a snapshot in the same form as ``encode(into:context:)``, without building a row.
    public static func encode(_ snapshot: DefaultSnapshot, into writer: inout ByteWriter, context: IdentifierContext) {
        writer.write(snapshot.persistentIdentifier, in: context)
        writer.writeVarint(snapshot.values.count)
        for value in snapshot.values { writer.write(value, in: context) }
    }

    /// Reads a row written by ``encode(into:context:)``.
    public static func decode(from reader: inout ByteReader, context: IdentifierContext) throws -> StoredRow {
        let (code, id) = try reader.readIdentifier(in: context)
        let count = try reader.readCount(limit: reader.remaining)
        var values: [StoreValue] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try reader.readValue(in: context)) }
        return StoredRow(code: code, id: id, values: values)
    }
}

/// Some values of a model, by slot of the records' shape table: the changes of an update, or the
/// values a deleted model's tombstone keeps.
public struct StoredChange: Sendable {
    /// The entity's code in the records' shape table, or `nil` for an entity the table lacks. The
    /// identifier is written with this code, not looked up again, so it must be the code in the
    /// shape table of the context the change is encoded with.
    public var code: Int?
    /// The model.
    public var id: PersistentIdentifier
    /// `(slot, value)` pairs in slot order.
    public var values: [(slot: Int, value: StoreValue)]

    /// The change of the model `id`, whose entity has `code` in the shape table, to `values`.
    @inlinable
    public init(code: Int?, id: PersistentIdentifier, values: [(slot: Int, value: StoreValue)]) {
        self.code = code
        self.id = id
        self.values = values
    }
}

/// Why records that decode cannot be applied: a row whose value count does not fit its entity's
/// shape, a change of a slot the shape lacks, an insert of a model that exists already.
///
/// An adapter reports it as damage of the record it was applying.
public struct ReplayProblem: Error {
    /// What is wrong.
    public var reason: String

    /// A problem: `reason`.
    public init(reason: String) { self.reason = reason }
}
