import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreCrypto
import ModelStoreFileIO

/// Opens or creates an append log: checks the directory, takes the lock, loads the checkpoint,
/// replays the segments, then (only once everything has loaded) cuts off a torn tail, finishes an
/// interrupted compaction's clean-up, and picks the segment to append to.
struct LogOpener {
    let directory: URL
    let schema: Schema
    let shapes: ShapeTable
    /// The bits of the files and folders the log creates.
    var permissions: FilePermissions = .private
    /// Where an encrypted log's key comes from; `nil` for a plaintext log.
    var encryption: EncryptionKeySource?
    /// The cipher, once ``open()`` or ``openReadOnly()`` has unlocked the log.
    private(set) var cipher: LogCipher?

    /// An opened log.
    struct Opened {
        var storeIdentifier: String
        var tornTail: AppendLogTornTail?
        var state: LogState
        var baseline: Int
    }

    private var layout: LogLayout { LogLayout(directory: directory, permissions: permissions, cipher: cipher) }

    mutating func open() throws -> Opened {
        try checkIsLogOrEmpty(try layout.list())
        try FileIO.createDirectory(directory, permissions: permissions)
        let lock = try DirectoryLock.acquire(directory: directory, permissions: permissions)
        // Listed again under the lock: another process may have created the store meanwhile.
        let listing = try layout.list()
        try checkIsLogOrEmpty(listing)
        cipher = try LogCipher.unlock(
            directory: directory, source: encryption, hasManifest: listing.hasManifest, creating: true,
            permissions: permissions)
        var opened = listing.hasManifest ? try openExisting(listing) : try create()
        try lock.recordHolder()
        opened.state.lock = lock
        return opened
    }

    /// Refuses a directory that holds files but no manifest: it is not ours to write into.
    private func checkIsLogOrEmpty(_ listing: LogLayout.Listing) throws {
        if FileIO.exists(directory) && !FileIO.isDirectory(directory) {
            throw DataStoreError(
                .invalidConfiguration, "the append log location '\(directory.path)' is a file, not a directory",
                remedy: "Give the store a directory of its own, for example '\(directory.path).log'")
        }
        guard !listing.hasManifest else { return }
        let foreign = listing.others + listing.checkpoints + listing.segments.map(LogLayout.segmentName)
        guard foreign.isEmpty && listing.history.isEmpty else {
            let names = foreign.prefix(3).map { "'\($0)'" }.joined(separator: ", ")
            throw DataStoreError(
                .invalidConfiguration,
                "the directory '\(directory.path)' is not an append log: it has no manifest but holds \(names)",
                remedy:
                    "Use a new or empty directory; if it is an append log whose manifest was lost, run "
                    + "AppendLogStore.repair(at:)"
            )
        }
    }

    private func create() throws -> Opened {
        let storeIdentifier = "log-" + UUID().uuidString.prefix(8).lowercased()
        let manifest = Manifest(storeIdentifier: storeIdentifier, checkpoint: nil, firstSegment: 1)
        try FileIO.writeAtomically(manifest.encoded(), to: layout.manifestURL, permissions: permissions)
        let active = try ActiveSegment.create(
            layout: layout, number: 1, storeIdentifier: storeIdentifier, firstTransaction: 1, shapes: shapes)
        let state = LogState(
            table: SnapshotTable(schema: schema), active: active,
            segments: [SegmentSummary(number: 1, byteCount: active.end, firstTransaction: 1, transactionCount: 0)],
            lastTransaction: 0, checkpoint: nil, liveBytes: LiveSize())
        return Opened(
            storeIdentifier: storeIdentifier, tornTail: nil, state: state, baseline: try baseline(storeIdentifier))
    }

    /// Opens the log for reading only: loads it as ``open()`` does but writes nothing and takes no
    /// lock. Refuses a directory with no log, and a log a writer has open (it may be appending or
    /// compacting as this reads). A torn tail is skipped, not cut off, and an interrupted
    /// compaction's clean-up is left for the next writable open. The state has no active segment.
    mutating func openReadOnly() throws -> Opened {
        let listing = try layout.list()
        try checkIsLogOrEmpty(listing)
        guard listing.hasManifest else {
            throw DataStoreError(
                .notFound,
                "there is no append log in '\(directory.path)', and a read-only configuration (allowsSave: false) "
                    + "does not create one",
                remedy: "Check the path, or open the store once with a configuration that allows saves")
        }
        cipher = try LogCipher.unlock(directory: directory, source: encryption, hasManifest: true, creating: false)
        let (holds, holder) = DirectoryLock.isLocked(directory: directory)
        if holds {
            var error = DirectoryLock.lockedError(directory: directory, holder: holder)
            error.message += "; a read-only open reads a log that no writer has open"
            throw error
        }
        let (manifest, read) = try load(listing)
        var loaded = read
        if let scan = loaded.lastScan, scan.torn != nil, !loaded.segments.isEmpty {
            if scan.header == nil {
                loaded.segments.removeLast()
            } else {
                loaded.segments[loaded.segments.count - 1].byteCount = scan.end
            }
        }
        let state = LogState(
            table: loaded.table, active: nil, segments: loaded.segments, lastTransaction: loaded.lastTransaction,
            checkpoint: loaded.checkpoint, liveBytes: loaded.liveBytes)
        return Opened(
            storeIdentifier: manifest.storeIdentifier, tornTail: nil, state: state,
            baseline: try baseline(manifest.storeIdentifier))
    }

    /// Reads the manifest, loads the checkpoint and segments, and checks the log against its
    /// `synced` mark; writes nothing.
    private func load(_ listing: LogLayout.Listing) throws -> (Manifest, LoadedLog) {
        let manifestBytes = try OpenFile(layout.manifestURL, writable: false).readAll()
        let manifest = try Manifest.decode(manifestBytes, url: layout.manifestURL)
        let loaded: LoadedLog
        do {
            loaded = try LogLoader.load(layout: layout, manifest: manifest, listing: listing, schema: schema)
        } catch let damage as AppendLogDamage {
            throw damage.error(directory: directory)
        }
        if let synced = SyncedMark.read(directory: directory), synced > loaded.lastTransaction,
            let last = loaded.segments.last
        {
            let scan = loaded.lastScan
            throw SyncedMark.truncation(
                synced: synced, last: loaded.lastTransaction, segment: LogLayout.segmentName(last.number),
                end: scan?.end ?? last.byteCount, torn: scan?.torn != nil
            ).error(directory: directory)
        }
        return (manifest, loaded)
    }

    private func openExisting(_ listing: LogLayout.Listing) throws -> Opened {
        let (manifest, read) = try load(listing)
        var loaded = read
        // Everything has loaded: from here on, opening may write.
        var tornTail: AppendLogTornTail?
        var reusable: OpenFile?
        if let scan = loaded.lastScan, let last = loaded.segments.last {
            let url = layout.segmentURL(last.number)
            if let reason = scan.torn {
                tornTail = try layout.cutTornTail(
                    of: last.number, at: scan.end, byteCount: scan.byteCount, reason: reason)
                tornTail?.syncedThrough = SyncedMark.read(directory: directory)
                if scan.header == nil { loaded.segments.removeLast() }
            }
            if let header = scan.header, header.shapes == shapes {
                reusable = try OpenFile(url, writable: true)
            }
        }
        let active: ActiveSegment
        if let reusable, let scan = loaded.lastScan {
            active = ActiveSegment(
                number: loaded.segments.last!.number, file: reusable, headerEnd: scan.headerEnd, end: scan.end)
        } else {
            let number = loaded.segments.last.map { $0.number + 1 } ?? manifest.firstSegment
            active = try ActiveSegment.create(
                layout: layout, number: number, storeIdentifier: manifest.storeIdentifier,
                firstTransaction: loaded.lastTransaction + 1, shapes: shapes)
            loaded.segments.append(
                SegmentSummary(
                    number: number, byteCount: active.end, firstTransaction: loaded.lastTransaction + 1,
                    transactionCount: 0))
        }
        try finishInterruptedCompaction(listing, manifest: manifest)
        let state = LogState(
            table: loaded.table, active: active, segments: loaded.segments, lastTransaction: loaded.lastTransaction,
            checkpoint: loaded.checkpoint, liveBytes: loaded.liveBytes)
        return Opened(
            storeIdentifier: manifest.storeIdentifier, tornTail: tornTail, state: state,
            baseline: try baseline(manifest.storeIdentifier))
    }

    /// Completes what a compaction interrupted by a crash left: segments the new checkpoint
    /// replaced move to `history/`, and checkpoints or temporary files the manifest does not name go.
    private func finishInterruptedCompaction(_ listing: LogLayout.Listing, manifest: Manifest) throws {
        let replaced = listing.segments.filter { $0 < manifest.firstSegment }
        if !replaced.isEmpty {
            try FileIO.createDirectory(layout.historyDirectory, permissions: permissions)
            for number in replaced {
                try FileIO.rename(layout.segmentURL(number), to: layout.historyURL(number))
            }
            try FileIO.syncDirectory(layout.historyDirectory)
        }
        for name in listing.checkpoints where name != manifest.checkpoint { try FileIO.remove(layout.url(name)) }
        for name in listing.temporaries { try FileIO.remove(layout.url(name)) }
        if !replaced.isEmpty || !listing.temporaries.isEmpty || listing.checkpoints.count > 1 {
            try FileIO.syncDirectory(directory)
        }
    }

    private func baseline(_ storeIdentifier: String) throws -> Int {
        try CheckpointFile.baselineBytes(storeIdentifier: storeIdentifier, shapes: shapes)
    }
}
