import Foundation
import ModelStore

/// What the export driver prints (its `ExportSchemaOutput`): the schema of the models with their
/// initial values, and the enums' cases and the structs' fields in the schema file's form, with
/// the enums and structs whose cases or fields the compiled types do not tell.
package struct ExportDriverOutput: Decodable {
    /// The schema, with initial values.
    package let schema: Schema.Description
    /// The enums and structs the attributes store.
    package let valueTypes: ValueTypes

    /// The enums and structs, as the schema file's `"enums"` and `"structs"` write them.
    package struct ValueTypes: Decodable {
        /// The enums, each `{"name", "rawType", "cases"}`.
        package var enums: [JSONValue]
        /// The structs, each `{"name", "fields"}`.
        package var structs: [JSONValue]
        /// The ones the driver could not list.
        package var unlisted: [Unlisted]
    }

    /// An enum or struct whose cases or fields the driver could not list.
    package struct Unlisted: Decodable, Equatable {
        /// The type's name.
        package var type: String
        /// `enum` or `struct`.
        package var kind: String
        /// The first attribute that stores it (`Project.mood`).
        package var attribute: String
        /// Why its cases or fields are not listed.
        package var reason: String

        /// The warning `schema export` prints for it.
        package var warning: String {
            let (what, parts, section) =
                kind == "enum" ? ("the enum", "cases", "enums") : ("the Codable struct", "fields", "structs")
            let fix =
                kind == "enum" && reason.contains("CaseIterable")
                ? "add 'CaseIterable' to '\(type)', or list its cases under \"enums\" in the schema file"
                : "list its \(parts) under \"\(section)\" in the schema file"
            return "'\(attribute)' stores \(what) '\(type)', whose \(parts) the export cannot list: \(reason). "
                + "The file names '\(type)' without declaring it; \(fix) before 'schema generate'"
        }
    }

    /// The schema file for the output: the models, and the enums and structs the driver listed.
    /// Those it could not list stay undeclared (`generate` then refuses them by name), each with a
    /// warning in `warnings`.
    package func document(source: String) throws(ToolError) -> (document: SchemaDocument, warnings: [String]) {
        var document = SchemaDocument(schema)
        let declared = JSONValue.object([
            "models": .array([]), "enums": .array(valueTypes.enums), "structs": .array(valueTypes.structs),
        ])
        do {
            let parsed = try SchemaDocument.parse(try JSONEncoder().encode(declared), file: "the export of \(source)")
            document.enums = parsed.enums
            document.structs = parsed.structs
        } catch let error as SchemaFileError {
            throw error.toolError
        } catch {
            throw ToolError(
                .failure, code: DataStoreError.Code.invalidSchema.name,
                "the export of \(source) printed value types that could not be read: \(error)",
                remedy: "Check that the package uses this version of ModelStore")
        }
        return (document, valueTypes.unlisted.map(\.warning))
    }
}
