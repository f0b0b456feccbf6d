import Foundation
import ModelStore

extension SchemaDocument {
    /// The document for a schema description, with the initial values it records (a store's
    /// records none; ``Schema/descriptionWithInitialValues`` records them).
    package init(_ description: Schema.Description) {
        self.init(
            version: description.version,
            models: description.entities.map { entity in
                var model = Model(name: entity.name)
                for property in entity.properties {
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
                let alone = Set(model.attributes.filter(\.unique).map { [$0.name] })
                model.unique = entity.uniquenessConstraints.filter { !alone.contains($0) }
                model.indexes = entity.indices
                return model
            })
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
    package var storedDescription: Schema.Description {
        Schema.Description(
            version: version,
            entities: models.map { model in
                let attributes = model.attributes.map { attribute in
                    Schema.PropertyDescription.attribute(
                        attribute.name, attribute.type, options: attribute.optionNames,
                        originalName: attribute.originalName)
                }
                let relationships = model.relationships.map { relationship in
                    Schema.PropertyDescription.relationship(
                        relationship.name, to: relationship.destination, isToOne: !relationship.toMany,
                        inverse: relationship.inverse, deleteRule: relationship.deleteRule,
                        minimumModelCount: relationship.minimumModelCount,
                        maximumModelCount: relationship.maximumModelCount, originalName: relationship.originalName)
                }
                return Schema.EntityDescription(
                    name: model.name, properties: attributes + relationships,
                    uniquenessConstraints: model.attributes.filter(\.unique).map { [$0.name] } + model.unique,
                    indices: model.indexes)
            })
    }
}
