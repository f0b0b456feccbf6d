// A file of the driver package that `modelstore schema export --package` writes and runs. It is compiled
// here as the ModelStoreSchemaExportSupport target, and the tool copies it into the driver unchanged.

import ModelStore

/// What the export prints: the schema with its initial values, and the enums and structs its
/// attributes store.
struct ExportSchemaOutput: Encodable {
    /// The schema, with each attribute's initial value.
    let schema: ModelStore.Schema.Description
    /// The enums' cases and the structs' fields, and the types whose cases or fields it cannot list.
    let valueTypes: ExportedValueTypes

    /// The output for a schema built from model types.
    init(_ schema: ModelStore.Schema) {
        self.schema = schema.descriptionWithInitialValues
        self.valueTypes = ExportedValueTypes(schema)
    }
}
