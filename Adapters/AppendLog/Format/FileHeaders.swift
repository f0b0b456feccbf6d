import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

/// The version of the append-log file format this code writes and reads.
let appendLogFormatVersion = 1

/// The first 8 bytes of every segment file.
let segmentMagic: [UInt8] = Array("MSLOGSEG".utf8)
/// The first 8 bytes of every checkpoint file.
let checkpointMagic: [UInt8] = Array("MSLOGCKP".utf8)

/// The header frame of a log segment: which store and schema its records belong to.
struct SegmentHeader: Sendable {
    /// The segment's number; segment files are named after it.
    var number: UInt64
    /// The identifier of the store that wrote the segment.
    var storeIdentifier: String
    /// The number the segment's first transaction has (one more than the last one before it).
    var firstTransaction: UInt64
    /// When the segment was started.
    var created: Date
    /// The shapes its records are encoded against.
    var shapes: ShapeTable

    /// The file's bytes up to and including the header frame.
    func encoded() throws -> [UInt8] {
        var writer = ByteWriter(capacity: 512)
        writer.append(raw: segmentMagic)
        let start = Frame.begin(&writer)
        writer.writeVarint(appendLogFormatVersion)
        writer.writeVarint(number)
        writer.write(storeIdentifier)
        writer.writeVarint(firstTransaction)
        writer.write(created.timeIntervalSinceReferenceDate)
        try shapes.encode(into: &writer)
        try Frame.finish(&writer, at: start)
        return writer.bytes
    }

    /// Decodes the header frame's payload.
    static func decode(_ payload: UnsafeRawBufferPointer) throws -> SegmentHeader {
        var reader = ByteReader(payload)
        try checkVersion(&reader)
        let number = try reader.readVarint()
        let store = try reader.readString()
        let first = try reader.readVarint()
        let created = Date(timeIntervalSinceReferenceDate: try reader.readDouble())
        let shapes = try ShapeTable.decode(from: &reader)
        return SegmentHeader(
            number: number, storeIdentifier: store, firstTransaction: first, created: created, shapes: shapes)
    }
}

/// The header frame of a checkpoint: the point in the log it captures.
struct CheckpointHeader: Sendable {
    /// The identifier of the store.
    var storeIdentifier: String
    /// The first segment whose transactions are not in the checkpoint.
    var baseSegment: UInt64
    /// The number of the last transaction the checkpoint includes (0 for none).
    var lastTransaction: UInt64
    /// The store's next integer key, so keys of deleted models are never reused.
    var nextPrimaryKey: Int64
    /// When the checkpoint was written.
    var created: Date
    /// How many models it holds.
    var modelCount: Int
    /// The shapes its rows are encoded against.
    var shapes: ShapeTable

    /// The file's bytes up to and including the header frame.
    func encoded() throws -> [UInt8] {
        var writer = ByteWriter(capacity: 512)
        writer.append(raw: checkpointMagic)
        let start = Frame.begin(&writer)
        writer.writeVarint(appendLogFormatVersion)
        writer.write(storeIdentifier)
        writer.writeVarint(baseSegment)
        writer.writeVarint(lastTransaction)
        writer.writeSigned(nextPrimaryKey)
        writer.write(created.timeIntervalSinceReferenceDate)
        writer.writeVarint(modelCount)
        try shapes.encode(into: &writer)
        try Frame.finish(&writer, at: start)
        return writer.bytes
    }

    /// Decodes the header frame's payload.
    static func decode(_ payload: UnsafeRawBufferPointer) throws -> CheckpointHeader {
        var reader = ByteReader(payload)
        try checkVersion(&reader)
        let store = try reader.readString()
        let base = try reader.readVarint()
        let last = try reader.readVarint()
        let nextKey = try reader.readSigned()
        let created = Date(timeIntervalSinceReferenceDate: try reader.readDouble())
        let count = try reader.readCount(limit: Int.max)
        let shapes = try ShapeTable.decode(from: &reader)
        return CheckpointHeader(
            storeIdentifier: store, baseSegment: base, lastTransaction: last, nextPrimaryKey: nextKey,
            created: created, modelCount: count, shapes: shapes)
    }
}

/// Kinds of the frames that follow a checkpoint's header.
enum CheckpointFrameKind: UInt8 {
    /// A run of models.
    case chunk = 2
    /// The last frame: totals that prove the file is whole.
    case trailer = 3
}

private func checkVersion(_ reader: inout ByteReader) throws {
    let version = try reader.readCount()
    if let refusal = FormatVersion.refusal(
        found: Int64(clamping: UInt64(version)), readable: appendLogFormatVersion...appendLogFormatVersion)
    {
        var error = reader.error(refusal.reason)
        error.code = refusal.code
        error.remedy = refusal.remedy
        throw error
    }
}
