import Foundation
import ModelStore
import ModelStoreTooling

/// `modelstore schema generate --schema SOURCE [--out FILE]`: model declarations from a schema.
enum SchemaGenerateCommand: Command {
    static let name = "schema generate"
    static let arguments: [String] = []
    static let options = [
        CommandOption(
            name: "--schema", value: "SOURCE", summary: "the schema file (or store URL) to declare",
            isRequired: true),
        CommandOption(name: "--out", value: "FILE", summary: "write the Swift file here instead of stdout"),
    ]
    static let summary = "write ModelStore model declarations (Swift) from a schema file"
    static let details = """
        Writes one 'final class NAME: PersistentModel' per model: '@Attribute' properties with
        their options, types and initial values ("now" is '.now'; without a default a model
        starts with the type's empty value, and a UUID with a new UUID), '@Relationship'
        properties with their delete rules and inverses (declared on the first side of each
        pair), compound constraints in 'static var constraints', then 'persistentBackingData'
        and 'init()'. A model with a "superclass" is declared 'class NAME: SUPERCLASS' with only
        its own properties ('final' when nothing subclasses it); a hierarchy's root is a
        non-final class with 'required init()', and lists its abstract classes in 'static var
        abstractClasses'. The file's "enums" and "structs" are declared after the models ('enum
        NAME: RAW, Codable, CaseIterable', 'struct NAME: Codable, Hashable'); an attribute of an
        enum or struct the file does not declare stops the command ('Migrating a schema' shows
        how to declare them).

        Examples:
          modelstore schema generate --schema schema.json --out Sources/App/Models.swift
          modelstore schema generate --schema json:trips.json > Models.swift
          modelstore schema export --package . --target App --models Book \\
              --out book.json
          modelstore schema generate --schema book.json --out Sources/NewApp/Book.swift
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        guard let source = invocation.value("--schema") else {
            throw ToolError.usage(
                "'schema generate' needs the schema to declare",
                remedy: "Write 'modelstore schema generate --schema schema.json --out Models.swift'")
        }
        let document = try SchemaSource.document(source, for: "generate models from")
        let code = try ModelCodeWriter(document: document).file(source: URL(fileURLWithPath: source).lastPathComponent)
        let out = invocation.value("--out")
        if let out { try SchemaSource.write(code, to: out) }
        let count = document.models.count
        return SchemaFileReport(source: source, out: out, text: code, what: count == 1 ? "1 model" : "\(count) models")
    }
}
