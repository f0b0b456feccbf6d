import Foundation
import ModelStore

/// `modelstore schema export SOURCE [--out FILE]`: a store's or a file's schema as a schema file.
enum SchemaExportCommand: Command {
    static let name = "schema export"
    static let arguments = ["SOURCE"]
    static let options = [CommandOption(name: "--out", value: "FILE", summary: "write the file here instead of stdout")]
    static let summary = "write a store's schema (or a schema file's, normalized) as a schema file (JSON)"
    static let details = """
        SOURCE is a store URL or the path of a schema file (a word without ':', or starting with
        '/' or '.'). The file lists the models with their attributes (type in Swift spelling,
        unique, default, originalName), relationships (destination, toMany, deleteRule, inverse,
        counts) and compound unique constraints and indexes; fields at their defaults are left
        out. Stores do not record initial values, so a store's export has no "default" fields.

        A package's models are exported from its own code, since the tool cannot load Swift
        types: write 'Schema([Project.self, Task.self]).storedDescription' with JSONEncoder
        (in a test or a small script) and export that file; it is read as the core's stored
        form, as is what 'modelstore schema URL --json' prints. Initial values are lost that way
        too; 'Migrating a schema' has the details. With --json the file is printed as "schema".

        Examples:
          modelstore schema export json:trips.json --out schema.json
          modelstore schema export log:trips-log > schema.json
          modelstore schema export description.json --out schema.json
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let source = invocation.arguments[0]
        let document = try SchemaSource.document(source, for: "export")
        let out = invocation.value("--out")
        if let out { try SchemaSource.write(document.jsonText, to: out) }
        return SchemaFileReport(source: source, out: out, text: document.jsonText, what: "the schema")
    }
}

/// What `schema export` and `schema generate` report: the file's text, or where it was written.
///
/// With `--json`: `source`, `out` when given, and the file as `schema` (JSON) or `code` (text).
struct SchemaFileReport: CommandReport {
    /// The schema's source, as typed.
    let source: String
    /// Where the file was written; `nil` when it is printed.
    let out: String?
    /// The file's text.
    let contents: String
    /// What the file holds, for the message (`the schema`, `2 models`).
    let what: String

    init(source: String, out: String?, text: String, what: String) {
        self.source = source
        self.out = out
        self.contents = text
        self.what = what
    }

    var text: String {
        guard let out else { return String(contents.dropLast()) }
        return "\(source): wrote \(what) to '\(out)'"
    }

    private enum CodingKeys: String, CodingKey { case source, out, schema, code }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(source, forKey: .source)
        try container.encodeIfPresent(out, forKey: .out)
        if let schema = try? JSONDecoder().decode(JSONValue.self, from: Data(contents.utf8)) {
            try container.encode(schema, forKey: .schema)
        } else {
            try container.encode(contents, forKey: .code)
        }
    }
}
