import Foundation
import ModelStore

/// The entry of the append-log fuzz target (`scripts/fuzz.sh log`) and its regression test; not public API.
package enum AppendLogFuzzing {
    /// Runs `bytes` through the record decoder (as one transaction's payload, with `schema`'s
    /// shapes), the segment scanner, the checkpoint reader and the manifest parser. A record that
    /// decodes is encoded again and must decode again (else it traps, which is what the fuzzer
    /// reports). Errors thrown for bad input are the expected outcome.
    package static func run(_ bytes: [UInt8], schema: Schema) {
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
}
