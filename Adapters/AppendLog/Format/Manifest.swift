import Foundation
import ModelStore
import ModelStoreFileIO

/// The file that says which checkpoint and which segments make up an append log's current state.
///
/// It is small text, replaced atomically (temporary file, sync, rename, sync directory), so
/// switching to a new checkpoint is one rename:
///
/// ```
/// ModelStore append log
/// format 1
/// store log-3f9a0c12
/// checkpoint checkpoint-00000004.mscheckpoint
/// first-segment 4
/// crc32c 1c2d3e4f
/// ```
struct Manifest: Sendable, Equatable {
    /// The manifest's file name in a store's directory.
    static let fileName = "manifest"
    private static let title = "ModelStore append log"

    /// The store's identifier, minted when the store is created.
    var storeIdentifier: String
    /// The checkpoint's file name, or `nil` before the first compaction.
    var checkpoint: String?
    /// The number of the first segment after the checkpoint (1 without one).
    var firstSegment: UInt64

    /// The manifest's text.
    func encoded() -> [UInt8] {
        var text = "\(Self.title)\nformat \(appendLogFormatVersion)\nstore \(storeIdentifier)\n"
        text += "checkpoint \(checkpoint ?? "none")\nfirst-segment \(firstSegment)\n"
        let crc = CRC32C.checksum(Array(text.utf8))
        text += "crc32c \(String(crc, radix: 16))\n"
        return Array(text.utf8)
    }

    /// Parses a manifest, or throws ``DataStoreError/Code/corrupted`` naming the file and what is wrong.
    static func decode(_ bytes: [UInt8], url: URL) throws -> Manifest {
        func damaged(_ reason: String) -> DataStoreError {
            DataStoreError(
                .corrupted, "the manifest '\(url.path)' is damaged: \(reason)",
                remedy:
                    "Run AppendLogStore.repair(at:) (or 'modelstore repair'), which rebuilds it from the "
                    + "checkpoint and segments",
                underlyingError: AppendLogDamage(file: url.lastPathComponent, offset: 0, reason: reason))
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let marker = text.range(of: "\ncrc32c ", options: .backwards) else {
            throw damaged("it has no checksum line")
        }
        let body = Array(text[...marker.lowerBound].utf8)
        let crcText = text[marker.upperBound...].trimmingCharacters(in: .newlines)
        guard crcText == String(CRC32C.checksum(body), radix: 16) else {
            throw damaged("its checksum line does not match its text")
        }
        var fields: [String: String] = [:]
        let lines = String(decoding: body, as: UTF8.self).split(separator: "\n").map(String.init)
        guard lines.first == title else { throw damaged("it does not start with '\(title)'") }
        for line in lines.dropFirst() {
            guard let space = line.firstIndex(of: " ") else { throw damaged("the line '\(line)' has no value") }
            fields[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        guard let format = fields["format"].flatMap(Int64.init) else { throw damaged("it has no format version") }
        if let refusal = FormatVersion.refusal(
            found: format, readable: appendLogFormatVersion...appendLogFormatVersion)
        {
            guard refusal.code == .corrupted else {
                throw AppendLogDamage(
                    file: url.lastPathComponent, offset: 0, reason: refusal.reason, code: refusal.code,
                    remedy: refusal.remedy
                ).error(directory: url.deletingLastPathComponent())
            }
            throw damaged(refusal.reason)
        }
        guard let store = fields["store"], !store.isEmpty else { throw damaged("it names no store identifier") }
        guard let checkpoint = fields["checkpoint"],
            checkpoint == "none"
                || LogLayout.number(
                    in: checkpoint, prefix: LogLayout.checkpointPrefix, suffix: LogLayout.checkpointSuffix) != nil
        else { throw damaged("it names no checkpoint file") }
        guard let first = fields["first-segment"].flatMap(UInt64.init), first >= 1 else {
            throw damaged("it names no first segment")
        }
        return Manifest(
            storeIdentifier: store, checkpoint: checkpoint == "none" ? nil : checkpoint, firstSegment: first)
    }
}
