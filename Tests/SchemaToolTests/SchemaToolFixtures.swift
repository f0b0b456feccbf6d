import Foundation
import ModelStore
import Testing

@testable import ModelStoreSchemaExportSupport
@testable import ModelStoreTooling

/// The schema files and golden files of these tests, read from the source tree.
enum SchemaToolFixtures {
    /// This target's folder.
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// A fixture's text (`Fixtures/schema.json`) or a golden file's (`Golden/Models.swift`).
    static func text(_ path: String) throws -> String {
        try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8)
    }

    /// What `schema export --package` makes of `schema`, run in this process: the driver's
    /// `ExportSchemaOutput` (from the ModelStoreSchemaExportSupport target) through JSON, as
    /// the tool reads it from the driver, and the warnings the tool prints.
    static func exported(_ schema: Schema) throws -> (document: SchemaDocument, warnings: [String]) {
        let printed = try JSONEncoder().encode(ExportSchemaOutput(schema))
        return try JSONDecoder().decode(ExportDriverOutput.self, from: printed).document(source: "'test'")
    }

    /// A fixture schema file, parsed.
    static func document(_ name: String) throws -> SchemaDocument {
        try SchemaDocument.parse(Data(text("Fixtures/\(name)").utf8), file: name)
    }
}
