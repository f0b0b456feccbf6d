import Foundation
import ModelStore
import ModelStoreFileIO

/// The integrity check of a document: the header's `checksum`, `"crc32c:"` and eight lowercase
/// hexadecimal digits, the CRC-32C of every byte of the file except the checksum string's own
/// contents (the bytes between its quotes). The file stays plain, diffable JSON; a changed byte
/// anywhere else changes the checksum.
enum DocumentChecksum {
    /// The header key.
    static let key = "checksum"
    /// What the encoder writes first, then fills in.
    static let placeholder = Array("crc32c:00000000".utf8)
    private static let prefix = "crc32c:"

    /// The checksum of `bytes` without the bytes in `contents`.
    static func compute(_ bytes: UnsafeBufferPointer<UInt8>, excluding contents: Range<Int>) -> UInt32 {
        let raw = UnsafeRawBufferPointer(bytes)
        let head = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[..<contents.lowerBound]))
        return CRC32C.update(head, UnsafeRawBufferPointer(rebasing: raw[contents.upperBound...]))
    }

    /// The checksum's text: `crc32c:` and eight lowercase hexadecimal digits.
    static func text(_ crc: UInt32) -> [UInt8] {
        let digits = String(crc, radix: 16)
        return Array((prefix + String(repeating: "0", count: 8 - digits.count) + digits).utf8)
    }

    /// The checksum a header's text holds, or `nil` if it is not of the form `crc32c:xxxxxxxx`.
    static func parse(_ text: String) -> UInt32? {
        guard text.hasPrefix(prefix) else { return nil }
        let digits = text.dropFirst(prefix.count)
        guard digits.count == 8, digits.allSatisfy(\.isHexDigit) else { return nil }
        return UInt32(digits, radix: 16)
    }

    /// Fills in the checksum of the `count` bytes at `base`, whose placeholder is at `contents`.
    static func fill(_ base: UnsafeMutablePointer<UInt8>, count: Int, contents: Range<Int>) {
        let crc = compute(UnsafeBufferPointer(start: base, count: count), excluding: contents)
        for (index, byte) in text(crc).enumerated() { base[contents.lowerBound + index] = byte }
    }

    /// Inserts a `checksum` key holding the placeholder as the first key of the document `bytes`,
    /// which must be a JSON object, and returns where the placeholder's contents are.
    static func insertPlaceholder(into bytes: inout [UInt8]) -> Range<Int> {
        let brace = bytes.firstIndex(of: UInt8(ascii: "{"))!
        let line = Array("\n  \"\(key)\": \"".utf8)
        bytes.insert(contentsOf: line + placeholder + Array("\",".utf8), at: brace + 1)
        return (brace + 1 + line.count)..<(brace + 1 + line.count + placeholder.count)
    }

    /// The error for a document whose bytes do not match its checksum.
    static func mismatch(expected: UInt32, actual: UInt32, at contents: Range<Int>, document: String) -> JSONReadError {
        let command = "modelstore seal json:\(document)"
        let said = String(decoding: text(expected), as: UTF8.self)
        let given = String(decoding: text(actual), as: UTF8.self)
        return JSONReadError(
            offset: contents.lowerBound - 1,
            message:
                "the file does not match the checksum in its header (it says \(said), the file's bytes give \(given)): "
                + "it was changed after "
                + "ModelStore wrote it, by a hand edit or by damage",
            remedy:
                "If you edited it on purpose, accept the edit with '\(command)' (or open it once with the "
                + "configuration's 'acceptsHandEdits' set; the next save writes a new checksum); otherwise restore "
                + "the previous version from '\(document).backup'")
    }
}
