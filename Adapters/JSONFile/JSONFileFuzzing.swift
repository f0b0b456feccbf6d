import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreCrypto

/// The entry of the JSON fuzz target (`scripts/fuzz.sh json`) and its regression test; not public API.
package enum JSONFileFuzzing {
    /// Runs `bytes` through the scanner and the document decoder with `schema`; a document that
    /// decodes is written again and must decode again to as many models (else it traps, which is
    /// what the fuzzer reports). Errors thrown for bad input are the expected outcome.
    ///
    /// The encrypted form too: the bytes are opened as an encrypted file (a typed error, never a
    /// crash), and sealed as a document that must open back to the same bytes, and fail to once
    /// any byte after its header is flipped.
    package static func run(_ bytes: [UInt8], schema: Schema) {
        runEncrypted(bytes)
        let limits = JSONFileStoreConfiguration.Limits(maximumDepth: 64).readLimits
        bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer, limits: limits)
            _ = try? scanner.skipValue()
            _ = scanner.isAtEnd()
        }
        let decoder = DocumentDecoder(
            schema: schema, limits: limits, fallbackStoreIdentifier: "json-fuzz",
            loadExternalFile: { _ in Data([1, 2, 3]) })
        guard let document = try? bytes.withUnsafeBufferPointer({ try decoder.decode($0) }) else { return }
        let table = document.table
        let encoder = DocumentEncoder(
            schema: schema, storeIdentifier: document.header.storeIdentifier ?? "json-fuzz",
            nextPrimaryKey: table.nextPrimaryKey, preserved: document.preserved, externalFiles: document.externalFiles)
        let written = encoder.encode(table).bytes
        do {
            let again = try written.withUnsafeBufferPointer { try decoder.decode($0) }
            precondition(again.table.count == table.count, "a written document lost models")
        } catch {
            preconditionFailure("a document the store wrote does not read back: \(error)")
        }
    }

    /// A fixed key: the fuzzer explores the format, not the key.
    private static let keys = DocumentKeys(source: .key(try! EncryptionKey(bytes: [UInt8](repeating: 9, count: 32))))

    private static func runEncrypted(_ bytes: [UInt8]) {
        _ = try? DocumentEncryption.open(bytes, document: "fuzz.json", keys: keys)
        do {
            let sealed = try bytes.withUnsafeBytes { try DocumentEncryption.seal($0, keys: keys) }
            let opened = try DocumentEncryption.open(sealed, document: "fuzz.json", keys: keys)
            precondition(opened == bytes, "a sealed document did not open to its bytes")
            var flipped = sealed
            let start = try DocumentEncryption.header(of: sealed, document: "fuzz.json").box
            flipped[start + bytes.count % (sealed.count - start)] ^= 0x80
            precondition(
                (try? DocumentEncryption.open(flipped, document: "fuzz.json", keys: keys)) == nil,
                "a flipped byte in a sealed document went unnoticed")
        } catch {
            preconditionFailure("a document does not seal and open again: \(error)")
        }
    }
}
