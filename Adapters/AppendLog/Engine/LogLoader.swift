import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

/// A segment of the log after the checkpoint, as the store tracks it.
struct SegmentSummary: Sendable {
    /// The segment's number.
    var number: UInt64
    /// Its size in bytes.
    var byteCount: Int
    /// The number its first transaction has (or would have).
    var firstTransaction: UInt64
    /// How many transactions it holds.
    var transactionCount: Int
}

/// The checkpoint the store was opened from or last wrote.
struct CheckpointSummary: Sendable {
    /// Its file name.
    var name: String
    /// Its size in bytes.
    var byteCount: Int
    /// The last transaction it includes.
    var lastTransaction: UInt64
    /// How many models it holds.
    var modelCount: Int
    /// When it was written.
    var created: Date
}

/// The models a replay has reached so far: checkpoint rows, then each transaction applied in order.
///
/// Rows are appended in log order. The index from identifier to row, and the marks of deleted
/// rows, are built only when the first update or delete needs them, so replaying a checkpoint and
/// a log of inserts costs no hashing beyond the table's own, and hands the rows over uncopied.
struct ReplayState {
    private var rows: [DefaultSnapshot] = []
    private var removed: [Bool]?
    private var index: [PersistentIdentifier: Int]?
    /// The estimated encoded size of the live models.
    private(set) var liveBytes = LiveSize()
    /// One more than the largest integer key seen.
    private(set) var nextKey: Int64 = 1

    mutating func reserve(_ count: Int) { rows.reserveCapacity(count) }

    mutating func raiseNextKey(_ key: Int64) { nextKey = max(nextKey, key) }

    /// The live models, in log order.
    var liveRows: [DefaultSnapshot] {
        guard let removed else { return rows }
        return zip(rows, removed).compactMap { $1 ? nil : $0 }
    }

    private mutating func position(of id: PersistentIdentifier) -> Int? {
        if index == nil {
            var built: [PersistentIdentifier: Int] = [:]
            built.reserveCapacity(rows.count)
            for (position, row) in rows.enumerated() { built[row.persistentIdentifier] = position }
            index = built
            removed = [Bool](repeating: false, count: rows.count)
        }
        return index![id]
    }

    mutating func insert(_ snapshot: DefaultSnapshot, size: Int) throws {
        let id = snapshot.persistentIdentifier
        if index != nil {
            guard index![id] == nil else { throw ReplayProblem(reason: "inserts \(id), which already exists") }
            index![id] = rows.count
            removed!.append(false)
        }
        if let key = id.primaryKey.intValue, key >= nextKey { nextKey = key + 1 }
        liveBytes.add(size, for: snapshot.entity.name)
        rows.append(snapshot)
    }

    mutating func update(_ id: PersistentIdentifier, changes: [(slot: Int, value: StoreValue)]) throws {
        guard let position = position(of: id) else {
            throw ReplayProblem(reason: "updates \(id), which does not exist")
        }
        for (slot, value) in changes {
            liveBytes.add(
                EncodedSize.value(value) - EncodedSize.value(rows[position].values[slot]), for: id.entityName)
            rows[position].values[slot] = value
        }
    }

    mutating func delete(_ id: PersistentIdentifier) throws {
        guard let position = position(of: id) else {
            throw ReplayProblem(reason: "deletes \(id), which does not exist")
        }
        liveBytes.add(-EncodedSize.snapshot(rows[position]), for: id.entityName)
        removed![position] = true
        index![id] = nil
    }
}

/// What opening read from the directory.
struct LoadedLog {
    /// The live models.
    var table: SnapshotTable
    /// The checkpoint, if there is one.
    var checkpoint: CheckpointSummary?
    /// The segments after the checkpoint, in order.
    var segments: [SegmentSummary]
    /// How reading the last segment ended, if there is a segment.
    var lastScan: SegmentScanner.Result?
    /// The number of the last transaction in the log.
    var lastTransaction: UInt64
    /// The estimated encoded size of the live models.
    var liveBytes: LiveSize
}

/// Reads a store's checkpoint and replays the segments after it.
enum LogLoader {
    /// Loads the state the manifest describes, against `schema`.
    ///
    /// Throws ``AppendLogDamage`` for damage (the caller turns it into a `corrupted` error) and
    /// ``DataStoreError`` for data the schema cannot hold.
    static func load(
        layout: LogLayout, manifest: Manifest, listing: LogLayout.Listing, schema: Schema
    ) throws -> LoadedLog {
        var replay = ReplayState()
        var lastTransaction: UInt64 = 0
        var checkpoint: CheckpointSummary?
        if let name = manifest.checkpoint {
            let url = layout.url(name)
            guard FileIO.exists(url) else {
                throw AppendLogDamage(file: name, offset: 0, reason: "the checkpoint the manifest names is missing")
            }
            let bytes = try OpenFile(url, writable: false).readAll()
            var mapping: SchemaMapping?
            let (header, _) = try CheckpointFile.read(bytes, name: name, cipher: layout.cipher) { row, size in
                try replay.insert(try mapping!.snapshot(row), size: size)
            } onHeader: { header in
                guard header.storeIdentifier == manifest.storeIdentifier else {
                    throw AppendLogDamage(
                        file: name, offset: 0,
                        reason:
                            "the checkpoint belongs to store '\(header.storeIdentifier)', not "
                            + "'\(manifest.storeIdentifier)'"
                    )
                }
                guard header.baseSegment == manifest.firstSegment else {
                    throw AppendLogDamage(
                        file: name, offset: 0,
                        reason:
                            "the checkpoint ends before segment \(header.baseSegment), but the manifest's log "
                            + "starts at segment \(manifest.firstSegment)"
                    )
                }
                mapping = SchemaMapping(shapes: header.shapes, schema: schema, storeName: "the append log")
                replay.reserve(header.modelCount)
            }
            replay.raiseNextKey(header.nextPrimaryKey)
            lastTransaction = header.lastTransaction
            checkpoint = CheckpointSummary(
                name: name, byteCount: bytes.count, lastTransaction: header.lastTransaction,
                modelCount: header.modelCount, created: header.created)
        }
        let numbers = try layout.liveSegments(listing, manifest: manifest)
        var segments: [SegmentSummary] = []
        var lastScan: SegmentScanner.Result?
        for (position, number) in numbers.enumerated() {
            let name = LogLayout.segmentName(number)
            let bytes = try OpenFile(layout.segmentURL(number), writable: false).readAll()
            let scanner = SegmentScanner(
                name: name, number: number, isLast: position == numbers.count - 1,
                storeIdentifier: manifest.storeIdentifier, firstTransaction: lastTransaction + 1, cipher: layout.cipher)
            var mapping: SchemaMapping?
            let result = try scanner.scan(bytes) { record, _, _, context in
                if mapping == nil {
                    mapping = SchemaMapping(shapes: context.shapes, schema: schema, storeName: "the append log")
                }
                try apply(record, mapping: mapping!, to: &replay)
            }
            if let last = result.lastTransaction { lastTransaction = last }
            segments.append(
                SegmentSummary(
                    number: number, byteCount: result.torn == nil ? result.byteCount : result.end,
                    firstTransaction: result.header?.firstTransaction ?? lastTransaction + 1,
                    transactionCount: result.recordCount))
            lastScan = result
        }
        var table = SnapshotTable(schema: schema)
        do {
            try table.load(replay.liveRows)
        } catch var error as DataStoreError {
            error.message = "the append log '\(layout.directory.path)' cannot be loaded: \(error.message)"
            throw error
        }
        table.reserveKeys(below: replay.nextKey)
        return LoadedLog(
            table: table, checkpoint: checkpoint, segments: segments, lastScan: lastScan,
            lastTransaction: lastTransaction, liveBytes: replay.liveBytes)
    }

    /// Applies one transaction to a replay.
    static func apply(_ record: TransactionRecord, mapping: SchemaMapping, to replay: inout ReplayState) throws {
        for id in record.deleted { try replay.delete(id.id) }
        for change in record.updated { try replay.update(change.id, changes: try mapping.changes(change)) }
        for row in record.inserted {
            let snapshot = try mapping.snapshot(row)
            try replay.insert(snapshot, size: EncodedSize.snapshot(snapshot))
        }
    }
}
