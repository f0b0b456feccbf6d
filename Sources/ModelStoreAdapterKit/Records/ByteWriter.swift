import Foundation

/// A growable byte buffer with the primitive encodings of the kit's record format: little-endian
/// fixed-width integers, LEB128 variable-length integers, and length-prefixed UTF-8 strings.
///
/// ``ByteReader`` reads each of them back. An adapter that keeps models as records (an append
/// log, a key-value store's values) writes values and identifiers with `write(_:in:)` and whole
/// rows with ``StoredRow/encode(into:context:)``.
public struct ByteWriter {
    /// The bytes written so far.
    public var bytes: [UInt8]

    /// An empty buffer with room for `capacity` bytes.
    @inlinable
    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// How many bytes have been written.
    @inlinable
    public var count: Int { bytes.count }

    /// Appends one byte.
    @inlinable @inline(__always)
    public mutating func write(_ byte: UInt8) { bytes.append(byte) }

    /// Appends a 32-bit integer, little-endian.
    @inlinable
    public mutating func write(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends a 64-bit integer, little-endian.
    @inlinable
    public mutating func write(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Appends a double as its IEEE 754 bit pattern, so every value (NaN payloads included) round-trips.
    @inlinable
    public mutating func write(_ value: Double) { write(value.bitPattern) }

    /// Appends an unsigned integer as a LEB128 varint (1 byte below 128, at most 10 bytes).
    @inlinable @inline(__always)
    public mutating func writeVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Appends a non-negative `Int` as a varint.
    @inlinable @inline(__always)
    public mutating func writeVarint(_ value: Int) { writeVarint(UInt64(value)) }

    /// Appends a signed integer zigzag-encoded as a varint (small magnitudes stay short).
    @inlinable @inline(__always)
    public mutating func writeSigned(_ value: Int64) {
        writeVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// Appends a string as its UTF-8 length (varint) and bytes.
    @inlinable
    public mutating func write(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            writeVarint(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    /// Appends an optional string: `0` for `nil`, otherwise the UTF-8 length plus one and the bytes.
    @inlinable
    public mutating func writeOptional(_ string: String?) {
        guard var string else { return writeVarint(0) }
        string.withUTF8 { utf8 in
            writeVarint(utf8.count + 1)
            bytes.append(contentsOf: utf8)
        }
    }

    /// Appends raw bytes with their length (varint) first.
    @inlinable
    public mutating func write(_ data: Data) {
        writeVarint(data.count)
        bytes.append(contentsOf: data)
    }

    /// Appends raw bytes as they are, without a length.
    @inlinable
    public mutating func append(raw: some Sequence<UInt8>) { bytes.append(contentsOf: raw) }

    /// Overwrites a 32-bit little-endian integer at `offset` (for lengths and checksums known late).
    @inlinable
    public mutating func patch(_ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for index in 0..<4 { bytes[offset + index] = raw[index] }
        }
    }
}
