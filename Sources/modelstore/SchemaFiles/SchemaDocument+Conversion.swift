import Foundation
import ModelStore

extension SchemaDocument {
    /// The document for a stored schema. Stores do not record initial values, so it has no defaults.
    init(_ description: Schema.Description) {
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
    ///
    /// A `Date` whose initial value differs between two new models is `"now"`, and a `UUID` that
    /// does is left without a default (a new UUID per model): each is found by creating two models
    /// of the type and reading the attribute through its key path (once per type, not per model).
    init(_ schema: Schema) {
        self.init(schema.storedDescription)
        for (index, entity) in schema.entities.enumerated() {
            let fresh = Self.freshAttributes(of: entity)
            for (position, attribute) in models[index].attributes.enumerated() {
                guard let stored = entity.attribute(named: attribute.name) else { continue }
                let isFresh = fresh.contains(attribute.name)
                let value: DefaultValue? =
                    switch stored.valueType {
                    case .date where isFresh: .now
                    case .uuid where isFresh: nil
                    case .uuid: .value(stored.defaultValue)
                    default: stored.defaultValue == stored.valueType.zeroValue ? nil : .value(stored.defaultValue)
                    }
                models[index].attributes[position].defaultValue = value
            }
        }
    }

    /// The names of the `Date` and `UUID` attributes whose values differ between two new models
    /// of the entity, created on either side of a tick of the clock.
    private static func freshAttributes(of entity: Schema.Entity) -> Set<String> {
        let timed = entity.attributes.filter { $0.valueType == .date || $0.valueType == .uuid }
        guard !timed.isEmpty else { return [] }
        func values() -> [String: StoreValue] {
            let model: Any = entity.modelType.init()
            var values: [String: StoreValue] = [:]
            for attribute in timed {
                guard let keyPath = attribute.keyPath as AnyKeyPath? else { continue }
                switch model[keyPath: keyPath] {
                case let date as Date: values[attribute.name] = .date(date)
                case let uuid as UUID: values[attribute.name] = .uuid(uuid)
                default: break
                }
            }
            return values
        }
        let first = values()
        let created = Date()
        while Date() <= created { usleep(100) }
        let second = values()
        return Set(timed.map(\.name).filter { first[$0] != second[$0] })
    }

    /// The core's stored form of this document: what a store records, without initial values.
    var storedDescription: Schema.Description {
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
