import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

/// Writing and reading checkpoints: the live data as of a point in the log.
///
/// A checkpoint is the signature `MSLOGCKP`, a header frame, chunk frames of up to about 1 MiB
/// of models each, and a trailer frame with the totals. It is written to a temporary file,
/// synced, and renamed into place, so it is either whole or absent.
enum CheckpointFile {
    /// The size at which a chunk is closed.
    static let chunkSize = 1 << 20

    /// The bytes a log of no models takes right after compaction (checkpoint and segment
    /// headers, and the trailer): what the dead fraction does not count as dead.
    static func baselineBytes(storeIdentifier: String, shapes: ShapeTable) throws -> Int {
        let checkpoint = CheckpointHeader(
            storeIdentifier: storeIdentifier, baseSegment: 1, lastTransaction: 0, nextPrimaryKey: 1, created: Date(),
            modelCount: 0, shapes: shapes)
        let segment = SegmentHeader(
            number: 1, storeIdentifier: storeIdentifier, firstTransaction: 1, created: Date(), shapes: shapes)
        return try checkpoint.encoded().count + segment.encoded().count + Frame.headerSize + 3
    }

    /// Writes a checkpoint of `count` rows to `url` atomically; returns the file's size.
    ///
    /// `encodeRow` appends row `index` (identifier, value count, values) against `context`.
    static func write(
        header: CheckpointHeader, count rowCount: Int, to url: URL, permissions: FilePermissions = .private,
        cipher: LogCipher? = nil, encodeRow: (_ index: Int, _ writer: inout ByteWriter) -> Void
    ) throws -> Int {
        let temporary = url.deletingLastPathComponent().appendingPathComponent(url.lastPathComponent + ".tmp")
        try FileIO.remove(temporary)
        var size = 0
        do {
            let file = try OpenFile(temporary, writable: true, create: true, exclusive: true, permissions: permissions)
            var writer = ByteWriter(capacity: chunkSize + 64 * 1024)
            writer.append(raw: try header.encoded())
            var chunks = 0
            var index = 0
            while index < rowCount {
                let start = Frame.begin(&writer)
                writer.write(CheckpointFrameKind.chunk.rawValue)
                let countOffset = writer.count
                writer.write(0 as UInt32)
                var count: UInt32 = 0
                while index < rowCount && writer.count - start < chunkSize {
                    encodeRow(index, &writer)
                    count += 1
                    index += 1
                }
                writer.patch(count, at: countOffset)
                try Frame.finish(&writer, at: start)
                try cipher?.seal(frameIn: &writer, from: start, associatedData: sealing(header, chunks))
                chunks += 1
                try file.write(writer.bytes, at: size)
                size += writer.count
                writer.bytes.removeAll(keepingCapacity: true)
            }
            let start = Frame.begin(&writer)
            writer.write(CheckpointFrameKind.trailer.rawValue)
            writer.writeVarint(rowCount)
            writer.writeVarint(chunks)
            try Frame.finish(&writer, at: start)
            try cipher?.seal(frameIn: &writer, from: start, associatedData: sealing(header, chunks))
            try file.write(writer.bytes, at: size)
            size += writer.count
            try file.sync()
        } catch {
            try? FileIO.remove(temporary)
            throw error
        }
        try FileIO.rename(temporary, to: url)
        try FileIO.syncDirectory(url.deletingLastPathComponent())
        return size
    }

    /// The associated data of frame `index` after `header` in an encrypted checkpoint.
    private static func sealing(_ header: CheckpointHeader, _ index: Int) -> [UInt8] {
        LogCipher.checkpointData(store: header.storeIdentifier, base: header.baseSegment, frame: index)
    }

    /// The header of a checkpoint whose first bytes are `prefix`, if it is intact.
    static func header(of prefix: [UInt8]) -> CheckpointHeader? {
        prefix.withUnsafeBytes { raw in
            guard raw.count >= checkpointMagic.count, raw.prefix(checkpointMagic.count).elementsEqual(checkpointMagic),
                case .frame(let payload, _) = Frame.read(raw, at: checkpointMagic.count)
            else { return nil }
            return try? CheckpointHeader.decode(UnsafeRawBufferPointer(rebasing: raw[payload]))
        }
    }

    /// Reads a checkpoint, calling `visit` with each model and the number of bytes it takes.
    ///
    /// Throws ``AppendLogDamage`` naming the file and the offset of the damaged frame.
    static func read(
        _ bytes: [UInt8], name: String, cipher: LogCipher? = nil, visit: (StoredRow, Int) throws -> Void,
        onHeader: (CheckpointHeader) throws -> Void = { _ in }
    ) throws -> (header: CheckpointHeader, context: IdentifierContext) {
        try bytes.withUnsafeBytes { raw in
            func damage(_ offset: Int, _ reason: String) -> AppendLogDamage {
                AppendLogDamage(file: name, offset: offset, reason: reason)
            }
            guard raw.count >= checkpointMagic.count, raw.prefix(checkpointMagic.count).elementsEqual(checkpointMagic)
            else { throw damage(0, "the file does not start with the checkpoint signature 'MSLOGCKP'") }
            func frame(at offset: Int) throws -> (payload: Range<Int>, end: Int) {
                switch Frame.read(raw, at: offset) {
                case .frame(let payload, let end): return (payload, end)
                case .end: throw damage(offset, "the checkpoint ends before its trailer")
                case .incompleteHeader, .incompletePayload: throw damage(offset, "the checkpoint is cut short")
                case .damagedHeader: throw damage(offset, "a frame header fails its checksum")
                case .damagedPayload: throw damage(offset, "a frame fails its checksum")
                }
            }
            var offset = checkpointMagic.count
            let first = try frame(at: offset)
            let header: CheckpointHeader
            do {
                header = try CheckpointHeader.decode(UnsafeRawBufferPointer(rebasing: raw[first.payload]))
            } catch let error as FormatError {
                throw error.damage(file: name, at: offset, what: "the header")
            }
            try onHeader(header)
            let context = IdentifierContext(storeIdentifier: header.storeIdentifier, shapes: header.shapes)
            offset = first.end
            var models = 0
            var chunks = 0
            // Reads one frame's payload; returns whether it was the trailer.
            func readFrame(_ payload: UnsafeRawBufferPointer, at offset: Int, end: Int) throws -> Bool {
                var reader = ByteReader(payload)
                do {
                    let kind = try reader.readByte()
                    if kind == CheckpointFrameKind.trailer.rawValue {
                        let count = try reader.readCount(limit: Int.max)
                        let chunkCount = try reader.readCount(limit: Int.max)
                        guard count == models, chunkCount == chunks, count == header.modelCount else {
                            throw reader.error(
                                "the trailer counts \(count) models in \(chunkCount) chunks, but the file has "
                                    + "\(models) in \(chunks)"
                            )
                        }
                        guard end == raw.count else { throw damage(end, "bytes follow the checkpoint's trailer") }
                        return true
                    }
                    guard kind == CheckpointFrameKind.chunk.rawValue else {
                        throw reader.error("unknown frame kind \(kind)")
                    }
                    let count = Int(try reader.readUInt32())
                    for _ in 0..<count {
                        let before = reader.offset
                        let row = try StoredRow.decode(from: &reader, context: context)
                        do {
                            try visit(row, reader.offset - before)
                        } catch let problem as ReplayProblem {
                            throw damage(offset, problem.reason)
                        }
                    }
                    guard reader.isAtEnd else { throw reader.error("bytes follow the chunk's last model") }
                    models += count
                    chunks += 1
                    return false
                } catch let error as FormatError {
                    throw damage(offset, "a frame does not decode: \(error.reason)")
                }
            }
            while true {
                let (payload, end) = try frame(at: offset)
                let isTrailer: Bool
                if let cipher {
                    guard
                        let opened = cipher.open(raw, payload: payload, associatedData: sealing(header, chunks))
                    else { throw damage(offset, SegmentScanner.unauthenticated) }
                    isTrailer = try opened.withUnsafeBytes { try readFrame($0, at: offset, end: end) }
                } else {
                    isTrailer = try readFrame(UnsafeRawBufferPointer(rebasing: raw[payload]), at: offset, end: end)
                }
                if isTrailer { return (header, context) }
                offset = end
            }
        }
    }
}
