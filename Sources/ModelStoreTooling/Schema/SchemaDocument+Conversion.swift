import Foundation
import ModelStore

extension SchemaDocument {
    /// The document for a schema description, with the initial values it records (a store's
    /// records none; `Schema.descriptionWithInitialValues` records them). An entity that stores
    /// a class hierarchy becomes one model per class, each with the properties it declares; the
    /// class attribute and its index, which the core adds, are left out.
    package init(_ description: Schema.Description) {
        var models: [Model] = []
        for entity in description.entities {
            guard let classes = entity.classes, !classes.isEmpty else {
                var model = Self.model(entity.name, of: entity, keeping: { _ in true })
                let alone = Set(model.attributes.filter(\.unique).map { [$0.name] })
                model.unique = entity.uniquenessConstraints.filter { !alone.contains($0) }
                model.indexes = entity.indices
                models.append(model)
                continue
            }
            let alone = Set(
                entity.properties.filter { $0.type != nil && $0.options.contains("unique") }.map { [$0.name] })
            for modelClass in classes {
                let own = Set(modelClass.ownPropertyNames)
                var model = Self.model(
                    modelClass.name, of: entity,
                    keeping: { own.contains($0) && $0 != Schema.Entity.classAttributeName })
                model.superclass = modelClass.superclassName
                model.isAbstract = modelClass.isAbstract ?? false
                if modelClass.superclassName == nil {
                    model.unique = entity.uniquenessConstraints.filter { !alone.contains($0) }
                    model.indexes = entity.indices.filter { $0 != [Schema.Entity.classAttributeName] }
                }
                models.append(model)
            }
        }
        self.init(version: description.version, models: models)
    }

    /// A model with the entity's properties whose names `keep` accepts, in the entity's order.
    private static func model(_ name: String, of entity: Schema.EntityDescription, keeping keep: (String) -> Bool)
        -> Model
    {
        var model = Model(name: name)
        for property in entity.properties where keep(property.name) {
            if let type = property.type {
                var attribute = Attribute(name: property.name, type: type)
                attribute.unique = property.options.contains("unique")
                attribute.externalStorage = property.options.contains("externalStorage")
                attribute.preserveValueOnDeletion = property.options.contains("preserveValueOnDeletion")
                attribute.originalName = property.originalName
                attribute.defaultValue = property.initialValue.flatMap { Self.defaultValue($0, type: type) }
                model.attributes.append(attribute)
            } else if let destination = property.destination {
                model.relationships.append(
                    Relationship(
                        name: property.name, destination: destination, toMany: !(property.isToOne ?? true),
                        deleteRule: property.deleteRule ?? .nullify, inverse: property.inverse,
                        minimumModelCount: property.minimumModelCount ?? 0,
                        maximumModelCount: property.maximumModelCount ?? 0, originalName: property.originalName)
                )
            }
        }
        return model
    }

    /// The document for a schema built from model types, with each attribute's initial value.
    package init(_ schema: Schema) { self.init(schema.descriptionWithInitialValues) }

    /// The file's default for an attribute's initial value: `"now"` for a date new per model, none
    /// for a UUID new per model or a zero value, and none for a value a file cannot spell (a
    /// `Data`, a collection or a struct: generated code starts those empty).
    private static func defaultValue(_ initial: Schema.InitialValue, type: AttributeType) -> DefaultValue? {
        guard case .value(let value) = initial else { return type == .date ? .now : nil }
        guard DefaultValueText.canSpell(type) else { return nil }
        return value == type.zeroValue && type != .uuid ? nil : .value(value)
    }

    /// The core's stored form of this document: what a store records, without initial values.
    ///
    /// A hierarchy is one entity named after its root, built as the core builds it: the root's
    /// properties, then each subclass's (parents before children) made optional, a property a
    /// sibling already declared stored once; then the class attribute, indexed before the root's
    /// indexes. Relationships name their destination's entity: its hierarchy's root.
    package var storedDescription: Schema.Description {
        Schema.Description(
            version: version,
            entities: models.filter { rootName(of: $0.name) == $0.name }.map { root in
                let members = hierarchy(rootedAt: root.name)
                guard members.count > 1 else { return entity(of: [root], root: root) }
                return entity(of: members, root: root)
            })
    }

    /// The entity of a model alone (`members` is the root only) or of a hierarchy.
    private func entity(of members: [Model], root: Model) -> Schema.EntityDescription {
        let isHierarchy = members.count > 1
        var properties: [Schema.PropertyDescription] = []
        var names: Set<String> = []
        var classes: [Schema.ClassDescription] = []
        for (position, model) in members.enumerated() {
            var own: [String] = []
            for attribute in model.attributes {
                own.append(attribute.name)
                guard names.insert(attribute.name).inserted else { continue }
                let widened = position > 0 && !attribute.type.isOptional
                properties.append(
                    .attribute(
                        attribute.name, widened ? .optional(attribute.type) : attribute.type,
                        options: attribute.optionNames, originalName: attribute.originalName))
            }
            for relationship in model.relationships {
                own.append(relationship.name)
                guard names.insert(relationship.name).inserted else { continue }
                properties.append(
                    .relationship(
                        relationship.name, to: rootName(of: relationship.destination), isToOne: !relationship.toMany,
                        inverse: relationship.inverse, deleteRule: relationship.deleteRule,
                        minimumModelCount: relationship.minimumModelCount,
                        maximumModelCount: relationship.maximumModelCount, originalName: relationship.originalName))
            }
            classes.append(
                Schema.ClassDescription(
                    name: model.name, superclassName: position == 0 ? nil : model.superclass, ownPropertyNames: own,
                    isAbstract: model.isAbstract ? true : nil))
        }
        let unique = properties.filter { $0.type != nil && $0.options.contains("unique") }.map { [$0.name] }
        guard isHierarchy else {
            return Schema.EntityDescription(
                name: root.name, properties: properties, uniquenessConstraints: unique + root.unique,
                indices: root.indexes)
        }
        properties.append(.attribute(Schema.Entity.classAttributeName, .string, options: ["preserveValueOnDeletion"]))
        return Schema.EntityDescription(
            name: root.name, properties: properties, uniquenessConstraints: unique + root.unique,
            indices: [[Schema.Entity.classAttributeName]] + root.indexes, classes: classes)
    }
}
