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
///     },
///     {
///       "name": "Milestone",
///       "superclass": "Project",
///       "attributes": [{"name": "due", "type": "Date"}]
///     }
///   ]
/// }
/// ```
///
/// A model that names a `superclass` is a subclass: it lists only the properties it declares, and
/// the hierarchy is stored as one entity named after its root class, as the core stores it (the
/// subclasses' attributes optional, the class attribute `_modelClass` added and indexed). A model
/// marked `"abstract": true` has no models of exactly its class.
///
/// Fields left out take their defaults (version `1.0.0`, to-one, delete rule `nullify`, not
/// unique); an export leaves them out too. The full format is in "Migrating a schema".
package struct SchemaDocument: Equatable {
    /// The schema version.
    package var version: Schema.Version = Schema.Version(1, 0, 0)
    /// The models, in order.
    package var models: [Model]
    /// The enums that attributes name, with their cases (`"enums"`; optional in the file).
    package var enums: [Enumeration] = []
    /// The `Codable` structs that attributes name, with their fields (`"structs"`; optional).
    package var structs: [Structure] = []

    /// A `RawRepresentable` enum an attribute stores by its raw value.
    package struct Enumeration: Equatable {
        /// The enum's name.
        package var name: String
        /// The raw value's type: `String` or an integer type.
        package var rawType: AttributeType
        /// The cases, in order.
        package var cases: [Case]

        /// One case: its name and raw value (`.string` or `.int`).
        package struct Case: Equatable {
            /// The case's name.
            var name: String
            /// Its raw value.
            var rawValue: StoreValue
        }

        /// The raw value Swift gives a case that declares none: its name for a `String` enum, one
        /// more than the previous case's (0 for the first) for an integer one.
        package func implicitRawValue(named name: String, after previous: Case?) -> StoreValue {
            guard rawType == .string else {
                guard case .int(let value)? = previous?.rawValue else { return .int(0) }
                return .int(value + 1)
            }
            return .string(name)
        }
    }

    /// A `Codable` struct an attribute stores as named fields.
    package struct Structure: Equatable {
        /// The struct's name.
        package var name: String
        /// Its stored fields, in order.
        package var fields: [Field]

        /// One field: its name and type.
        package struct Field: Equatable {
            /// The field's name.
            var name: String
            /// Its type, spelled in Swift in the file.
            var type: AttributeType
        }
    }

    /// One model (an entity).
    package struct Model: Equatable {
        /// The model's name: its class name and entity name.
        package var name: String
        /// The model's name in the previous schema version, if it was renamed (`"originalName"`;
        /// read by `schema diff` only: ModelStore's models have no entity `originalName`).
        package var originalName: String? = nil
        /// The name of the model class it subclasses (`"superclass"`): its entity is the hierarchy
        /// root's, and it lists only the properties it declares itself.
        package var superclass: String? = nil
        /// Whether no model of exactly this class is saved (`"abstract"`; `abstractClasses` in Swift).
        package var isAbstract = false
        /// Its stored attributes, in order.
        package var attributes: [Attribute] = []
        /// Its relationships, in order.
        package var relationships: [Relationship] = []
        /// Compound uniqueness constraints (a single unique attribute is marked on the attribute).
        package var unique: [[String]] = []
        /// Indexes, each a list of property names.
        package var indexes: [[String]] = []
    }

    /// A stored attribute.
    package struct Attribute: Equatable {
        /// The property's name.
        package var name: String
        /// Its stored type, spelled in Swift in the file (`String?`, `[Int]`, `[String: Double]`).
        package var type: AttributeType
        /// Whether no two models may have the same value (`@Attribute(.unique)`).
        package var unique = false
        /// Whether large values live outside the main store file (`.externalStorage`).
        package var externalStorage = false
        /// Whether the value is kept when the model is deleted (`.preserveValueOnDeletion`).
        package var preserveValueOnDeletion = false
        /// The property's name in the previous schema version, if it was renamed.
        package var originalName: String?
        /// The initial value of a new model, when it is not the type's zero value.
        package var defaultValue: DefaultValue?
    }

    /// The initial value of an attribute on a new model.
    package enum DefaultValue: Equatable {
        /// The moment the model is created (`Date.now`): `"now"` in the file.
        case now
        /// A value, in its stored form.
        case value(StoreValue)
    }

    /// A relationship to another model.
    package struct Relationship: Equatable {
        /// The property's name.
        package var name: String
        /// The related model's name.
        package var destination: String
        /// Whether it holds any number of models (`[Task]`) rather than at most one (`Task?`).
        package var toMany = false
        /// What deleting a model does to the related ones.
        package var deleteRule: Schema.Relationship.DeleteRule = .nullify
        /// The name of the relationship on the destination that mirrors this one.
        package var inverse: String?
        /// The least number of related models (0: none).
        package var minimumModelCount = 0
        /// The greatest number of related models (0: none).
        package var maximumModelCount = 0
        /// The property's name in the previous schema version, if it was renamed.
        package var originalName: String?
    }

    /// The model with this name.
    package func model(named name: String) -> Model? { models.first { $0.name == name } }

    /// The root of a model's class hierarchy: the model itself when it has no superclass. A
    /// superclass that is not a model of the file, or a cycle, ends the walk.
    package func rootName(of name: String) -> String {
        var current = name
        var seen: Set<String> = [name]
        while let parent = model(named: current)?.superclass, model(named: parent) != nil, seen.insert(parent).inserted
        {
            current = parent
        }
        return current
    }

    /// The models that name this one as their superclass, in file order.
    package func subclasses(of name: String) -> [Model] { models.filter { $0.superclass == name } }

    /// How many model superclasses a model has.
    package func depth(of name: String) -> Int {
        var depth = 0
        var current = name
        while let parent = model(named: current)?.superclass, model(named: parent) != nil, depth < models.count {
            depth += 1
            current = parent
        }
        return depth
    }

    /// The models of a hierarchy as one entity stores them: the root first, then its subclasses,
    /// parents before children (by depth, in file order within a depth), as the core orders them.
    package func hierarchy(rootedAt root: String) -> [Model] {
        models.filter { rootName(of: $0.name) == root }.enumerated()
            .sorted { (depth(of: $0.element.name), $0.offset) < (depth(of: $1.element.name), $1.offset) }
            .map(\.element)
    }

    /// Whether a model is the root of a hierarchy of more than one class.
    package func isHierarchyRoot(_ name: String) -> Bool {
        model(named: name)?.superclass == nil && !subclasses(of: name).isEmpty
    }
}

extension SchemaDocument.Attribute {
    /// The attribute's options by their core names (`unique`, `externalStorage`, ...).
    package var optionNames: [String] {
        [
            (unique, "unique"), (externalStorage, "externalStorage"),
            (preserveValueOnDeletion, "preserveValueOnDeletion"),
        ]
        .filter(\.0).map(\.1)
    }

    /// Whether new models get a new value each (a `UUID` without a default, or `"now"`).
    package var isFreshPerModel: Bool {
        defaultValue == .now || (defaultValue == nil && type == .uuid)
    }
}
