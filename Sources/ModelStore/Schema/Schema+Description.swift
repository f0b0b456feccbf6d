import Foundation

extension Schema {
    /// A schema as data: what a store writes into its files so that tools can open it without
    /// the app's model types, and so a store can notice that the app's schema changed.
    public struct Description: Codable, Sendable, Hashable {
        /// The schema version.
        public var version: Version
        /// The entities.
        public var entities: [EntityDescription]

        /// A description.
        public init(version: Version, entities: [EntityDescription]) {
            self.version = version
            self.entities = entities
        }
    }

    /// One entity as data.
    public struct EntityDescription: Codable, Sendable, Hashable {
        /// The entity's name.
        public var name: String
        /// The persisted properties in slot order.
        public var properties: [PropertyDescription]
        /// Combinations of property names that must be unique: what stores enforce, a single
        /// `unique` attribute included (its ``PropertyDescription/options`` alone do not).
        public var uniquenessConstraints: [[String]]
        /// Property name lists with declared indexes.
        public var indices: [[String]]
        /// The classes of an entity that stores a class hierarchy, root first; `nil` for an entity of
        /// one class.
        public var classes: [ClassDescription]?

        /// A description.
        public init(
            name: String, properties: [PropertyDescription], uniquenessConstraints: [[String]] = [],
            indices: [[String]] = [], classes: [ClassDescription]? = nil
        ) {
            self.name = name
            self.properties = properties
            self.uniquenessConstraints = uniquenessConstraints
            self.indices = indices
            self.classes = classes
        }
    }

    /// One class of a hierarchy's entity as data.
    public struct ClassDescription: Codable, Sendable, Hashable {
        /// The class's name, as the entity's class attribute records it.
        public var name: String
        /// The name of its model superclass; `nil` for the root.
        public var superclassName: String?
        /// The properties the class declares itself.
        public var ownPropertyNames: [String]
        /// `true` for an abstract class; `nil` (left out of the stored form) otherwise.
        public var isAbstract: Bool?

        /// A class description.
        public init(name: String, superclassName: String?, ownPropertyNames: [String], isAbstract: Bool? = nil) {
            self.name = name
            self.superclassName = superclassName
            self.ownPropertyNames = ownPropertyNames
            self.isAbstract = isAbstract
        }
    }

    /// One property as data: an attribute (with a ``type``) or a relationship (with a ``destination``).
    public struct PropertyDescription: Codable, Sendable, Hashable {
        /// The property's name.
        public var name: String
        /// The name in an earlier schema version, if renamed.
        public var originalName: String?
        /// The attribute's stored type; `nil` for relationships.
        public var type: AttributeType?
        /// The attribute's options (`unique`, `externalStorage`, `preserveValueOnDeletion`, `encrypted`).
        ///
        /// `unique` here records the option; stores enforce the lists in the entity's
        /// ``EntityDescription/uniquenessConstraints``, so a description written by hand lists
        /// `[name]` there too (a model type's description does both).
        public var options: [String]
        /// The related entity; `nil` for attributes.
        public var destination: String?
        /// Whether the relationship is to-one.
        public var isToOne: Bool?
        /// The inverse relationship's name.
        public var inverse: String?
        /// The relationship's delete rule.
        public var deleteRule: Relationship.DeleteRule?
        /// The relationship's least count (0: none).
        public var minimumModelCount: Int?
        /// The relationship's greatest count (0: none).
        public var maximumModelCount: Int?
        /// The attribute's initial value on a new model, in descriptions that record it
        /// (``Schema/descriptionWithInitialValues``); `nil` in what a store records, which never
        /// has it, so stored descriptions written before it existed compare equal.
        public var initialValue: InitialValue? = nil

        /// An attribute description.
        public static func attribute(
            _ name: String, _ type: AttributeType, options: [String] = [], originalName: String? = nil,
            initialValue: InitialValue? = nil
        ) -> Self {
            PropertyDescription(
                name: name, originalName: originalName, type: type, options: options, destination: nil, isToOne: nil,
                inverse: nil, deleteRule: nil, minimumModelCount: nil, maximumModelCount: nil,
                initialValue: initialValue)
        }

        /// A relationship description.
        public static func relationship(
            _ name: String, to destination: String, isToOne: Bool, inverse: String? = nil,
            deleteRule: Relationship.DeleteRule = .nullify, minimumModelCount: Int = 0, maximumModelCount: Int = 0,
            originalName: String? = nil
        ) -> Self {
            PropertyDescription(
                name: name, originalName: originalName, type: nil, options: [], destination: destination,
                isToOne: isToOne,
                inverse: inverse, deleteRule: deleteRule, minimumModelCount: minimumModelCount,
                maximumModelCount: maximumModelCount)
        }
    }

    /// The schema as data.
    public var storedDescription: Description {
        Description(
            version: version,
            entities: entities.map { entity in
                EntityDescription(
                    name: entity.name,
                    properties: entity.properties.map { property in
                        switch property {
                        case .attribute(let a):
                            .attribute(a.name, a.valueType, options: a.options.names, originalName: a.originalName)
                        case .relationship(let r):
                            .relationship(
                                r.name, to: r.destination, isToOne: r.isToOne, inverse: r.inverseName,
                                deleteRule: r.deleteRule,
                                minimumModelCount: r.minimumModelCount, maximumModelCount: r.maximumModelCount,
                                originalName: r.originalName)
                        }
                    },
                    uniquenessConstraints: entity.uniquenessConstraints, indices: entity.indices,
                    classes: entity.classAttribute == nil
                        ? nil
                        : entity.classes.map {
                            ClassDescription(
                                name: $0.name, superclassName: $0.superclassName, ownPropertyNames: $0.ownPropertyNames,
                                isAbstract: $0.isAbstract ? true : nil)
                        })
            })
    }

    /// A schema from a description, without model types: what tools use to open a store file.
    ///
    /// Stores work with such a schema as with any other (they deal in snapshots); a context cannot
    /// fetch models of its entities, whose ``Entity/modelType`` is ``SchemaOnlyModel``.
    /// Throws ``DataStoreError/invalidSchema`` when a description is inconsistent.
    public convenience init(_ description: Description) throws {
        var entities: [Entity] = []
        var names: Set<String> = []
        for entityDescription in description.entities {
            guard names.insert(entityDescription.name).inserted else {
                throw DataStoreError.invalidSchema(
                    "the stored schema describes '\(entityDescription.name)' twice", remedy: "Repair the store's header"
                )
            }
            entities.append(try Entity(description: entityDescription))
        }
        for entity in entities {
            for relationship in entity.relationships where !names.contains(relationship.destination) {
                throw DataStoreError.invalidSchema(
                    "'\(entity.name).\(relationship.name)' refers to '\(relationship.destination)', which the stored schema does not describe",
                    remedy: "Repair the store's header", entityName: entity.name)
            }
        }
        self.init(entities: entities, version: description.version)
    }

    /// Differences between this schema and a stored one, one readable line each; empty when the
    /// stored data can be read with this schema as it is.
    public func differences(from stored: Description) -> [String] {
        let current = storedDescription
        var lines: [String] = []
        let storedByName = Dictionary(stored.entities.map { ($0.name, $0) }, uniquingKeysWith: { $1 })
        for entity in current.entities {
            guard let old = storedByName[entity.name] else {
                lines.append("entity '\(entity.name)' is new")
                continue
            }
            if old.properties != entity.properties {
                let oldNames = old.properties.map(\.name)
                let newNames = entity.properties.map(\.name)
                for name in newNames where !oldNames.contains(name) { lines.append("'\(entity.name).\(name)' is new") }
                for name in oldNames where !newNames.contains(name) {
                    lines.append("'\(entity.name).\(name)' was removed")
                }
                for (new, old) in zip(entity.properties, old.properties) where new.name == old.name && new != old {
                    lines.append("'\(entity.name).\(new.name)' changed")
                }
                if oldNames != newNames && Set(oldNames) == Set(newNames) {
                    lines.append("the properties of '\(entity.name)' were reordered")
                }
            }
            if old.uniquenessConstraints != entity.uniquenessConstraints {
                lines.append("the unique constraints of '\(entity.name)' changed")
            }
        }
        for entity in stored.entities where !current.entities.contains(where: { $0.name == entity.name }) {
            lines.append("entity '\(entity.name)' was removed")
        }
        return lines
    }
}

/// The stand-in model type of entities built from a stored ``Schema/Description``.
///
/// It has no properties of its own; stores read and write the entity's snapshots normally.
public final class SchemaOnlyModel: PersistentModel {
    /// The framework's state.
    public let persistentBackingData = BackingData()
    /// Creates an empty stand-in.
    public init() {}
}

extension Schema.Attribute.Options {
    /// The options' names, for descriptions.
    public var names: [String] {
        var names: [String] = []
        if contains(.unique) { names.append("unique") }
        if contains(.externalStorage) { names.append("externalStorage") }
        if contains(.preserveValueOnDeletion) { names.append("preserveValueOnDeletion") }
        if contains(.ephemeral) { names.append("ephemeral") }
        if contains(.encrypted) { names.append("encrypted") }
        return names
    }

    /// Options from names; unknown names are ignored.
    public init(names: [String]) {
        self = []
        for name in names {
            switch name {
            case "unique": insert(.unique)
            case "externalStorage": insert(.externalStorage)
            case "preserveValueOnDeletion": insert(.preserveValueOnDeletion)
            case "ephemeral": insert(.ephemeral)
            case "encrypted": insert(.encrypted)
            default: break
            }
        }
    }
}
