import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

/// The framing of every block in an append log's files: a 12-byte header, then the payload.
///
/// ```
/// offset 0   UInt32 LE   payload length
/// offset 4   UInt32 LE   CRC-32C of the payload
/// offset 8   UInt32 LE   CRC-32C of bytes 0..<8 (protects the length)
/// offset 12  payload
/// ```
///
/// The header checksum lets a reader tell a damaged length from a short file: a frame whose header
/// checks out but whose payload runs past the end of the file was cut short (a torn write); a
/// frame whose header or payload fails its checksum was damaged after it was written.
enum Frame {
    /// The size of a frame header.
    static let headerSize = 12
    /// The largest payload a frame may carry.
    static let maximumPayload = Int(Int32.max)

    /// What a reader finds at an offset.
    enum Outcome: Equatable {
        /// A whole, intact frame: its payload and the offset just after it.
        case frame(payload: Range<Int>, end: Int)
        /// The offset is exactly the end of the bytes.
        case end
        /// Fewer bytes than a header remain.
        case incompleteHeader(available: Int)
        /// The header's checksum does not match.
        case damagedHeader
        /// The header is intact but the payload runs past the end of the bytes.
        case incompletePayload(declared: Int, available: Int)
        /// The payload's checksum does not match.
        case damagedPayload(declared: Int)
    }

    /// Reserves a header at the end of `writer`; returns its offset for ``finish(_:at:)``.
    static func begin(_ writer: inout ByteWriter) -> Int {
        let start = writer.count
        writer.append(raw: repeatElement(0 as UInt8, count: headerSize))
        return start
    }

    /// Fills in the header reserved at `start`, making everything after it the payload.
    ///
    /// Throws ``DataStoreError/Code/invalidValue`` when the payload is larger than ``maximumPayload``.
    static func finish(_ writer: inout ByteWriter, at start: Int) throws {
        let length = writer.count - start - headerSize
        guard length <= maximumPayload else {
            throw DataStoreError(
                .invalidValue,
                "a transaction of \(length) bytes is larger than the append log's limit of 2 GiB per record",
                remedy: "Save the changes in smaller batches")
        }
        let payloadCRC = writer.bytes.withUnsafeBytes {
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[(start + headerSize)...]))
        }
        writer.patch(UInt32(length), at: start)
        writer.patch(payloadCRC, at: start + 4)
        let headerCRC = writer.bytes.withUnsafeBytes {
            CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[start..<start + 8]))
        }
        writer.patch(headerCRC, at: start + 8)
    }

    /// Reads the frame at `offset` in `bytes`.
    static func read(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Outcome {
        let available = bytes.count - offset
        if available == 0 { return .end }
        guard available >= headerSize else { return .incompleteHeader(available: available) }
        let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
        let payloadCRC = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        let headerCRC = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self))
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 8])) == headerCRC,
            length <= maximumPayload
        else { return .damagedHeader }
        let start = offset + headerSize
        guard length <= bytes.count - start else {
            return .incompletePayload(declared: length, available: bytes.count - start)
        }
        guard CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[start..<start + length])) == payloadCRC else {
            return .damagedPayload(declared: length)
        }
        return .frame(payload: start..<start + length, end: start + length)
    }
}
