import Foundation
import ModelStore

/// Why bytes do not decode as the kit's record format: what is wrong, and the offset (relative to
/// the start of the decoded block) where decoding stopped.
///
/// An adapter turns it into the error it reports for damage, naming its file or key; a store
/// reports damaged data as `DataStoreError.Code.corrupted`.
public struct FormatError: Error {
    /// What is wrong, in a few words.
    public var reason: String
    /// Where in the block decoding stopped.
    public var offset: Int
    /// The code of the error it becomes: `DataStoreError.Code.corrupted` unless the bytes are a
    /// format another version of the adapter reads.
    public var code: DataStoreError.Code
    /// What to do, when there is something specific to say.
    public var remedy: String?

    /// A format error: `reason` found at `offset`.
    @inlinable
    public init(reason: String, offset: Int, code: DataStoreError.Code = .corrupted, remedy: String? = nil) {
        self.reason = reason
        self.offset = offset
        self.code = code
        self.remedy = remedy
    }
}

/// A cursor over bytes that decodes the primitives ``ByteWriter`` encodes, throwing
/// ``FormatError`` instead of reading past the end.
///
/// It works on a borrowed buffer: create it inside `withUnsafeBytes` and do not let it escape.
public struct ByteReader {
    @usableFromInline let base: UnsafeRawBufferPointer
    /// The offset of the next byte to read; setting it moves the cursor (within the buffer: reads
    /// check the bounds, not the assignment).
    public var offset: Int

    /// A reader over `base`, starting at `offset`.
    @inlinable
    public init(_ base: UnsafeRawBufferPointer, offset: Int = 0) {
        self.base = base
        self.offset = offset
    }

    /// How many bytes remain.
    @inlinable
    public var remaining: Int { base.count - offset }

    /// Whether every byte has been read.
    @inlinable
    public var isAtEnd: Bool { offset >= base.count }

    /// A format error at the current offset.
    @inlinable
    public func error(_ reason: String) -> FormatError { FormatError(reason: reason, offset: offset) }

    @inlinable @inline(__always)
    func need(_ count: Int) throws {
        guard count <= base.count - offset else { throw error("the block ends in the middle of a value") }
    }

    /// Reads one byte.
    @inlinable @inline(__always)
    public mutating func readByte() throws -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return base[offset]
    }

    /// Reads a little-endian 32-bit integer.
    @inlinable
    public mutating func readUInt32() throws -> UInt32 {
        try need(4)
        defer { offset += 4 }
        return UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// Reads a little-endian 64-bit integer.
    @inlinable
    public mutating func readUInt64() throws -> UInt64 {
        try need(8)
        defer { offset += 8 }
        return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// Reads a double from its bit pattern.
    @inlinable
    public mutating func readDouble() throws -> Double { Double(bitPattern: try readUInt64()) }

    /// Reads a LEB128 varint of at most 10 bytes.
    @inlinable @inline(__always)
    public mutating func readVarint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < base.count else { throw error("the block ends in the middle of a number") }
            let byte = base[offset]
            offset += 1
            guard shift < 64 else { throw error("a number is longer than 10 bytes") }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return result }
            shift += 7
        }
    }

    /// Reads a varint that must fit an `Int` no larger than `limit` (counts and lengths).
    @inlinable @inline(__always)
    public mutating func readCount(limit: Int = Int(Int32.max)) throws -> Int {
        let value = try readVarint()
        guard value <= UInt64(limit) else { throw error("a count of \(value) is larger than \(limit)") }
        return Int(value)
    }

    /// Reads a zigzag-encoded signed integer.
    @inlinable @inline(__always)
    public mutating func readSigned() throws -> Int64 {
        let raw = try readVarint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// Reads a length-prefixed UTF-8 string.
    @inlinable
    public mutating func readString() throws -> String {
        let length = try readCount()
        return try readString(length: length)
    }

    @inlinable
    mutating func readString(length: Int) throws -> String {
        try need(length)
        defer { offset += length }
        let bytes = UnsafeRawBufferPointer(rebasing: base[offset..<offset + length])
        return String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    /// Reads an optional string written by ``ByteWriter/writeOptional(_:)``.
    @inlinable
    public mutating func readOptionalString() throws -> String? {
        let marker = try readCount()
        return marker == 0 ? nil : try readString(length: marker - 1)
    }

    /// Reads length-prefixed raw bytes.
    @inlinable
    public mutating func readData() throws -> Data {
        let length = try readCount()
        try need(length)
        defer { offset += length }
        return Data(UnsafeRawBufferPointer(rebasing: base[offset..<offset + length]))
    }

    /// Reads `count` raw bytes, borrowed from the buffer the reader reads.
    @inlinable
    public mutating func readRaw(_ count: Int) throws -> UnsafeRawBufferPointer {
        try need(count)
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: base[offset..<offset + count])
    }
}
