import Foundation
import ModelStore
import ModelStoreAdapterKit

/// A read-only description of an append log: its entities and counts, its files and sizes, and how
/// much of it is dead. What `modelstore inspect` prints.
///
/// Get it from an open store (``AppendLogStore/info``) or from a directory without opening it
/// (``AppendLogStore/inspect(at:)``), which needs no schema. It encodes as the `log` part of
/// `modelstore inspect --json`: segment and checkpoint file names under `file`, history segments'
/// under `path`, the directory as a path.
public struct AppendLogInfo: Sendable, Hashable, Encodable {
    /// A log segment.
    public struct Segment: Sendable, Hashable, Encodable {
        /// The segment's number.
        public let number: UInt64
        /// Its file name (relative to the store's directory).
        public let fileName: String
        /// Its size in bytes.
        public let byteCount: Int
        /// The number of its first transaction.
        public let firstTransaction: UInt64
        /// How many transactions it holds.
        public let transactionCount: Int

        private enum CodingKeys: String, CodingKey {
            case number
            case fileName = "file"
            case byteCount, firstTransaction, transactionCount
        }
    }

    /// A segment kept in `history/`.
    public struct HistorySegment: Sendable, Hashable, Encodable {
        /// The segment's number.
        public let number: UInt64
        /// Its path relative to the store's directory, such as `history/segment-00000001.mslog`.
        public let fileName: String
        /// Its size in bytes.
        public let byteCount: Int

        private enum CodingKeys: String, CodingKey {
            case number
            case fileName = "path"
            case byteCount
        }
    }

    /// The checkpoint.
    public struct Checkpoint: Sendable, Hashable, Encodable {
        /// Its file name.
        public let fileName: String
        /// Its size in bytes.
        public let byteCount: Int
        /// The last transaction it includes.
        public let lastTransaction: UInt64
        /// How many models it holds.
        public let modelCount: Int
        /// When it was written.
        public let created: Date

        private enum CodingKeys: String, CodingKey {
            case fileName = "file"
            case byteCount, lastTransaction, modelCount, created
        }
    }

    /// An entity and how many models of it the store holds.
    public struct Entity: Sendable, Hashable, Encodable {
        /// The entity's name.
        public let name: String
        /// How many models of it the store holds.
        public let modelCount: Int
        /// Its description as the newest file records it, if a file records it.
        public let shape: Schema.EntityDescription?
    }

    /// The store's directory.
    public let directory: URL
    /// The store's identifier.
    public let storeIdentifier: String
    /// The file format version.
    public let formatVersion: Int
    /// The schema the newest file was written with; `Schema(description)` makes a schema of it
    /// that opens the store without the app's model types.
    public let schema: Schema.Description?
    /// The schema version of the newest file.
    public var schemaVersion: Schema.Version? { schema?.version }
    /// The entities, in the order of the newest file's shapes.
    public let entities: [Entity]
    /// How many models the store holds.
    public let modelCount: Int
    /// The checkpoint, if the log has been compacted.
    public let checkpoint: Checkpoint?
    /// The segments after the checkpoint, oldest first; the last is the one being appended to.
    public let segments: [Segment]
    /// The segments kept as history, oldest first.
    public let historySegments: [HistorySegment]
    /// The number of the last transaction: how many transactions the store has saved.
    public let transactionCount: UInt64
    /// The size of the checkpoint and the segments after it: what opening reads.
    public let logByteCount: Int
    /// An estimate of the size the live models would take in a new checkpoint.
    public let liveByteCount: Int
    /// The fraction of ``logByteCount`` that no longer describes live models (superseded values,
    /// deleted models, framing), between 0 and 1. Automatic compaction compares it with its threshold.
    public let deadFraction: Double

    /// The size of `history/`.
    public var historyByteCount: Int { historySegments.reduce(0) { $0 + $1.byteCount } }

    private enum CodingKeys: String, CodingKey {
        case directory, storeIdentifier, formatVersion, schema, entities, modelCount, checkpoint, segments
        case historySegments, transactionCount, logByteCount, liveByteCount, deadFraction
    }

    /// Encodes every property, the directory as a path.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(directory.path, forKey: .directory)
        try container.encode(storeIdentifier, forKey: .storeIdentifier)
        try container.encode(formatVersion, forKey: .formatVersion)
        try container.encodeIfPresent(schema, forKey: .schema)
        try container.encode(entities, forKey: .entities)
        try container.encode(modelCount, forKey: .modelCount)
        try container.encodeIfPresent(checkpoint, forKey: .checkpoint)
        try container.encode(segments, forKey: .segments)
        try container.encode(historySegments, forKey: .historySegments)
        try container.encode(transactionCount, forKey: .transactionCount)
        try container.encode(logByteCount, forKey: .logByteCount)
        try container.encode(liveByteCount, forKey: .liveByteCount)
        try container.encode(deadFraction, forKey: .deadFraction)
    }
}

extension AppendLogInfo {
    init(
        directory: URL, storeIdentifier: String, shapes: ShapeTable?, counts: [String: Int],
        checkpoint: CheckpointSummary?,
        segments: [SegmentSummary], history: [(number: UInt64, byteCount: Int)], transactionCount: UInt64,
        liveByteCount: Int, deadFraction: Double
    ) {
        self.directory = directory
        self.storeIdentifier = storeIdentifier
        formatVersion = appendLogFormatVersion
        schema = shapes?.description
        var entities = (shapes?.entities ?? []).map {
            Entity(name: $0.name, modelCount: counts[$0.name] ?? 0, shape: $0)
        }
        let known = Set(entities.map(\.name))
        for (name, count) in counts.sorted(by: { $0.key < $1.key }) where !known.contains(name) {
            entities.append(Entity(name: name, modelCount: count, shape: nil))
        }
        self.entities = entities
        modelCount = counts.values.reduce(0, +)
        self.checkpoint = checkpoint.map {
            Checkpoint(
                fileName: $0.name, byteCount: $0.byteCount, lastTransaction: $0.lastTransaction,
                modelCount: $0.modelCount, created: $0.created)
        }
        self.segments = segments.map {
            Segment(
                number: $0.number, fileName: LogLayout.segmentName($0.number), byteCount: $0.byteCount,
                firstTransaction: $0.firstTransaction, transactionCount: $0.transactionCount)
        }
        historySegments = history.map {
            HistorySegment(
                number: $0.number, fileName: LogLayout.historyDirectoryName + "/" + LogLayout.segmentName($0.number),
                byteCount: $0.byteCount)
        }
        self.transactionCount = transactionCount
        logByteCount = (checkpoint?.byteCount ?? 0) + segments.reduce(0) { $0 + $1.byteCount }
        self.liveByteCount = liveByteCount
        self.deadFraction = deadFraction
    }
}

/// The result of checking an append log without opening it: ``AppendLogStore/verify(at:)``.
public struct AppendLogVerification: Sendable, Hashable, CustomStringConvertible {
    /// What the store holds, as far as it could be read; `nil` when the manifest is unreadable.
    public let info: AppendLogInfo?
    /// Every damaged place found, in the order found: the manifest, the checkpoint, the live
    /// segments, then `history/`. Empty for a healthy store.
    public let problems: [AppendLogDamage]
    /// The torn tail opening the store would cut off (not a problem: it holds no transaction the
    /// log recorded as synced).
    public let tornTail: AppendLogTornTail?

    /// Whether no damage was found. A torn tail alone leaves a store healthy.
    public var isHealthy: Bool { problems.isEmpty }

    /// A summary: healthy with counts, or every problem with its file and offset.
    public var description: String {
        var lines: [String] = []
        if isHealthy {
            let models = info.map { "\($0.modelCount) models, \($0.transactionCount) transactions" } ?? ""
            lines.append("healthy: \(models)")
        } else {
            lines.append("damaged: \(problems.count) problem\(problems.count == 1 ? "" : "s")")
            lines += problems.map { "  \($0)" }
            lines.append("  run repair to keep every transaction before the damage and set the rest aside")
        }
        if let tornTail { lines.append("torn tail: \(tornTail)") }
        return lines.joined(separator: "\n")
    }
}
