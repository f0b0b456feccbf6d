import CModelStoreSQLiteCipher
import Foundation
import ModelStore
import ModelStoreFileIO

/// Reads a store's write-ahead log (`<database>-wal`) before SQLite recovers it, to tell damage from
/// an unfinished end.
///
/// SQLite's recovery keeps the log's frames up to the first one whose checksum or salt is wrong and
/// drops the rest, silently: right for the unfinished last frames a killed process leaves, wrong for
/// a log damaged in the middle, whose later, committed transactions would vanish. A killed process
/// writes frames in order, so frames of the log's current generation (its header's salt values)
/// after a bad frame, or a log whose header is bad though frames follow it, can only come from
/// damage. The check reads the log once (SQLite keeps it near 4 MiB: its size, not the store's).
///
/// It runs only when no shared-memory index (`-shm`) is beside the log: with one, a process may be
/// writing the log while it is read. It cannot see a log cut at its end or damage inside its last
/// frames: those read as the unfinished end of a killed process (see `FORMAT.md`).
///
/// An encrypted database's log (`cipher`) is read the way SQLite's recovery reads it through the page
/// cipher: a frame is good when its page authenticates and the checksum chain, over the unmasked
/// checksums and the decrypted pages, holds.
enum WriteAheadLogCheck {
    /// The offset of the damage in the log of the database at `path`, or `nil` if none is seen.
    static func damage(ofLogOf path: String, cipher: SQLitePageCipher? = nil) throws -> Int? {
        let log = path + "-wal"
        guard !FileIO.exists(path + "-shm"), let bytes = try FileIO.read(log)?.bytes, bytes.count > 32 else {
            return nil
        }
        if let cipher {
            let offset = modelstore_cipher_wal_damage(cipher.identifier, bytes, Int64(bytes.count))
            guard offset != -2 else {
                throw DataStoreError(.io, "out of memory checking the write-ahead log '\(log)'")
            }
            return offset < 0 ? nil : Int(offset)
        }
        let magic = word(bytes, 0, bigEndian: true)
        guard magic & 0xFFFF_FFFE == 0x377F_0682 else { return 0 }
        let bigEndian = magic & 1 == 1
        let pageSize = Int(word(bytes, 8, bigEndian: true))
        guard pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0 else { return 0 }
        var sums = checksum(bytes, 0..<24, (0, 0), bigEndian: bigEndian)
        guard sums == (word(bytes, 24, bigEndian: true), word(bytes, 28, bigEndian: true)) else { return 0 }
        let salts = Array(bytes[16..<24])
        let frameSize = 24 + pageSize
        var offset = 32
        while offset + frameSize <= bytes.count, Array(bytes[offset + 8..<offset + 16]) == salts {
            sums = checksum(bytes, offset..<offset + 8, sums, bigEndian: bigEndian)
            sums = checksum(bytes, offset + 24..<offset + frameSize, sums, bigEndian: bigEndian)
            guard sums == (word(bytes, offset + 16, bigEndian: true), word(bytes, offset + 20, bigEndian: true))
            else { break }
            offset += frameSize
        }
        // Past the first bad frame's own salts: are there frames of this generation further on?
        let start = offset + 16
        guard start < bytes.count else { return nil }
        return bytes.withUnsafeBytes { raw -> Int? in
            var index = start
            while index + 8 <= raw.count {
                if raw[index] == salts[0], raw[index + 1] == salts[1], Array(raw[index..<index + 8]) == salts {
                    return offset
                }
                index += 1
            }
            return nil
        }
    }

    /// Throws ``DataStoreError/corrupted`` naming the log and the offset if ``damage(ofLogOf:)`` sees some.
    static func check(_ path: String, cipher: SQLitePageCipher? = nil) throws {
        guard let offset = try damage(ofLogOf: path, cipher: cipher) else { return }
        throw DataStoreError(
            .corrupted,
            "the write-ahead log '\(path)-wal' of the SQLite store '\(path)' is damaged at byte \(offset): "
                + "committed transactions follow the damage, and SQLite's recovery would drop them",
            remedy: "Restore the store's files (the database and its '-wal') from a backup",
            underlyingError: SQLiteDamage(file: path + "-wal", offset: offset))
    }

    private static func word(_ bytes: [UInt8], _ offset: Int, bigEndian: Bool) -> UInt32 {
        let value =
            UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
        return bigEndian ? value : value.byteSwapped
    }

    /// SQLite's log checksum: over pairs of 32-bit words, `s0 += x0 + s1; s1 += x1 + s0`.
    private static func checksum(
        _ bytes: [UInt8], _ range: Range<Int>, _ start: (UInt32, UInt32), bigEndian: Bool
    ) -> (UInt32, UInt32) {
        var (s0, s1) = start
        var index = range.lowerBound
        while index + 8 <= range.upperBound {
            s0 = s0 &+ word(bytes, index, bigEndian: bigEndian) &+ s1
            s1 = s1 &+ word(bytes, index + 4, bigEndian: bigEndian) &+ s0
            index += 8
        }
        return (s0, s1)
    }
}
