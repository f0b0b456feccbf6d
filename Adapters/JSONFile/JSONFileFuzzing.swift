import Foundation
import ModelStore
import ModelStoreAdapterKit

/// The entry of the JSON fuzz target (`scripts/fuzz.sh json`) and its regression test; not public API.
package enum JSONFileFuzzing {
    /// Runs `bytes` through the scanner and the document decoder with `schema`; a document that
    /// decodes is written again and must decode again to as many models (else it traps, which is
    /// what the fuzzer reports). Errors thrown for bad input are the expected outcome.
    package static func run(_ bytes: [UInt8], schema: Schema) {
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
}
