import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

/// What a compaction did.
public struct AppendLogCompactionReport: Sendable, Hashable, CustomStringConvertible {
    /// The new checkpoint's file name.
    public let checkpoint: String
    /// How many models it holds.
    public let modelCount: Int
    /// The last transaction it includes.
    public let lastTransaction: UInt64
    /// The log's size (checkpoint and segments) before compacting.
    public let byteCountBefore: Int
    /// The log's size right after compacting.
    public let byteCountAfter: Int
    /// The segments moved to `history/`, by file name.
    public let archivedSegments: [String]

    /// A one-line summary.
    public var description: String {
        "wrote '\(checkpoint)' with \(modelCount) models through transaction \(lastTransaction); "
            + "the log went from \(byteCountBefore) to \(byteCountAfter) bytes; "
            + "\(archivedSegments.count) segments moved to 'history/'"
    }
}

/// Hooks tests use to make interleavings deterministic. Set them before the store is shared.
package final class AppendLogTestHooks: @unchecked Sendable {
    // Safety: the hook is set once, before any concurrent use of the store, and only read afterwards.
    /// Called by compaction after it captured the models and before it writes the checkpoint.
    package var compactionWillWrite: (@Sendable () -> Void)?
    init() {}
}

extension AppendLogStore {
    /// Writes the live models to a new checkpoint and switches the log to it atomically.
    ///
    /// The steps: under the store's lock, move on to a new segment and capture the models (a
    /// copy-on-write copy, so saves continue at once); write the checkpoint to a temporary file,
    /// sync it and rename it into place; replace the manifest the same way; then move the
    /// segments the checkpoint replaces to `history/`. Saves made meanwhile go to the new segment,
    /// which the new manifest keeps. A crash at any step leaves either the old manifest, whose
    /// checkpoint and segments are all still there, or the new one; opening cleans up the rest.
    ///
    /// Throws ``DataStoreError/Code/io`` if a file cannot be written; the store then stays on the
    /// old checkpoint and keeps working.
    @discardableResult
    public func compact() throws -> AppendLogCompactionReport {
        guard configuration.allowsSave else {
            throw DataStoreError.readOnly(store: directory.path, refusing: "a compaction")
        }
        maintenance.lock()
        defer { maintenance.unlock() }
        let capture = try state.withLock { state in
            try checkUsable(state)
            if let active = state.active, active.end > active.headerEnd { try roll(&state) }
            return (
                table: state.table, base: state.active!.number, lastTransaction: state.lastTransaction,
                bytesBefore: state.logBytes, previous: state.checkpoint?.name,
                replaced: state.segments.map(\.number).filter { $0 < state.active!.number }
            )
        }
        hooks.compactionWillWrite?()
        let snapshots = capture.table.allSnapshots
        let name = LogLayout.checkpointName(capture.base)
        let header = CheckpointHeader(
            storeIdentifier: identifier, baseSegment: capture.base, lastTransaction: capture.lastTransaction,
            nextPrimaryKey: capture.table.nextPrimaryKey, created: Date(), modelCount: snapshots.count, shapes: shapes)
        let size = try CheckpointFile.write(
            header: header, count: snapshots.count, to: layout.url(name), permissions: layout.permissions,
            cipher: layout.cipher
        ) {
            index, writer in
            StoredRow.encode(snapshots[index], into: &writer, context: context)
        }
        let manifest = Manifest(storeIdentifier: identifier, checkpoint: name, firstSegment: capture.base)
        try FileIO.writeAtomically(manifest.encoded(), to: layout.manifestURL, permissions: layout.permissions)
        let bytesAfter = state.withLock { state in
            state.checkpoint = CheckpointSummary(
                name: name, byteCount: size, lastTransaction: capture.lastTransaction, modelCount: snapshots.count,
                created: header.created)
            state.segments.removeAll { $0.number < capture.base }
            state.compactions += 1
            return state.logBytes
        }
        try archive(capture.replaced)
        if let previous = capture.previous, previous != name {
            try FileIO.remove(layout.url(previous))
            try FileIO.syncDirectory(directory)
        }
        return AppendLogCompactionReport(
            checkpoint: name, modelCount: snapshots.count, lastTransaction: capture.lastTransaction,
            byteCountBefore: capture.bytesBefore, byteCountAfter: bytesAfter,
            archivedSegments: capture.replaced.map(LogLayout.segmentName))
    }

    /// Moves replaced segments into `history/`.
    private func archive(_ numbers: [UInt64]) throws {
        guard !numbers.isEmpty else { return }
        try FileIO.createDirectory(layout.historyDirectory, permissions: layout.permissions)
        for number in numbers { try FileIO.rename(layout.segmentURL(number), to: layout.historyURL(number)) }
        try FileIO.syncDirectory(layout.historyDirectory)
        try FileIO.syncDirectory(directory)
    }

    /// Starts a compaction on a background thread when the configuration's threshold is passed.
    func compactInBackgroundIfNeeded() {
        guard case .automatic(let threshold, let minimum) = configuration.compaction else { return }
        let start = state.withLock { state -> Bool in
            guard !state.compactionScheduled, state.failure == nil, state.active != nil else { return false }
            let bytes = state.logBytes
            guard bytes >= max(minimum, state.automaticCompactionFloor),
                state.deadFraction(baseline: baseline) >= threshold
            else { return false }
            state.compactionScheduled = true
            return true
        }
        guard start else { return }
        background.enter()
        Thread.detachNewThread { [self] in
            defer { background.leave() }
            var failure: DataStoreError?
            do {
                try compact()
            } catch let error as DataStoreError {
                failure = error
            } catch {
                failure = DataStoreError(.io, "compaction failed", underlyingError: error)
            }
            state.withLock { state in
                state.compactionScheduled = false
                state.lastCompactionError = failure
                // After a failure, wait for the log to grow by its minimum again before retrying.
                if failure != nil { state.automaticCompactionFloor = state.logBytes + max(minimum, 1 << 20) }
            }
        }
    }

    /// Waits for a background compaction the store started, if any.
    package func waitForBackgroundCompaction() {
        background.wait()
    }
}
