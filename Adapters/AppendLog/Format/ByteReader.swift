import Foundation
import ModelStore

/// Why bytes that passed their checksum still do not decode: a format error, reported with the
/// offset (relative to the start of the decoded block) where decoding stopped.
struct FormatError: Error {
    /// What is wrong, in a few words.
    var reason: String
    /// Where in the block decoding stopped.
    var offset: Int
    /// The code of the error it becomes: ``DataStoreError/Code/corrupted`` unless it is a format
    /// version another ModelStore reads (``FormatVersion``).
    var code: DataStoreError.Code = .corrupted
    /// What to do, when there is something specific to say.
    var remedy: String?

    /// The damage it is in file `file`, found while decoding the block at `offset`: `what` says
    /// which block (`"the segment header"`), and is left out for a format version refusal.
    func damage(file: String, at offset: Int, what: String) -> AppendLogDamage {
        guard code == .corrupted else {
            return AppendLogDamage(file: file, offset: offset, reason: reason, code: code, remedy: remedy)
        }
        return AppendLogDamage(file: file, offset: offset, reason: "\(what) does not decode: \(reason)")
    }
}

/// A cursor over bytes that decodes the primitives ``ByteWriter`` encodes, throwing
/// ``FormatError`` instead of reading past the end.
///
/// It works on a borrowed buffer: create it inside `withUnsafeBytes` and do not let it escape.
struct ByteReader {
    private let base: UnsafeRawBufferPointer
    /// The offset of the next byte to read.
    private(set) var offset: Int

    /// A reader over `base`, starting at `offset`.
    init(_ base: UnsafeRawBufferPointer, offset: Int = 0) {
        self.base = base
        self.offset = offset
    }

    /// How many bytes remain.
    var remaining: Int { base.count - offset }

    /// Whether every byte has been read.
    var isAtEnd: Bool { offset >= base.count }

    /// A format error at the current offset.
    func error(_ reason: String) -> FormatError { FormatError(reason: reason, offset: offset) }

    @inline(__always)
    private func need(_ count: Int) throws {
        guard count <= base.count - offset else { throw error("the block ends in the middle of a value") }
    }

    /// Reads one byte.
    @inline(__always)
    mutating func readByte() throws -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return base[offset]
    }

    /// Reads a little-endian 32-bit integer.
    mutating func readUInt32() throws -> UInt32 {
        try need(4)
        defer { offset += 4 }
        return UInt32(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    /// Reads a little-endian 64-bit integer.
    mutating func readUInt64() throws -> UInt64 {
        try need(8)
        defer { offset += 8 }
        return UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// Reads a double from its bit pattern.
    mutating func readDouble() throws -> Double { Double(bitPattern: try readUInt64()) }

    /// Reads a LEB128 varint of at most 10 bytes.
    @inline(__always)
    mutating func readVarint() throws -> UInt64 {
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
    @inline(__always)
    mutating func readCount(limit: Int = Int(Int32.max)) throws -> Int {
        let value = try readVarint()
        guard value <= UInt64(limit) else { throw error("a count of \(value) is larger than \(limit)") }
        return Int(value)
    }

    /// Reads a zigzag-encoded signed integer.
    @inline(__always)
    mutating func readSigned() throws -> Int64 {
        let raw = try readVarint()
        return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
    }

    /// Reads a length-prefixed UTF-8 string.
    mutating func readString() throws -> String {
        let length = try readCount()
        return try readString(length: length)
    }

    private mutating func readString(length: Int) throws -> String {
        try need(length)
        defer { offset += length }
        let bytes = UnsafeRawBufferPointer(rebasing: base[offset..<offset + length])
        return String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    /// Reads an optional string written by ``ByteWriter/writeOptional(_:)``.
    mutating func readOptionalString() throws -> String? {
        let marker = try readCount()
        return marker == 0 ? nil : try readString(length: marker - 1)
    }

    /// Reads length-prefixed raw bytes.
    mutating func readData() throws -> Data {
        let length = try readCount()
        try need(length)
        defer { offset += length }
        return Data(UnsafeRawBufferPointer(rebasing: base[offset..<offset + length]))
    }

    /// Reads `count` raw bytes.
    mutating func readRaw(_ count: Int) throws -> UnsafeRawBufferPointer {
        try need(count)
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: base[offset..<offset + count])
    }
}
