import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreCrypto
import ModelStoreFileIO

extension AppendLogStore {
    /// Repairs the append log in `directory`, which must not be open: keeps every valid
    /// transaction before the first damage, moves the damaged part and everything after it into
    /// `damaged/` (nothing is deleted), and reports exactly what it set aside.
    ///
    /// What it does, in order:
    /// 1. An unreadable manifest is rebuilt from the newest intact checkpoint (or, without one,
    ///    from the segments), and the old manifest is set aside.
    /// 2. A damaged checkpoint is replaced by the segments kept in `history/`, when they reach
    ///    back to the store's first transaction; otherwise repair stops with
    ///    ``DataStoreError/Code/corrupted`` and changes nothing further.
    /// 3. Damage in a segment: the segment is cut at the damaged record (its rest set aside), and
    ///    every later segment is set aside whole. The set-aside parts are scanned for records that
    ///    still pass their checksums, which the report counts.
    /// 4. Damage in `history/` is cut the same way.
    /// 5. A torn tail is cut off as opening would.
    ///
    /// Transactions after the damage are not kept even when intact: each transaction may depend on
    /// the ones before it, so a log with a hole is not a valid history. The store's next
    /// transactions take the numbers after the last one kept.
    ///
    /// Throws ``DataStoreError/Code/locked`` if the store is open, and
    /// ``DataStoreError/Code/notFound`` if the directory holds no append log.
    ///
    /// An encrypted log needs its key (`encryption`): a record that fails authentication is damage.
    public static func repair(
        at directory: URL, encryption: EncryptionKeySource? = nil
    ) throws -> AppendLogRepairReport {
        // What repair writes keeps the bits of the log's manifest.
        let manifest = directory.standardizedFileURL.appendingPathComponent(Manifest.fileName).path
        let layout = LogLayout(
            directory: directory.standardizedFileURL, permissions: .matching(fileAt: manifest),
            cipher: try cipher(directory, encryption))
        let listing = try layout.list()
        guard listing.hasManifest || !listing.segments.isEmpty || !listing.checkpoints.isEmpty else {
            throw DataStoreError(
                .notFound, "'\(layout.directory.path)' is not an append log: it has no manifest, checkpoint or segment",
                remedy: "Check the path")
        }
        let lock = try DirectoryLock.acquire(directory: layout.directory, permissions: layout.permissions)
        defer { withExtendedLifetime(lock) {} }
        var repairer = LogRepairer(layout: layout)
        return try repairer.run()
    }
}

/// The steps of ``AppendLogStore/repair(at:)``.
struct LogRepairer {
    let layout: LogLayout
    var setAside: [AppendLogRepairReport.SetAside] = []
    var rebuiltManifest = false
    var rebuiltFromHistory = false

    init(layout: LogLayout) { self.layout = layout }

    mutating func run() throws -> AppendLogRepairReport {
        try ensureManifest()
        var analysis = try LogAnalysis.run(directory: layout.directory, keepValues: false, cipher: layout.cipher)
        let found = analysis.firstDamage
        if let damage = found {
            if let segment = analysis.damagedSegment {
                try cutLiveSegments(from: segment, at: damage, listing: analysis.listing)
            } else {
                try rebuildFromHistory(analysis, damage: damage)
            }
            // The transactions after the damage are gone: the 'synced' mark must not ask for them.
            if let synced = SyncedMark.read(directory: layout.directory), synced > analysis.lastTransaction {
                try SyncedMark.replace(
                    directory: layout.directory, with: analysis.lastTransaction, permissions: layout.permissions)
            }
            analysis = try LogAnalysis.run(directory: layout.directory, keepValues: false, cipher: layout.cipher)
            if let left = analysis.firstDamage {
                throw left.error(directory: layout.directory)
            }
        }
        let historyDamage = analysis.problems.filter { $0.file.hasPrefix(LogLayout.historyDirectoryName + "/") }
        for damage in historyDamage { try cutHistory(damage) }
        var torn: AppendLogTornTail?
        if let tail = analysis.torn {
            torn = try layout.cutTornTail(
                of: tail.number, at: tail.offset, byteCount: tail.byteCount, reason: tail.reason)
            torn?.syncedThrough = SyncedMark.read(directory: layout.directory)
        }
        return AppendLogRepairReport(
            damage: found, historyDamage: historyDamage, lastKeptTransaction: analysis.lastTransaction,
            setAside: setAside, tornTail: torn, rebuiltManifest: rebuiltManifest, rebuiltFromHistory: rebuiltFromHistory
        )
    }

    // MARK: Manifest

    private mutating func ensureManifest() throws {
        let listing = try layout.list()
        if listing.hasManifest {
            do {
                _ = try Manifest.decode(
                    try OpenFile(layout.manifestURL, writable: false).readAll(), url: layout.manifestURL)
                return
            } catch let error as DataStoreError where error.underlyingError is AppendLogDamage {
                // Unreadable: rebuilt below.
            }
        }
        let manifest = try rebuiltManifest(listing)
        if listing.hasManifest {
            setAside.append(try layout.setAside(Manifest.fileName, from: 0, intact: (0, nil)))
        }
        try FileIO.writeAtomically(manifest.encoded(), to: layout.manifestURL, permissions: layout.permissions)
        rebuiltManifest = true
    }

    /// The manifest the files imply: the newest intact checkpoint, or the segments from the first.
    private func rebuiltManifest(_ listing: LogLayout.Listing) throws -> Manifest {
        func number(_ name: String) -> UInt64 {
            LogLayout.number(in: name, prefix: LogLayout.checkpointPrefix, suffix: LogLayout.checkpointSuffix) ?? 0
        }
        let checkpoints = listing.checkpoints.sorted { number($0) > number($1) }
        for name in checkpoints {
            guard let bytes = try? OpenFile(layout.url(name), writable: false).readAll(),
                let (header, _) = try? CheckpointFile.read(bytes, name: name, cipher: layout.cipher, visit: { _, _ in })
            else { continue }
            return Manifest(storeIdentifier: header.storeIdentifier, checkpoint: name, firstSegment: header.baseSegment)
        }
        let segments = listing.segments
        guard let first = segments.first else {
            throw DataStoreError(
                .corrupted,
                "the append log '\(layout.directory.path)' has no intact checkpoint and no segment to rebuild "
                    + "its manifest from",
                remedy: "Restore the store from a backup")
        }
        for number in segments {
            guard let bytes = try? OpenFile(layout.segmentURL(number), writable: false).read(count: 1 << 20, at: 0),
                let (header, _) = SegmentScanner.header(of: bytes)
            else { continue }
            if first == 1 || listing.history.first == 1 {
                return Manifest(storeIdentifier: header.storeIdentifier, checkpoint: nil, firstSegment: min(first, 1))
            }
            throw DataStoreError(
                .corrupted,
                "the append log '\(layout.directory.path)' has no intact checkpoint, and its segments start at "
                    + "\(first): the transactions before are gone",
                remedy: "Restore the store from a backup")
        }
        throw DataStoreError(
            .corrupted,
            "no segment of the append log '\(layout.directory.path)' has a readable header to rebuild its "
                + "manifest from",
            remedy: "Restore the store from a backup")
    }

    // MARK: Checkpoint

    /// Replaces a damaged checkpoint by moving the history segments it was built from back into the log.
    private mutating func rebuildFromHistory(_ analysis: LogAnalysis, damage: AppendLogDamage) throws {
        guard let manifest = analysis.manifest else { throw damage.error(directory: layout.directory) }
        let needed = Array(1..<max(manifest.firstSegment, 1))
        let damagedHistory = Set(analysis.problems.map(\.file))
        let available = needed.allSatisfy { number in
            analysis.listing.history.contains(number)
                && !damagedHistory.contains(LogLayout.historyDirectoryName + "/" + LogLayout.segmentName(number))
        }
        guard available else {
            var error = damage.error(directory: layout.directory)
            error.message +=
                "; the segments in 'history/' do not reach back to the first transaction, so it cannot be rebuilt"
            error.remedy = "Restore the store from a backup"
            throw error
        }
        for number in needed { try FileIO.rename(layout.historyURL(number), to: layout.segmentURL(number)) }
        if let name = manifest.checkpoint, FileIO.exists(layout.url(name)) {
            setAside.append(try layout.setAside(name, from: 0, intact: (0, nil)))
        }
        try FileIO.syncDirectory(layout.historyDirectory)
        let rebuilt = Manifest(storeIdentifier: manifest.storeIdentifier, checkpoint: nil, firstSegment: 1)
        try FileIO.writeAtomically(rebuilt.encoded(), to: layout.manifestURL, permissions: layout.permissions)
        rebuiltFromHistory = true
    }

    // MARK: Segments

    /// Cuts live segment `number` at the damage and sets aside every later segment.
    private mutating func cutLiveSegments(
        from number: UInt64, at damage: AppendLogDamage, listing: LogLayout.Listing
    ) throws {
        let url = layout.segmentURL(number)
        if FileIO.exists(url) { setAside.append(try cut(LogLayout.segmentName(number), at: damage.offset)) }
        for later in listing.segments where later > number {
            let name = LogLayout.segmentName(later)
            let bytes = (try? OpenFile(layout.segmentURL(later), writable: false).readAll()) ?? []
            let header = SegmentScanner.header(of: bytes)
            let context = header.map {
                IdentifierContext(storeIdentifier: $0.header.storeIdentifier, shapes: $0.header.shapes)
            }
            let intact = SegmentScanner.intactRecords(
                from: header?.end ?? 0, in: bytes, context: context, segment: header?.header.number ?? 0,
                cipher: layout.cipher)
            setAside.append(try layout.setAside(name, from: 0, intact: intact))
        }
        try FileIO.syncDirectory(layout.directory)
    }

    private mutating func cutHistory(_ damage: AppendLogDamage) throws {
        setAside.append(try cut(damage.file, at: damage.offset))
    }

    /// Sets aside the file at `relativePath` from the damaged record at `offset` on (or whole,
    /// when the damage is in its header), counting the intact records in what is set aside.
    private func cut(_ relativePath: String, at offset: Int) throws -> AppendLogRepairReport.SetAside {
        let bytes = try OpenFile(layout.directory.appendingPathComponent(relativePath), writable: false).readAll()
        let header = SegmentScanner.header(of: bytes)
        let context = header.map {
            IdentifierContext(storeIdentifier: $0.header.storeIdentifier, shapes: $0.header.shapes)
        }
        guard let header, offset >= header.end else {
            let intact = SegmentScanner.intactRecords(
                from: header?.end ?? 0, in: bytes, context: context, segment: header?.header.number ?? 0,
                cipher: layout.cipher)
            return try layout.setAside(relativePath, from: 0, intact: intact)
        }
        let intact = SegmentScanner.intactRecords(
            from: offset + 1, in: bytes, context: context, segment: header.header.number, cipher: layout.cipher)
        return try layout.setAside(relativePath, from: offset, intact: intact)
    }
}
