import Foundation
import ModelStore
import ModelStoreFileIO

/// The `synced` file of an append log: the number of a transaction known to be on stable storage,
/// so that opening and `verify` can tell a log cut short from outside (which loses acknowledged
/// transactions) from the torn tail a crash leaves (which never does).
///
/// It is 20 bytes: the signature `MSLOGSYN`, the transaction number (UInt64, little-endian), and
/// the CRC-32C of those 16 bytes (UInt32). It is overwritten in place, without a sync of its
/// own, only *after* a sync of the log has returned; so whatever value reaches the disk, the log
/// held that transaction durably first, and the value is a lower bound of what the log must hold.
/// After a power loss it may be older than the last sync, never newer. A missing or unreadable
/// mark (an older store, a torn overwrite) says nothing and is not an error.
enum SyncedMark {
    /// The file's name in a store's directory.
    static let fileName = "synced"
    private static let signature = Array("MSLOGSYN".utf8)
    /// The file's size.
    static let size = 20

    /// The file's bytes for `transaction`.
    static func encoded(_ transaction: UInt64) -> [UInt8] {
        var bytes = signature
        withUnsafeBytes(of: transaction.littleEndian) { bytes += $0 }
        withUnsafeBytes(of: CRC32C.checksum(bytes).littleEndian) { bytes += $0 }
        return bytes
    }

    /// The transaction the mark in `directory` records, or `nil` if there is no readable mark.
    static func read(directory: URL) -> UInt64? {
        guard let bytes = try? FileIO.read(directory.appendingPathComponent(fileName).path, limit: 64)?.bytes,
            bytes.count == size, bytes.prefix(8).elementsEqual(signature)
        else { return nil }
        let body = Array(bytes.prefix(16))
        let number = body.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian }
        let crc = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: UInt32.self).littleEndian }
        return crc == CRC32C.checksum(body) ? number : nil
    }

    /// Replaces the mark atomically (repair, after it cut the log back): the log's last kept transaction.
    static func replace(directory: URL, with transaction: UInt64, permissions: FilePermissions = .private) throws {
        try FileIO.writeAtomically(
            encoded(transaction), to: directory.appendingPathComponent(fileName), permissions: permissions)
    }

    /// The damage a log shows when it holds fewer transactions than its mark says were synced.
    static func truncation(
        synced: UInt64, last: UInt64, segment: String, end: Int, torn: Bool
    ) -> AppendLogDamage {
        AppendLogDamage(
            file: segment, offset: end,
            reason: "the log ends after transaction \(last) (at byte \(end)\(torn ? ", in a torn tail" : "")), but "
                + "its '\(fileName)' mark says transactions up to \(synced) had been synced: the log was cut short "
                + "after it was written, which a crash does not do, and acknowledged transactions are missing")
    }
}

/// The open `synced` file of a store: the group commit records in it each sync that returns.
final class SyncedMarkFile: Sendable {
    private let file: OpenFile

    /// Opens (creating if needed) the mark of the store in `directory`. Call once the store has opened.
    init(directory: URL, permissions: FilePermissions = .private) throws {
        file = try OpenFile(
            directory.appendingPathComponent(SyncedMark.fileName), writable: true, create: true,
            permissions: permissions)
    }

    /// Records that every transaction up to `transaction` is on stable storage. Best effort: a
    /// failure only leaves an older (still true) mark.
    func record(_ transaction: UInt64) {
        try? file.write(SyncedMark.encoded(transaction), at: 0)
    }
}
