import Foundation
import ModelStore

/// A schema file: the JSON form of a schema that `modelstore schema export` writes and
/// `schema generate`, `schema diff` and `schema --mermaid` read.
///
/// ```json
/// {
///   "version": "2.0.0",
///   "models": [
///     {
///       "name": "Project",
///       "attributes": [
///         {"name": "id", "type": "UUID", "unique": true},
///         {"name": "createdAt", "type": "Date", "default": "now"}
///       ],
///       "relationships": [
///         {"name": "tasks", "destination": "Task", "toMany": true, "deleteRule": "cascade", "inverse": "project"}
///       ],
///       "unique": [["name", "owner"]],
///       "indexes": [["createdAt"]]
///     }
///   ]
/// }
/// ```
///
/// Fields left out take their defaults (version `1.0.0`, to-one, delete rule `nullify`, not
/// unique); an export leaves them out too. The full format is in "Migrating a schema".
struct SchemaDocument: Equatable {
    /// The schema version.
    var version: Schema.Version = Schema.Version(1, 0, 0)
    /// The models, in order.
    var models: [Model]
    /// The enums that attributes name, with their cases (`"enums"`; optional in the file).
    var enums: [Enumeration] = []
    /// The `Codable` structs that attributes name, with their fields (`"structs"`; optional).
    var structs: [Structure] = []

    /// A `RawRepresentable` enum an attribute stores by its raw value.
    struct Enumeration: Equatable {
        /// The enum's name.
        var name: String
        /// The raw value's type: `String` or an integer type.
        var rawType: AttributeType
        /// The cases, in order.
        var cases: [Case]

        /// One case: its name and raw value (`.string` or `.int`).
        struct Case: Equatable {
            /// The case's name.
            var name: String
            /// Its raw value.
            var rawValue: StoreValue
        }

        /// The raw value Swift gives a case that declares none: its name for a `String` enum, one
        /// more than the previous case's (0 for the first) for an integer one.
        func implicitRawValue(named name: String, after previous: Case?) -> StoreValue {
            guard rawType == .string else {
                guard case .int(let value)? = previous?.rawValue else { return .int(0) }
                return .int(value + 1)
            }
            return .string(name)
        }
    }

    /// A `Codable` struct an attribute stores as named fields.
    struct Structure: Equatable {
        /// The struct's name.
        var name: String
        /// Its stored fields, in order.
        var fields: [Field]

        /// One field: its name and type.
        struct Field: Equatable {
            /// The field's name.
            var name: String
            /// Its type, spelled in Swift in the file.
            var type: AttributeType
        }
    }

    /// One model (an entity).
    struct Model: Equatable {
        /// The model's name: its class name and entity name.
        var name: String
        /// The model's name in the previous schema version, if it was renamed (`"originalName"`;
        /// read by `schema diff` only: ModelStore's models have no entity `originalName`).
        var originalName: String? = nil
        /// Its stored attributes, in order.
        var attributes: [Attribute] = []
        /// Its relationships, in order.
        var relationships: [Relationship] = []
        /// Compound uniqueness constraints (a single unique attribute is marked on the attribute).
        var unique: [[String]] = []
        /// Indexes, each a list of property names.
        var indexes: [[String]] = []
    }

    /// A stored attribute.
    struct Attribute: Equatable {
        /// The property's name.
        var name: String
        /// Its stored type, spelled in Swift in the file (`String?`, `[Int]`, `[String: Double]`).
        var type: AttributeType
        /// Whether no two models may have the same value (`@Attribute(.unique)`).
        var unique = false
        /// Whether large values live outside the main store file (`.externalStorage`).
        var externalStorage = false
        /// Whether the value is kept when the model is deleted (`.preserveValueOnDeletion`).
        var preserveValueOnDeletion = false
        /// The property's name in the previous schema version, if it was renamed.
        var originalName: String?
        /// The initial value of a new model, when it is not the type's zero value.
        var defaultValue: DefaultValue?
    }

    /// The initial value of an attribute on a new model.
    enum DefaultValue: Equatable {
        /// The moment the model is created (`Date.now`): `"now"` in the file.
        case now
        /// A value, in its stored form.
        case value(StoreValue)
    }

    /// A relationship to another model.
    struct Relationship: Equatable {
        /// The property's name.
        var name: String
        /// The related model's name.
        var destination: String
        /// Whether it holds any number of models (`[Task]`) rather than at most one (`Task?`).
        var toMany = false
        /// What deleting a model does to the related ones.
        var deleteRule: Schema.Relationship.DeleteRule = .nullify
        /// The name of the relationship on the destination that mirrors this one.
        var inverse: String?
        /// The least number of related models (0: none).
        var minimumModelCount = 0
        /// The greatest number of related models (0: none).
        var maximumModelCount = 0
        /// The property's name in the previous schema version, if it was renamed.
        var originalName: String?
    }

    /// The model with this name.
    func model(named name: String) -> Model? { models.first { $0.name == name } }
}

extension SchemaDocument.Attribute {
    /// The attribute's options by their core names (`unique`, `externalStorage`, ...).
    var optionNames: [String] {
        [
            (unique, "unique"), (externalStorage, "externalStorage"),
            (preserveValueOnDeletion, "preserveValueOnDeletion"),
        ]
        .filter(\.0).map(\.1)
    }

    /// Whether new models get a new value each (a `UUID` without a default, or `"now"`).
    var isFreshPerModel: Bool {
        defaultValue == .now || (defaultValue == nil && type == .uuid)
    }
}
