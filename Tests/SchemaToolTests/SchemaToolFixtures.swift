import Foundation
import Testing

@testable import ModelStoreTool

/// The schema files and golden files of these tests, read from the source tree.
enum SchemaToolFixtures {
    /// This target's folder.
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// A fixture's text (`Fixtures/schema.json`) or a golden file's (`Golden/Models.swift`).
    static func text(_ path: String) throws -> String {
        try String(contentsOf: folder.appendingPathComponent(path), encoding: .utf8)
    }

    /// A fixture schema file, parsed.
    static func document(_ name: String) throws -> SchemaDocument {
        try SchemaDocument.parse(Data(text("Fixtures/\(name)").utf8), file: name)
    }
}
