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

    /// `exported` with the enums and structs of `Fixtures/schema.json`, after checking it has none:
    /// an export names an enum's or struct's type (with `rawType` or `codable`) but cannot list
    /// its cases or fields, which the schema file declares for `generate`.
    static func withDeclaredValueTypes(_ exported: SchemaDocument) throws -> SchemaDocument {
        #expect(exported.enums.isEmpty && exported.structs.isEmpty)
        var document = exported
        let file = try self.document("schema.json")
        document.enums = file.enums
        document.structs = file.structs
        return document
    }

    /// A fixture schema file, parsed.
    static func document(_ name: String) throws -> SchemaDocument {
        try SchemaDocument.parse(Data(text("Fixtures/\(name)").utf8), file: name)
    }
}
