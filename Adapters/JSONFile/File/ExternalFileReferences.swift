import Foundation
import ModelStore

/// The `{"$file": name}` tags of a document: each external file's name and where its string is.
///
/// Found by walking the JSON itself rather than by decoding records, so the records of entities the
/// schema does not know (kept byte for byte) count too. A key that reads `$file` can only be a tag:
/// a dictionary key that starts with `$` is written with one more `$`.
struct ExternalFileReferences {
    /// Each tag's file name and the place of its string's contents (between the quotes), in
    /// document order.
    private(set) var tags: [(name: String, contents: Range<Int>)] = []

    /// The names, each once.
    var names: Set<String> { Set(tags.map(\.name)) }

    /// The tags of the document `bytes`; throws a ``JSONReadError`` for bytes that are not JSON.
    init(_ bytes: [UInt8], limits: JSONReadLimits) throws {
        tags = try bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer, limits: limits)
            var found: [(name: String, contents: Range<Int>)] = []
            try Self.walk(&scanner, into: &found)
            return found
        }
    }

    private static let fileKey = Array("$file".utf8)

    private static func walk(
        _ scanner: inout JSONScanner, into found: inout [(name: String, contents: Range<Int>)]
    ) throws {
        switch try scanner.peekKind() {
        case .object:
            try scanner.enterObject()
            var first = true
            while let key = try scanner.nextKey(&first) {
                let isFile = try scanner.withUTF8(of: key) { $0.elementsEqual(fileKey) }
                if isFile, try scanner.peekKind() == .string {
                    let value = try scanner.scanString()
                    found.append((try scanner.string(of: value), value.start..<(value.start + value.count)))
                } else {
                    try walk(&scanner, into: &found)
                }
            }
        case .array:
            try scanner.enterArray()
            var first = true
            while try scanner.nextElement(&first) { try walk(&scanner, into: &found) }
        default:
            try scanner.skipValue()
        }
    }

    /// `bytes` with every tag naming the file `renamed` maps to its new name, and the checksum whose
    /// contents are at `checksum` (if the document has one) written again over the new bytes.
    func rewriting(_ bytes: [UInt8], renamed: [String: String], checksum: Range<Int>?) -> [UInt8] {
        var edits: [(range: Range<Int>, replacement: [UInt8])] = tags.compactMap { tag in
            renamed[tag.name].map { (tag.contents, Array($0.utf8)) }
        }
        if let checksum { edits.append((checksum, DocumentChecksum.placeholder)) }
        edits.sort { $0.range.lowerBound < $1.range.lowerBound }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + 64)
        var position = 0
        var checksumContents: Range<Int>?
        for edit in edits {
            output += bytes[position..<edit.range.lowerBound]
            if edit.range == checksum { checksumContents = output.count..<(output.count + edit.replacement.count) }
            output += edit.replacement
            position = edit.range.upperBound
        }
        output += bytes[position...]
        if let checksumContents {
            output.withUnsafeMutableBufferPointer {
                DocumentChecksum.fill($0.baseAddress!, count: $0.count, contents: checksumContents)
            }
        }
        return output
    }
}
