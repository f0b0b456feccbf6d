import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreCrypto
import ModelStoreFileIO

/// The encryption of an append log: the `encryption` file that records it, and the sealing of
/// every frame but the headers.
///
/// `encryption` is two lines of text, written once when the store is created (before its
/// manifest) and replaced atomically by `modelstore rekey`:
///
/// ```
/// ModelStore encrypted log 1
/// aes-256-gcm kdf=none check=4be1…
/// ```
///
/// In an encrypted log every frame after a file's header frame (each transaction of a segment,
/// each chunk and the trailer of a checkpoint) carries, as its payload, the AES-256-GCM sealed box
/// of what a plaintext log's frame carries: nonce, ciphertext, tag (28 bytes more). Its
/// associated data binds it to its place: the store identifier and segment number for a
/// transaction (whose number, inside, must follow the one before), the store identifier,
/// checkpoint and frame index for a checkpoint's frames. The frame's CRC-32C covers the sealed
/// bytes, so a torn tail is told from damage as in a plaintext log; a record that passes its CRC
/// but fails authentication is damage too. Segment and checkpoint headers stay in the clear (the
/// schema, the store identifier, counts), so tools read a log's schema without its key.
struct LogCipher: Sendable {
    /// The file's name in a store's directory.
    static let fileName = "encryption"
    private static let signature = "ModelStore encrypted log 1"

    /// The cipher under the store's key.
    let cipher: AES256GCM

    /// The associated data of segment `number`'s transactions.
    static func segmentData(store: String, segment number: UInt64) -> [UInt8] {
        Array("segment \(store) \(number)".utf8)
    }

    /// The associated data of frame `index` after the header of the checkpoint based at `base`.
    static func checkpointData(store: String, base: UInt64, frame index: Int) -> [UInt8] {
        Array("checkpoint \(store) \(base) \(index)".utf8)
    }

    /// Replaces the frame that starts at `start` in `writer` (and runs to its end) with its sealed form.
    ///
    /// The payload is encrypted where it is: room for the nonce is made before it and for the tag
    /// after it, so a large record is not copied.
    func seal(frameIn writer: inout ByteWriter, from start: Int, associatedData: [UInt8]) throws {
        let payload = start + Frame.headerSize
        writer.bytes.reserveCapacity(writer.count + AES256GCM.overhead)
        writer.bytes.insert(contentsOf: repeatElement(0, count: AES256GCM.nonceSize), at: payload)
        writer.bytes.append(contentsOf: repeatElement(0, count: AES256GCM.tagSize))
        try writer.bytes.withUnsafeMutableBytes { raw in
            try associatedData.withUnsafeBytes {
                try cipher.seal(inPlace: UnsafeMutableRawBufferPointer(rebasing: raw[payload...]), associatedData: $0)
            }
        }
        try Frame.finish(&writer, at: start)
    }

    /// The plaintext of the sealed payload at `payload` in `raw`, or `nil` when it fails authentication.
    func open(_ raw: UnsafeRawBufferPointer, payload: Range<Int>, associatedData: [UInt8]) -> [UInt8]? {
        associatedData.withUnsafeBytes {
            cipher.open(UnsafeRawBufferPointer(rebasing: raw[payload]), associatedData: $0)
        }
    }

    /// The text of the `encryption` file for `header`.
    static func encoded(_ header: EncryptionHeader) -> [UInt8] {
        Array("\(signature)\n\(header.encoded)\n".utf8)
    }

    /// The header recorded in the log in `directory`, or `nil` when the log is not encrypted.
    static func header(in directory: URL) throws -> EncryptionHeader? {
        let url = directory.appendingPathComponent(fileName)
        guard let bytes = try FileIO.read(url.path, limit: 64 * 1024)?.bytes else { return nil }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard lines.count == 2, lines[0] == signature else {
            throw DataStoreError(
                .corrupted, "the encryption header '\(url.path)' of the append log is damaged",
                remedy: "Restore it from a backup of the store; without it the log cannot be read")
        }
        return try EncryptionHeader(decoding: String(lines[1]), store: directory.path)
    }

    /// The cipher of the log in `directory`, unlocked with `source`, or `nil` for a plaintext log.
    ///
    /// A log with no manifest yet is a new one: with a key, its `encryption` file is written now
    /// (atomically, with `permissions`), before anything else, unless `creating` is off. Throws
    /// ``DataStoreError/Code/keyRequired`` for an encrypted log and no key,
    /// ``DataStoreError/Code/wrongKey`` for a key that is not its own, and
    /// ``DataStoreError/Code/invalidConfiguration`` for a key and a plaintext log; none writes
    /// anything.
    static func unlock(
        directory: URL, source: EncryptionKeySource?, hasManifest: Bool, creating: Bool,
        permissions: FilePermissions = .private
    ) throws -> LogCipher? {
        if let header = try header(in: directory) {
            guard let source else { throw DataStoreError.keyRequired(store: directory.path) }
            return LogCipher(cipher: try header.unlock(with: source, store: directory.path))
        }
        guard let source else { return nil }
        guard !hasManifest else { throw DataStoreError.notEncrypted(store: directory.path) }
        guard creating else { return nil }
        let (header, cipher) = try EncryptionHeader.create(for: source)
        try FileIO.writeAtomically(
            encoded(header), to: directory.appendingPathComponent(fileName), permissions: permissions)
        return LogCipher(cipher: cipher)
    }
}
