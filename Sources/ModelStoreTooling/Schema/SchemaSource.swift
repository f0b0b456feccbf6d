import Foundation
import ModelStore

/// Where a schema command reads a schema: a store URL (`json:trips.json`, read through its
/// scheme's maintenance) or a schema file's path (`schema.json`, `./v2.json`).
///
/// A word is a path when it has no `:`, or starts with `/` or `.`; anything else is a store URL.
package enum SchemaSource {
    /// Whether `word` names a schema file rather than a store.
    package static func isFile(_ word: String) -> Bool {
        !word.contains(":") || word.hasPrefix("/") || word.hasPrefix(".")
    }

    /// The schema `word` names, as a schema file; `command` names what the tool was asked to do.
    ///
    /// A store's schema has no initial values (stores do not record them) and is checked as the
    /// core checks a stored schema.
    package static func document(_ word: String, for command: String) throws -> SchemaDocument {
        if isFile(word) { return try SchemaDocument.read(file: word) }
        return SchemaDocument(try description(word, for: command))
    }

    /// The schema `word` names, in the core's stored form: a store's exactly as it records it.
    package static func description(_ word: String, for command: String) throws -> Schema.Description {
        if isFile(word) { return try SchemaDocument.read(file: word).storedDescription }
        let description = try StoreReference(word).storedSchema(for: command)
        _ = try Schema(description)  // a description that is not consistent is reported, not used
        return description
    }

    /// Writes `text` to `path` in one step (a temporary file renamed over it), so a failed write
    /// leaves whatever was there.
    package static func write(_ text: String, to path: String) throws(ToolError) {
        let url = URL(fileURLWithPath: path)
        do {
            try Data(text.utf8).write(to: url, options: .atomic)
        } catch {
            throw ToolError(
                .failure, code: DataStoreError.Code.io.name, "could not write '\(path)': \(error.localizedDescription)",
                remedy: "Check that the folder exists and is writable")
        }
    }
}
