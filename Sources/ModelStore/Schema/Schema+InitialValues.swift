import Foundation

extension Schema {
    /// An attribute's value on a newly created model, as a description records it.
    ///
    /// Encoded as the string `"perModel"` or as the value's ``StoreValue`` form (`{"int": 3}`).
    public enum InitialValue: Codable, Sendable, Hashable {
        /// Every new model gets a value of its own: `Date.now` or `UUID()`.
        case perModel
        /// Every new model starts with this value, in its stored form.
        case value(StoreValue)

        private static let perModelText = "perModel"

        /// Encodes `"perModel"` or the value.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .perModel: try container.encode(Self.perModelText)
            case .value(let value): try container.encode(value)
            }
        }

        /// Decodes what ``encode(to:)`` writes.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                guard text == Self.perModelText else {
                    throw DecodingError.dataCorruptedError(
                        in: container, debugDescription: "an initial value is \"perModel\" or a stored value")
                }
                self = .perModel
            } else {
                self = .value(try container.decode(StoreValue.self))
            }
        }
    }

    /// The schema as data, with each attribute's initial value (``PropertyDescription/initialValue``):
    /// what `modelstore schema export --package` writes, so that generated models start as these do.
    ///
    /// Stores record ``storedDescription``, which leaves initial values out. A `Date` or `UUID`
    /// attribute whose value differs between two new models is ``InitialValue/perModel``: each
    /// model type with such attributes is created twice, on either side of a tick of the clock.
    /// Entities without model types (read from a description) have no initial values.
    public var descriptionWithInitialValues: Description {
        var description = storedDescription
        for (index, entity) in entities.enumerated() where entity.modelType != SchemaOnlyModel.self {
            let perModel = Self.attributesWithValuesPerModel(of: entity)
            for (slot, property) in description.entities[index].properties.enumerated() {
                guard property.type != nil, let attribute = entity.attribute(named: property.name) else { continue }
                description.entities[index].properties[slot].initialValue =
                    perModel.contains(attribute.name) ? .perModel : .value(attribute.defaultValue)
            }
        }
        return description
    }

    /// The names of the entity's `Date` and `UUID` attributes whose values differ between two new
    /// models, created on either side of a tick of the clock.
    private static func attributesWithValuesPerModel(of entity: Entity) -> Set<String> {
        let candidates = entity.attributes.filter { $0.valueType == .date || $0.valueType == .uuid }
        guard !candidates.isEmpty else { return [] }
        func values() -> [String: StoreValue] {
            let model: Any = entity.modelType.init()
            var values: [String: StoreValue] = [:]
            for attribute in candidates {
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
        return Set(candidates.map(\.name).filter { first[$0] != second[$0] })
    }
}
