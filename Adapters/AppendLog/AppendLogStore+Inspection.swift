import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreCrypto
import ModelStoreFileIO

extension AppendLogStore {
    /// A description of the open store, from memory: entities and counts, files and sizes, dead fraction.
    public var info: AppendLogInfo {
        let (counts, checkpoint, segments, last, live, dead) = state.withLock { state in
            (
                Dictionary(uniqueKeysWithValues: schema.entities.map { ($0.name, state.table.count(of: $0.name)) }),
                state.checkpoint, state.segments, state.lastTransaction, state.liveBytes.total,
                state.deadFraction(baseline: baseline)
            )
        }
        let history = ((try? layout.list().history) ?? []).map { ($0, FileIO.size(of: layout.historyURL($0))) }
        return AppendLogInfo(
            directory: directory, storeIdentifier: identifier, shapes: shapes, counts: counts, checkpoint: checkpoint,
            segments: segments, history: history, transactionCount: last, liveByteCount: live, deadFraction: dead)
    }

    /// Describes the append log in `directory` without opening it: no schema and no lock needed.
    ///
    /// Throws ``DataStoreError/Code/notFound`` if the directory is not an append log, and
    /// ``DataStoreError/Code/corrupted`` if its manifest is unreadable. Damage further in is not
    /// thrown: counts then reflect the log up to the damage; ``verify(at:)`` reports it.
    ///
    /// An encrypted log needs its key (`encryption`).
    public static func inspect(at directory: URL, encryption: EncryptionKeySource? = nil) throws -> AppendLogInfo {
        let analysis = try LogAnalysis.run(
            directory: directory, keepValues: true, checkHistory: false,
            cipher: try cipher(directory, encryption))
        return try info(of: analysis)
    }

    /// Checks every file of the append log in `directory` without opening it: every checksum,
    /// every record's structure and transaction numbering, the manifest, the checkpoint, the live
    /// segments and `history/`. It writes nothing and needs no schema or lock.
    ///
    /// Throws ``DataStoreError/Code/notFound`` if the directory is not an append log. Damage is
    /// reported in the result, not thrown.
    ///
    /// An encrypted log needs its key (`encryption`): every record is authenticated as well.
    public static func verify(
        at directory: URL, encryption: EncryptionKeySource? = nil
    ) throws -> AppendLogVerification {
        let analysis = try LogAnalysis.run(
            directory: directory, keepValues: true, checkHistory: true, cipher: try cipher(directory, encryption))
        let info = try? info(of: analysis)
        var torn: AppendLogTornTail?
        if let tail = analysis.torn {
            torn = AppendLogTornTail(
                segment: LogLayout.segmentName(tail.number), offset: tail.offset,
                droppedByteCount: tail.byteCount - tail.offset, reason: tail.reason, savedAs: nil)
            torn?.syncedThrough = SyncedMark.read(directory: directory.standardizedFileURL)
        }
        return AppendLogVerification(info: info, problems: analysis.problems, tornTail: torn)
    }

    /// The schema the append log in `directory` was last written with, read from its newest
    /// file's header without replaying the log: what a tool passes to `Schema(description)` to
    /// open the store without the app's model types.
    ///
    /// Throws ``DataStoreError/Code/notFound`` if the directory is not an append log, and
    /// ``DataStoreError/Code/corrupted`` if no header can be read.
    public static func storedSchema(at directory: URL) throws -> Schema.Description {
        let layout = LogLayout(directory: directory.standardizedFileURL)
        let listing = try layout.list()
        guard listing.hasManifest else {
            throw DataStoreError(.notFound, "'\(layout.directory.path)' is not an append log: it has no manifest")
        }
        let manifest = try Manifest.decode(
            try OpenFile(layout.manifestURL, writable: false).readAll(), url: layout.manifestURL)
        for number in listing.segments.reversed() where number >= manifest.firstSegment {
            let prefix = try OpenFile(layout.segmentURL(number), writable: false).read(count: 1 << 20, at: 0)
            if let header = SegmentScanner.header(of: prefix) { return header.header.shapes.description }
        }
        if let name = manifest.checkpoint {
            let file = try OpenFile(layout.url(name), writable: false)
            if let header = CheckpointFile.header(of: try file.read(count: 1 << 20, at: 0)) {
                return header.shapes.description
            }
        }
        throw DataStoreError(
            .corrupted, "no file of the append log '\(layout.directory.path)' has a readable header",
            remedy: "Run AppendLogStore.verify(at:) to see what is damaged")
    }

    private static func info(of analysis: LogAnalysis) throws -> AppendLogInfo {
        guard let manifest = analysis.manifest else {
            throw (analysis.firstDamage ?? AppendLogDamage(file: Manifest.fileName, offset: 0, reason: "unreadable"))
                .error(directory: analysis.layout.directory)
        }
        var counts: [String: Int] = [:]
        for model in analysis.models.values { counts[model.entityName, default: 0] += 1 }
        let shapes = analysis.newestShapes
        let live = analysis.liveBytes
        let total = analysis.logBytes
        let baseline =
            try shapes.map { try CheckpointFile.baselineBytes(storeIdentifier: manifest.storeIdentifier, shapes: $0) }
            ?? 0
        let dead = total > 0 ? min(1, max(0, 1 - Double(live + baseline) / Double(total))) : 0
        return AppendLogInfo(
            directory: analysis.layout.directory, storeIdentifier: manifest.storeIdentifier, shapes: shapes,
            counts: counts,
            checkpoint: analysis.checkpoint, segments: analysis.segments, history: analysis.history,
            transactionCount: analysis.lastTransaction, liveByteCount: live, deadFraction: dead)
    }
}

extension AppendLogStore {
    /// The cipher of the log in `directory` for a tool that reads it: `nil` for a plaintext log
    /// (or no log), a typed error for an encrypted log and no key or a wrong one.
    static func cipher(_ directory: URL, _ encryption: EncryptionKeySource?) throws -> LogCipher? {
        let directory = directory.standardizedFileURL
        return try LogCipher.unlock(
            directory: directory, source: encryption,
            hasManifest: FileIO.exists(directory.appendingPathComponent(Manifest.fileName)), creating: false)
    }
}
