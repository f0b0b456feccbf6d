import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

/// The segment the store appends to.
struct ActiveSegment: Sendable {
    /// The segment's number.
    let number: UInt64
    /// Its file, open for writing.
    let file: OpenFile
    /// The offset just after its header.
    let headerEnd: Int
    /// The offset where the next record goes: everything before it has been written.
    var end: Int
}

/// Everything an open append log keeps behind its mutex: the models, and where the log stands.
struct LogState: Sendable {
    /// The live models.
    var table: SnapshotTable
    /// The segment being appended to; `nil` once the store is closed.
    var active: ActiveSegment?
    /// Whether ``AppendLogStore/close()`` has run; later calls throw.
    var isClosed = false
    /// The segments after the checkpoint, the active one last.
    var segments: [SegmentSummary]
    /// The number of the last transaction written.
    var lastTransaction: UInt64
    /// The current checkpoint.
    var checkpoint: CheckpointSummary?
    /// The estimated encoded size of the live models.
    var liveBytes: LiveSize
    /// The error that stopped the store, if a write or sync failed.
    var failure: DataStoreError?
    /// The directory lock; released when set to `nil`.
    var lock: DirectoryLock?
    /// How many compactions this store has run.
    var compactions = 0
    /// Whether a background compaction is scheduled or running.
    var compactionScheduled = false
    /// The log size below which automatic compaction is not tried again, after one failed.
    var automaticCompactionFloor = 0
    /// The error of the last failed compaction, if the last one failed.
    var lastCompactionError: DataStoreError?

    /// The bytes of the checkpoint and the segments after it.
    var logBytes: Int { (checkpoint?.byteCount ?? 0) + segments.reduce(0) { $0 + $1.byteCount } }

    /// The fraction of the log's bytes that no longer describe live models.
    func deadFraction(baseline: Int) -> Double {
        let total = logBytes
        guard total > 0 else { return 0 }
        return min(1, max(0, 1 - Double(liveBytes.total + baseline) / Double(total)))
    }
}

/// The estimated encoded size of the live models (as ``EncodedSize`` counts it), in all and per
/// entity, kept up as saves and replays change models, so that dropping every model of an entity
/// needs no pass over them.
struct LiveSize: Sendable {
    /// The size of every live model.
    private(set) var total = 0
    /// Per entity, less the run still being added up.
    private var byEntity: [String: Int] = [:]
    /// The entity of the latest changes and their sum: a run of one entity's rows, as a replay or
    /// a save brings them, costs no look-up per row.
    private var runEntity = ""
    private var run = 0

    /// Adds `bytes` (negative for what was removed) to `entity`'s live size.
    mutating func add(_ bytes: Int, for entity: String) {
        total += bytes
        if entity != runEntity {
            endRun()
            runEntity = entity
        }
        run += bytes
    }

    /// Adds every entity's size in `other`.
    mutating func add(_ other: LiveSize) {
        var other = other
        other.endRun()
        for (entity, bytes) in other.byEntity { add(bytes, for: entity) }
    }

    /// The live size of `entity`'s models.
    func size(of entity: String) -> Int {
        (byEntity[entity] ?? 0) + (entity == runEntity ? run : 0)
    }

    private mutating func endRun() {
        if run != 0 { byEntity[runEntity, default: 0] += run }
        run = 0
    }
}
