import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreCrypto

/// The entry of the append-log fuzz target (`scripts/fuzz.sh log`) and its regression test; not public API.
package enum AppendLogFuzzing {
    /// Runs `bytes` through the record decoder (as one transaction's payload, with `schema`'s
    /// shapes), the segment scanner, the checkpoint reader and the manifest parser. A record that
    /// decodes is encoded again and must decode again (else it traps, which is what the fuzzer
    /// reports). Errors thrown for bad input are the expected outcome.
    ///
    /// The encrypted form too: the bytes are read as an encrypted segment and checkpoint (whose
    /// records must fail authentication, not crash), and a record that decodes is sealed into an
    /// encrypted segment that must scan back to the same record, and fail to once any byte of its
    /// sealed record is flipped.
    package static func run(_ bytes: [UInt8], schema: Schema) {
        runEncrypted(bytes, schema: schema)
        let context = IdentifierContext(storeIdentifier: "log-fuzz", shapes: ShapeTable(schema: schema))
        if let record = try? bytes.withUnsafeBytes({ try TransactionRecord.decode($0, context: context) }) {
            var writer = ByteWriter(capacity: bytes.count)
            do {
                try record.encode(into: &writer, context: context)
                let again = try writer.bytes.withUnsafeBytes { framed in
                    let payload = UnsafeRawBufferPointer(rebasing: framed[Frame.headerSize...])
                    return try TransactionRecord.decode(payload, context: context)
                }
                precondition(again.number == record.number, "a record changed its number on the way back")
            } catch {
                preconditionFailure("a record the log decoded does not encode and decode again: \(error)")
            }
        }
        for isLast in [true, false] {
            let scanner = SegmentScanner(
                name: "segment-00000001.mslog", number: 1, isLast: isLast, storeIdentifier: nil, firstTransaction: nil)
            _ = try? scanner.scan(bytes) { _, _, _, _ in }
        }
        _ = try? CheckpointFile.read(bytes, name: "checkpoint") { _, _ in }
        _ = try? Manifest.decode(bytes, url: URL(fileURLWithPath: "/fuzz/manifest"))
        _ = SyncedMark.encoded(UInt64(bytes.count))
    }

    /// A fixed key: the fuzzer explores the format, not the key.
    private static let cipher = LogCipher(
        cipher: AES256GCM(key: try! EncryptionKey(bytes: [UInt8](repeating: 7, count: 32))))

    private static func runEncrypted(_ bytes: [UInt8], schema: Schema) {
        let shapes = ShapeTable(schema: schema)
        let scanner = SegmentScanner(
            name: "segment-00000001.mslog", number: 1, isLast: true, storeIdentifier: nil, firstTransaction: nil,
            cipher: cipher)
        _ = try? scanner.scan(bytes) { _, _, _, _ in }
        _ = try? CheckpointFile.read(bytes, name: "checkpoint", cipher: cipher) { _, _ in }
        _ = try? AppendLogStore.reseal(bytes, name: "segment", checkpoint: false, from: cipher, to: nil)
        let context = IdentifierContext(storeIdentifier: "log-fuzz", shapes: shapes)
        guard let record = try? bytes.withUnsafeBytes({ try TransactionRecord.decode($0, context: context) }),
            let header = try? SegmentHeader(
                number: 1, storeIdentifier: "log-fuzz", firstTransaction: record.number, created: Date(), shapes: shapes
            ).encoded()
        else { return }
        var writer = ByteWriter(capacity: bytes.count + 64)
        do {
            try record.encode(into: &writer, context: context)
            try cipher.seal(
                frameIn: &writer, from: 0, associatedData: LogCipher.segmentData(store: "log-fuzz", segment: 1))
            var read: [UInt64] = []
            _ = try scanner.scan(header + writer.bytes) { record, _, _, _ in read.append(record.number) }
            precondition(read == [record.number], "a sealed record did not scan back")
        } catch {
            preconditionFailure("a record the log decoded does not seal and open again: \(error)")
        }
        var flipped = header + writer.bytes
        let index = header.count + Frame.headerSize + Int(bytes.count % max(1, writer.count - Frame.headerSize))
        flipped[index] ^= 0x01
        let caught = (try? scanner.scan(flipped) { _, _, _, _ in }) == nil
        precondition(caught, "a flipped byte in a sealed record went unnoticed")
    }
}
