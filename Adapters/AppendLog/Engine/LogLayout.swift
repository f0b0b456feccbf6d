import Foundation
import ModelStore
import ModelStoreFileIO

/// The names of the files in an append log's directory, and a listing of them.
///
/// ```
/// manifest                          which checkpoint and segments are current
/// lock                              the single-writer lock (holder's pid)
/// checkpoint-00000004.mscheckpoint  the live data as of the start of segment 4
/// segment-00000004.mslog            transactions after the checkpoint, in order
/// segment-00000005.mslog
/// history/segment-00000001.mslog    segments a compaction replaced, kept as history
/// damaged/…                         what repair or recovery set aside
/// ```
struct LogLayout {
    /// The store's directory.
    let directory: URL
    /// The bits of the files and folders the log creates in it.
    var permissions: FilePermissions = .private
    /// The cipher of an encrypted log (see ``LogCipher``), `nil` for a plaintext one.
    var cipher: LogCipher?

    init(directory: URL, permissions: FilePermissions = .private, cipher: LogCipher? = nil) {
        self.directory = directory
        self.permissions = permissions
        self.cipher = cipher
    }

    static let segmentPrefix = "segment-"
    static let segmentSuffix = ".mslog"
    static let checkpointPrefix = "checkpoint-"
    static let checkpointSuffix = ".mscheckpoint"
    static let historyDirectoryName = "history"
    static let damagedDirectoryName = "damaged"

    /// The file name of segment `number`.
    static func segmentName(_ number: UInt64) -> String { segmentPrefix + padded(number) + segmentSuffix }

    /// The file name of the checkpoint whose first following segment is `base`.
    static func checkpointName(_ base: UInt64) -> String { checkpointPrefix + padded(base) + checkpointSuffix }

    private static func padded(_ number: UInt64) -> String {
        let digits = String(number)
        return digits.count >= 8 ? digits : String(repeating: "0", count: 8 - digits.count) + digits
    }

    /// The number in a file name with this prefix and suffix, if it is one.
    static func number(in name: String, prefix: String, suffix: String) -> UInt64? {
        guard name.hasPrefix(prefix), name.hasSuffix(suffix), name.count > prefix.count + suffix.count else {
            return nil
        }
        return UInt64(name.dropFirst(prefix.count).dropLast(suffix.count))
    }

    var manifestURL: URL { directory.appendingPathComponent(Manifest.fileName) }
    var historyDirectory: URL { directory.appendingPathComponent(Self.historyDirectoryName) }
    var damagedDirectory: URL { directory.appendingPathComponent(Self.damagedDirectoryName) }

    func segmentURL(_ number: UInt64) -> URL { directory.appendingPathComponent(Self.segmentName(number)) }
    func historyURL(_ number: UInt64) -> URL { historyDirectory.appendingPathComponent(Self.segmentName(number)) }
    func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    /// A name in `damaged/` for a file set aside, that does not overwrite an earlier one.
    func damagedURL(for name: String) -> URL {
        var candidate = damagedDirectory.appendingPathComponent(name)
        var index = 2
        while FileIO.exists(candidate) {
            candidate = damagedDirectory.appendingPathComponent("\(name).\(index)")
            index += 1
        }
        return candidate
    }

    /// What the directory holds.
    struct Listing {
        /// Whether the manifest exists.
        var hasManifest = false
        /// Segment numbers in the directory itself, ascending.
        var segments: [UInt64] = []
        /// Checkpoint file names.
        var checkpoints: [String] = []
        /// Leftover temporary files.
        var temporaries: [String] = []
        /// Entries that are not part of an append log.
        var others: [String] = []
        /// Segment numbers in `history/`, ascending.
        var history: [UInt64] = []
    }

    /// Lists the directory.
    func list() throws -> Listing {
        var listing = Listing()
        for name in try FileIO.contents(of: directory) {
            if name == Manifest.fileName {
                listing.hasManifest = true
            } else if let number = Self.number(in: name, prefix: Self.segmentPrefix, suffix: Self.segmentSuffix) {
                listing.segments.append(number)
            } else if Self.number(in: name, prefix: Self.checkpointPrefix, suffix: Self.checkpointSuffix) != nil {
                listing.checkpoints.append(name)
            } else if name.hasSuffix(".tmp") {
                listing.temporaries.append(name)
            } else if name != DirectoryLock.fileName && name != SyncedMark.fileName && name != LogCipher.fileName
                && name != Self.historyDirectoryName
                && name != Self.damagedDirectoryName && !name.hasPrefix(".")
            {
                listing.others.append(name)
            }
        }
        listing.segments.sort()
        for name in try FileIO.contents(of: historyDirectory) {
            if let number = Self.number(in: name, prefix: Self.segmentPrefix, suffix: Self.segmentSuffix) {
                listing.history.append(number)
            }
        }
        listing.history.sort()
        return listing
    }

    /// The segments after the manifest's checkpoint, checked to run without a gap from the first.
    func liveSegments(_ listing: Listing, manifest: Manifest) throws -> [UInt64] {
        let live = listing.segments.filter { $0 >= manifest.firstSegment }
        for (index, number) in live.enumerated() where number != manifest.firstSegment + UInt64(index) {
            let missing = Self.segmentName(manifest.firstSegment + UInt64(index))
            throw AppendLogDamage(file: missing, offset: 0, reason: "the segment is missing, but later segments exist")
        }
        return live
    }
}

extension LogLayout {
    /// Keeps a torn tail's bytes in `damaged/`, then cuts segment `number` back to its last whole
    /// record; a segment torn inside its own header is removed (it holds no record).
    func cutTornTail(
        of number: UInt64, at offset: Int, byteCount: Int, reason: AppendLogTornTail.Reason
    ) throws -> AppendLogTornTail {
        let name = Self.segmentName(number)
        let url = segmentURL(number)
        let file = try OpenFile(url, writable: true)
        let dropped = try file.read(count: byteCount - offset, at: offset)
        var savedAs: String?
        if dropped.contains(where: { $0 != 0 }) {
            try FileIO.createDirectory(damagedDirectory, permissions: permissions)
            let destination = damagedURL(for: "torn-\(name)-at-\(offset)")
            try FileIO.writeAtomically(dropped, to: destination, permissions: permissions)
            savedAs = Self.damagedDirectoryName + "/" + destination.lastPathComponent
        }
        if case .incompleteSegmentHeader = reason {
            try FileIO.remove(url)
            try FileIO.syncDirectory(directory)
        } else {
            try file.truncate(to: offset)
            try file.sync()
        }
        return AppendLogTornTail(
            segment: name, offset: offset, droppedByteCount: byteCount - offset, reason: reason, savedAs: savedAs)
    }

    /// Moves bytes `offset...` of the file at `relativePath` into `damaged/` (the whole file when
    /// `offset` is 0, by renaming it), and describes what was moved.
    func setAside(
        _ relativePath: String, from offset: Int, intact: (count: Int, transactions: ClosedRange<UInt64>?)
    )
        throws -> AppendLogRepairReport.SetAside
    {
        let url = directory.appendingPathComponent(relativePath)
        try FileIO.createDirectory(damagedDirectory, permissions: permissions)
        let baseName = relativePath.replacingOccurrences(of: "/", with: "-")
        let size = FileIO.size(of: url)
        let destination: URL
        if offset == 0 {
            destination = damagedURL(for: baseName)
            try FileIO.rename(url, to: destination)
            try FileIO.syncDirectory(url.deletingLastPathComponent())
        } else {
            destination = damagedURL(for: "\(baseName).from-\(offset)")
            let file = try OpenFile(url, writable: true)
            try FileIO.writeAtomically(
                try file.read(count: size - offset, at: offset), to: destination, permissions: permissions)
            try file.truncate(to: offset)
            try file.sync()
        }
        try FileIO.syncDirectory(damagedDirectory)
        return AppendLogRepairReport.SetAside(
            file: relativePath, offset: offset, byteCount: size - offset,
            savedAs: Self.damagedDirectoryName + "/" + destination.lastPathComponent,
            intactRecordCount: intact.count, transactions: intact.transactions)
    }
}
