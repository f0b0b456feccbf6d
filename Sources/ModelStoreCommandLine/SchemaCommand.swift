import Foundation
import ModelStore
import ModelStoreTooling

/// `modelstore schema URL [--mermaid]`: the schema a store records, or a schema file's.
enum SchemaCommand: Command {
    static let name = "schema"
    static let arguments = ["URL"]
    static let options = [CommandOption(name: "--mermaid", summary: "print a Mermaid ER diagram (erDiagram)")]
    static let summary = "print the schema a store records; --mermaid draws it as a Mermaid ER diagram"
    static var subcommands: [any Command.Type] {
        [SchemaExportCommand.self, SchemaGenerateCommand.self, SchemaDiffCommand.self]
    }
    static let details = """
        Reads the schema from the store's own files (a JSON file's header, an append log's newest
        segment or checkpoint) without opening the store. URL may also be the path of a schema
        file (a word without ':', or starting with '/' or '.'), as 'schema export' writes it.
        Without options it lists each entity's attributes with their types and options, its
        relationships with their destinations, inverses and delete rules, and its unique
        constraints and indexes, and for an entity that stores a class hierarchy, each class with
        its superclass and the properties it declares. With --mermaid it prints an erDiagram to
        paste into Markdown:
        attributes with their types (UK marks a unique one), and one line per relationship and
        its inverse, whose ends show the cardinalities (o| zero or one for to-one, o{ zero or
        more for to-many). With --json the schema is printed as data, and with both the
        diagram's text is included as "mermaid".

        Subcommands ('modelstore help schema export' and so on describe them):
          schema export      write the schema of a store, a file or a package as JSON
          schema generate    write model declarations (Swift) from a schema file
          schema diff        compare two schemas and write a migration plan (Swift)

        Examples:
          modelstore schema json:trips.json --mermaid > schema.md
          modelstore schema schema.json --mermaid
          modelstore schema log:trips-log --json
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let source = invocation.arguments[0]
        let description = try SchemaSource.description(source, for: name)
        return SchemaReport(
            url: source, schema: description,
            mermaid: invocation.has("--mermaid") ? MermaidDiagram(description: description).text : nil)
    }
}
/// What `schema` reports.
struct SchemaReport: CommandReport {
    let url: String
    let schema: Schema.Description
    /// The Mermaid diagram, with `--mermaid`.
    let mermaid: String?

    var text: String {
        if let mermaid { return mermaid }
        var lines = ["\(url): schema version \(schema.version)"]
        for entity in schema.entities {
            lines += ["", entity.name]
            let rows = entity.properties.map { property -> [String] in
                if let type = property.type {
                    return [property.name, type.description, property.options.joined(separator: ", ")]
                }
                let destination = property.destination ?? "?"
                var notes = ["delete rule \(property.deleteRule?.rawValue ?? "nullify")"]
                if let inverse = property.inverse { notes.insert("inverse \(inverse)", at: 0) }
                return [
                    property.name, (property.isToOne ?? true) ? "\(destination)?" : "[\(destination)]",
                    notes.joined(separator: ", "),
                ]
            }
            lines += ReportFormat.table(rows)
            for constraint in entity.uniquenessConstraints where constraint.count > 1 {
                lines.append("  unique: " + constraint.joined(separator: ", "))
            }
            for index in entity.indices { lines.append("  index: " + index.joined(separator: ", ")) }
            for modelClass in entity.classes ?? [] {
                let parent = modelClass.superclassName.map { ": \($0)" } ?? " (root)"
                lines.append(
                    "  class: \(modelClass.name)\(parent), declares "
                        + modelClass.ownPropertyNames.joined(separator: ", "))
            }
        }
        return lines.joined(separator: "\n")
    }
}
