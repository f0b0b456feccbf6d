import Foundation
import ModelStore
import ModelStoreTooling

/// `modelstore schema export SOURCE [--out FILE]`: a store's or a file's schema as a schema file;
/// `schema export --package PATH --target TARGET --models A,B [--out FILE]`: a package's models'.
enum SchemaExportCommand: Command {
    static let name = "schema export"
    static let arguments = ["[SOURCE]"]
    static let argumentCounts = 0...1
    static let options = [
        CommandOption(name: "--package", value: "PATH", summary: "export the models of the Swift package here"),
        CommandOption(name: "--target", value: "TARGET", summary: "with --package: the target that declares them"),
        CommandOption(name: "--models", value: "A,B", summary: "with --package: the model classes, comma-separated"),
        CommandOption(name: "--out", value: "FILE", summary: "write the file here instead of stdout"),
    ]
    static let summary = "write a store's, a schema file's or a Swift package's schema as a schema file (JSON)"
    static let details = """
        SOURCE is a store URL or the path of a schema file (a word without ':', or starting with
        '/' or '.'). The file lists the models with their attributes (type in Swift spelling,
        unique, default, originalName), relationships (destination, toMany, deleteRule, inverse,
        counts) and compound unique constraints and indexes; fields at their defaults are left
        out. Stores do not record initial values, so a store's export has no "default" fields.

        With --package instead of SOURCE, the models come from a Swift package's code, with their
        initial values: the tool writes a small package under the temporary directory that
        depends on PATH, imports TARGET (which a library product of PATH must hold) and builds
        a schema of the --models classes and the models their relationships reach, then runs it
        with 'swift run'. The tool cannot list a package's model types, so --models names them;
        they must be public. The first export builds the package (minutes for a large one);
        later ones rebuild only what changed. Nothing is written into PATH. The enums and Codable
        structs the attributes store are listed under "enums" and "structs", learned from the
        compiled types: an enum's cases if it is CaseIterable, a struct's fields from the keys its
        init(from:) reads. One the tool cannot list (an enum that is not CaseIterable, a struct
        that decodes itself by hand) is named in a warning with the attribute that stores it and
        left undeclared; list it by hand before 'schema generate'.

        A file in the core's stored form (what 'modelstore schema URL --json' prints) is read
        too. With --json the file is printed as "schema".

        Examples:
          modelstore schema export json:trips.json --out schema.json
          modelstore schema export log:trips-log > schema.json
          modelstore schema export --package . --target App --models Project,Task \\
              --out schema.json
          modelstore schema export description.json --out schema.json
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let (source, document, warnings) = try read(invocation)
        if !console.json {
            for warning in warnings { Console.writeError("modelstore \(name): warning: \(warning)\n") }
        }
        let out = invocation.value("--out")
        if let out { try SchemaSource.write(document.jsonText, to: out) }
        var report = SchemaFileReport(source: source, out: out, text: document.jsonText, what: "the schema")
        report.warnings = warnings
        return report
    }

    /// The schema to export, how the report names its source, and warnings for what it leaves out.
    private static func read(_ invocation: Invocation) throws -> (String, SchemaDocument, [String]) {
        guard let package = invocation.value("--package") else {
            guard let source = invocation.arguments.first else {
                throw ToolError.usage(
                    "'schema export' needs a store URL, a schema file or --package",
                    remedy: "Write 'modelstore schema export json:trips.json', or see 'modelstore help schema export'")
            }
            if let option = ["--target", "--models"].first(where: { invocation.value($0) != nil }) {
                throw ToolError.usage(
                    "'\(option)' of 'schema export' goes with --package",
                    remedy: "Export a package's models with '--package PATH --target TARGET --models A,B'")
            }
            return (source, try SchemaSource.document(source, for: "export"), [])
        }
        if let source = invocation.arguments.first {
            throw ToolError.usage(
                "'schema export' reads either '\(source)' or the package '\(package)', not both",
                remedy: "Leave out SOURCE to export the package's models")
        }
        guard let target = invocation.value("--target"), !target.isEmpty else {
            throw ToolError.usage(
                "'schema export --package' needs the target that declares the models",
                remedy: "Write '--target TARGET', the target's name in the package's Package.swift")
        }
        let models = (invocation.value("--models") ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard !models.isEmpty, !models.contains("") else {
            throw ToolError.usage(
                "'schema export --package' needs the model classes of '\(target)'",
                remedy: "Name them with '--models Project,Task'; the tool cannot list a package's types")
        }
        let source = "\(package) (\(target))"
        let output = try PackageSchemaExport(package: package, target: target, models: models).output()
        let (document, warnings) = try output.document(source: "'\(source)'")
        return (source, document, warnings)
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
    /// What the file leaves out, for people (printed to standard error as it happens).
    var warnings: [String] = []

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

    private enum CodingKeys: String, CodingKey { case source, out, schema, code, warnings }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(source, forKey: .source)
        try container.encodeIfPresent(out, forKey: .out)
        if !warnings.isEmpty { try container.encode(warnings, forKey: .warnings) }
        if let schema = try? JSONDecoder().decode(JSONValue.self, from: Data(contents.utf8)) {
            try container.encode(schema, forKey: .schema)
        } else {
            try container.encode(contents, forKey: .code)
        }
    }
}
