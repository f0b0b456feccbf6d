import CModelStoreCRC32C
import ModelStore

/// CRC-32C (Castagnoli): the checksum of every record of an append log and of a JSON store's document.
///
/// The Castagnoli polynomial detects every error of up to 3 flipped bits in blocks much longer
/// than our records, and every burst of up to 32 bits. Where the processor has a CRC-32C
/// instruction (SSE 4.2 on x86-64, the CRC extension on 64-bit Arm), it computes eight bytes per
/// instruction; elsewhere a table-driven, slicing-by-8 implementation takes eight table lookups per
/// eight input bytes. Both give the same checksums.
public enum CRC32C {
    /// Whether ``update(_:_:)`` uses the processor's CRC-32C instruction.
    package static let usesInstruction = modelstore_crc32c_has_instruction() == 1

    /// The reflected Castagnoli polynomial.
    private static let polynomial: UInt32 = 0x82F6_3B78

    /// Eight 256-entry tables: `tables[k][b]` is the CRC of byte `b` followed by `k` zero bytes.
    private static let tables: [UInt32] = {
        var tables = [UInt32](repeating: 0, count: 8 * 256)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = (crc & 1) != 0 ? (crc >> 1) ^ polynomial : crc >> 1 }
            tables[byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[byte]
            for slice in 1..<8 {
                crc = tables[Int(crc & 0xFF)] ^ (crc >> 8)
                tables[slice * 256 + byte] = crc
            }
        }
        return tables
    }()

    /// The checksum of a run of bytes.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        update(0, bytes)
    }

    /// The checksum of an array of bytes.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// Extends the checksum `crc` of earlier bytes with more bytes.
    public static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard usesInstruction, let base = bytes.baseAddress else { return updateWithTable(crc, bytes) }
        return modelstore_crc32c_update(crc, base, bytes.count)
    }

    /// ``update(_:_:)`` as a C function pointer, for C code that checksums many small pieces without
    /// calling back into Swift for each: the processor's instruction where there is one, the tables
    /// elsewhere.
    package static let cUpdate = usesInstruction ? instructionCUpdate : tableCUpdate

    /// ``cUpdate`` where the processor has the instruction.
    private static let instructionCUpdate: @convention(c) (UInt32, UnsafeRawPointer?, Int) -> UInt32 =
        modelstore_crc32c_update

    /// ``cUpdate`` with the tables alone, whatever the processor has.
    package static let tableCUpdate: @convention(c) (UInt32, UnsafeRawPointer?, Int) -> UInt32 = {
        crc, bytes, count in updateWithTable(crc, UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// ``update(_:_:)`` with the tables alone, whatever the processor has.
    package static func updateWithTable(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc = ~crc
        var index = 0
        let count = bytes.count
        tables.withUnsafeBufferPointer { table in
            while count - index >= 8 {
                let low = bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self).littleEndian ^ crc
                let high = bytes.loadUnaligned(fromByteOffset: index + 4, as: UInt32.self).littleEndian
                crc =
                    table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
                    ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
                    ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
                    ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
                index += 8
            }
            while index < count {
                crc = table[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        return ~crc
    }
}
