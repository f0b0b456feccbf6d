import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreCrypto
import ModelStoreFileIO

extension ActiveSegment {
    /// Creates segment `number` with its header, synced along with the directory, so that a
    /// segment that exists is whole up to its header before any record goes into it.
    static func create(
        layout: LogLayout, number: UInt64, storeIdentifier: String, firstTransaction: UInt64, shapes: ShapeTable
    ) throws -> ActiveSegment {
        let header = SegmentHeader(
            number: number, storeIdentifier: storeIdentifier, firstTransaction: firstTransaction, created: Date(),
            shapes: shapes)
        let bytes = try header.encoded()
        let url = layout.segmentURL(number)
        do {
            let file = try OpenFile(url, writable: true, create: true, exclusive: true, permissions: layout.permissions)
            try file.write(bytes, at: 0)
            try file.sync()
            try FileIO.syncDirectory(layout.directory)
            return ActiveSegment(number: number, file: file, headerEnd: bytes.count, end: bytes.count)
        } catch {
            try? FileIO.remove(url)
            throw error
        }
    }
}

extension AppendLogStore {
    /// Writes the record of `change`, read against `table` before the table takes it (or, for new
    /// models already in the table, from their rows), and returns its ticket with how much the
    /// live data grows; `nil` when the change leaves nothing to record. The caller applies the
    /// change to the table once this returns. If the write fails, the segment is cut back to where
    /// it was.
    func append(
        _ change: TableChange, author: String?, table: SnapshotTable, to state: inout LogState
    ) throws -> (ticket: WriteTicket, delta: LiveSize)? {
        switch change {
        case .save(let prepared): return try append(prepared, author: author, table: table, to: &state)
        case .inserted(let ids): return try appendInsertion(of: ids, author: author, table: table, to: &state)
        case .deletingEveryModel(let entity):
            return try appendDeletingEveryModel(of: entity, author: author, table: table, to: &state)
        }
    }

    /// The record of a prepared save: the inserted models, only the values that changed in updated
    /// ones (compared with the table), and the deleted identifiers with their tombstones. Nothing is
    /// written for a save that changes nothing.
    private func append(
        _ prepared: SnapshotTable.PreparedSave, author: String?, table: SnapshotTable, to state: inout LogState
    ) throws -> (ticket: WriteTicket, delta: LiveSize)? {
        var record = TransactionRecord(
            number: state.lastTransaction + 1, timestamp: Date(), author: author, inserted: [], updated: [], deleted: []
        )
        var delta = LiveSize()
        let deleted = prepared.deleted.isEmpty ? [] : Set(prepared.deleted)
        for id in prepared.deleted {
            guard let old = table.snapshot(for: id) else { continue }
            delta.add(-EncodedSize.snapshot(old), for: id.entityName)
            record.deleted.append(
                StoredChange(code: shapes.code(of: id.entityName), id: id, values: tombstone(of: old)))
        }
        for new in prepared.updated where !deleted.contains(new.persistentIdentifier) {
            guard let old = table.snapshot(for: new.persistentIdentifier) else { continue }
            var changes: [(slot: Int, value: StoreValue)] = []
            for slot in new.values.indices where !new.values[slot].isIdentical(to: old.values[slot]) {
                changes.append((slot, new.values[slot]))
                delta.add(
                    EncodedSize.value(new.values[slot]) - EncodedSize.value(old.values[slot]), for: new.entity.name)
            }
            if !changes.isEmpty {
                record.updated.append(
                    StoredChange(
                        code: shapes.code(of: new.entity.name), id: new.persistentIdentifier, values: changes))
            }
        }
        record.inserted.reserveCapacity(prepared.inserted.count)
        for snapshot in prepared.inserted {
            record.inserted.append(
                StoredRow(
                    code: shapes.code(of: snapshot.entity.name), id: snapshot.persistentIdentifier,
                    values: snapshot.values))
            delta.add(EncodedSize.snapshot(snapshot), for: snapshot.entity.name)
        }
        guard !record.isEmpty else { return nil }
        return (try write(record, to: &state), delta)
    }

    /// The record of a batch of new models, which the table's batch insert has taken: written from
    /// the table's rows, without a snapshot per model, in the same bytes as a save of those models.
    private func appendInsertion(
        of ids: PersistentIdentifiers, author: String?, table: SnapshotTable, to state: inout LogState
    ) throws -> (ticket: WriteTicket, delta: LiveSize)? {
        guard !ids.isEmpty else { return nil }
        let number = state.lastTransaction + 1
        var writer = ByteWriter(capacity: 512)
        var delta = LiveSize()
        try TransactionRecord.encodeInsertion(
            number: number, timestamp: Date(), author: author, of: ids, into: &writer, context: context
        ) { id in
            let values = table.snapshot(for: id)?.values ?? []
            delta.add(EncodedSize.row(id, values), for: id.entityName)
            return values
        }
        return (try write(encoded: &writer, number: number, to: &state), delta)
    }

    /// The record of deleting every model of an entity, read from the table's columns without a
    /// snapshot per model.
    ///
    /// Without `.preserveValueOnDeletion` attributes a tombstone is the identifier alone, so only
    /// the identifiers are read per model; the live size drops by the entity's, which the store
    /// keeps per entity.
    private func appendDeletingEveryModel(
        of entity: Schema.Entity, author: String?, table: SnapshotTable, to state: inout LogState
    ) throws -> (ticket: WriteTicket, delta: LiveSize)? {
        let identifiers = table.identifiers(of: entity.name)
        guard !identifiers.isEmpty else { return nil }
        let code = shapes.code(of: entity.name)
        let number = state.lastTransaction + 1
        let preserved = entity.attributes.filter { $0.options.contains(.preserveValueOnDeletion) }.map(\.slot)
        var writer = ByteWriter(capacity: 512)
        if preserved.isEmpty {
            // No tombstones: the record is written straight from the identifiers, without a change
            // built (and an identifier copied) per model.
            try TransactionRecord.encodeDeletion(
                number: number, timestamp: Date(), author: author, of: identifiers, code: code, into: &writer,
                context: context)
        } else {
            var record = TransactionRecord(
                number: number, timestamp: Date(), author: author, inserted: [], updated: [], deleted: [])
            record.deleted.reserveCapacity(identifiers.count)
            table.forEachModel(of: entity.name) { id, values in
                record.deleted.append(StoredChange(code: code, id: id, values: preserved.map { ($0, values[$0]) }))
            }
            try record.encode(into: &writer, context: context)
        }
        var delta = LiveSize()
        delta.add(-state.liveBytes.size(of: entity.name), for: entity.name)
        return (try write(encoded: &writer, number: number, to: &state), delta)
    }

    /// The values of a deleted model's `.preserveValueOnDeletion` attributes, for its tombstone.
    private func tombstone(of snapshot: DefaultSnapshot) -> [(slot: Int, value: StoreValue)] {
        snapshot.entity.attributes.compactMap { attribute in
            attribute.options.contains(.preserveValueOnDeletion)
                ? (attribute.slot, snapshot.values[attribute.slot]) : nil
        }
    }

    /// Appends a framed record to the active segment, rolling to a new segment first when the
    /// active one would pass the configured size.
    private func write(_ record: TransactionRecord, to state: inout LogState) throws -> WriteTicket {
        var writer = ByteWriter(capacity: 512)
        try record.encode(into: &writer, context: context)
        return try write(encoded: &writer, number: record.number, to: &state)
    }

    /// Appends a record already framed in `writer`, transaction `number`, as ``write(_:to:)`` does;
    /// an encrypted log seals it in `writer` first (in place, so a large record is not copied).
    private func write(encoded writer: inout ByteWriter, number: UInt64, to state: inout LogState) throws
        -> WriteTicket
    {
        guard var active = state.active else {
            throw DataStoreError(.io, "the append log '\(directory.path)' is closed")
        }
        let size = writer.count + (layout.cipher == nil ? 0 : AES256GCM.overhead)
        if active.end > active.headerEnd && active.end + size > configuration.segmentSize {
            try roll(&state)
            active = state.active!
        }
        try layout.cipher?.seal(
            frameIn: &writer, from: 0, associatedData: LogCipher.segmentData(store: identifier, segment: active.number))
        // A segment replaced or removed under the open store would take this write into a file that
        // no open reads again: refuse it instead of acknowledging it.
        guard try active.file.isStillAtItsPath() else {
            throw DataStoreError(
                .conflict,
                "the append log's segment '\(active.file.name)' in '\(directory.path)' was replaced or removed "
                    + "while the store was open, so the transaction was not written",
                remedy: "Close the store and open it again; it then reads the log as it is now")
        }
        do {
            try active.file.write(writer.bytes, at: active.end)
        } catch let error as DataStoreError {
            do {
                try active.file.truncate(to: active.end)
            } catch let cut as DataStoreError {
                state.failure = cut
                commits.fail(cut)
            }
            throw error
        }
        active.end += writer.count
        state.active = active
        state.lastTransaction = number
        state.segments[state.segments.count - 1].byteCount = active.end
        state.segments[state.segments.count - 1].transactionCount += 1
        commits.noteWritten(number, file: active.file)
        return WriteTicket(transaction: number, file: active.file)
    }

    /// Finishes the active segment (synced, whatever the durability, so that only the last
    /// segment of a log can ever end torn) and starts the next one.
    func roll(_ state: inout LogState) throws {
        guard let active = state.active else { return }
        do {
            try active.file.sync()
        } catch let error as DataStoreError {
            state.failure = error
            commits.fail(error)
            throw error
        }
        commits.markDurable(through: state.lastTransaction, countingSync: true)
        let next = try ActiveSegment.create(
            layout: layout, number: active.number + 1, storeIdentifier: identifier,
            firstTransaction: state.lastTransaction + 1, shapes: shapes)
        state.active = next
        state.segments.append(
            SegmentSummary(
                number: next.number, byteCount: next.end, firstTransaction: state.lastTransaction + 1,
                transactionCount: 0))
    }
}
