import Foundation

extension Schema {
    /// One model type as the store sees it: named, typed properties in a fixed order.
    ///
    /// A property's ``Property/slot`` is its index in ``properties`` and in every
    /// ``DefaultSnapshot/values`` array of this entity.
    public final class Entity: Sendable, Hashable, CustomStringConvertible {
        /// The entity's name.
        public let name: String
        /// The persisted properties, in declaration order.
        public let properties: [Property]
        /// The persisted properties' names, in the same order: `propertyNames[slot]` is the name of the
        /// property in that slot, read without copying the property itself.
        public let propertyNames: [String]
        /// The persisted attributes, in declaration order.
        public let attributes: [Attribute]
        /// The relationships, in declaration order.
        public let relationships: [Relationship]
        /// Names of `.ephemeral` attributes: tracked in memory, never stored.
        public let ephemeralAttributeNames: [String]
        /// Sets of properties whose combined values must be unique, including single `.unique` attributes.
        public let uniquenessConstraints: [[String]]
        /// Sets of properties the entity declares indexes on (``ModelConstraint/index(_:)``).
        public let indices: [[String]]
        /// The model type (the root class, for a hierarchy).
        public let modelType: any PersistentModel.Type
        /// The classes the entity stores: the model type alone, or a hierarchy's root class and its
        /// subclasses, parents before children.
        public let classes: [ModelClass]
        /// The attribute that records each model's class (``classAttributeName``) in an entity
        /// that stores a class hierarchy; `nil` in an entity of one class.
        public let classAttribute: Attribute?
        let layout: ModelLayout
        private let slots: [String: Int]
        /// Each class's layout, reading and writing this entity's slots.
        private let layoutsByType: [ObjectIdentifier: ModelLayout]
        private let layoutsByClassName: [String: ModelLayout]

        /// The name of the attribute that records each model's class in a hierarchy's entity.
        public static let classAttributeName = "_modelClass"

        /// One class of the models an entity stores.
        public struct ModelClass: Sendable, Hashable {
            /// The class's name, as the entity's ``classAttribute`` records it.
            public let name: String
            /// The name of the class's model superclass, if it has one.
            public let superclassName: String?
            /// The properties the class declares itself (not those it inherits).
            public let ownPropertyNames: [String]
            /// The model type, or ``SchemaOnlyModel`` for an entity read from a stored description.
            public let modelType: any PersistentModel.Type
            /// Whether the class is abstract (``PersistentModel/abstractClasses``): no model of exactly
            /// this class is saved.
            public let isAbstract: Bool

            /// Classes are equal when they have the same name and model type.
            public static func == (lhs: ModelClass, rhs: ModelClass) -> Bool {
                lhs.name == rhs.name && lhs.modelType == rhs.modelType
            }

            /// Hashes the name.
            public func hash(into hasher: inout Hasher) { hasher.combine(name) }
        }

        /// An entity of one model type, or of a class hierarchy (`layouts` root first, parents
        /// before children): one entity holds every class's properties, those only subclasses
        /// declare stored as optional, and the class attribute records each model's class.
        init(layouts: [ModelLayout], problems: inout [DataStoreError]) {
            let root = layouts[0]
            let isHierarchy = layouts.count > 1
            name = root.entityName
            modelType = root.modelType
            var properties: [Property] = []
            var attributes: [Attribute] = []
            var relationships: [Relationship] = []
            var slots: [String: Int] = [:]
            var classSlots: [[Int]] = []
            var classes: [ModelClass] = []
            func abstractClasses<M: PersistentModel>(_: M.Type) -> [any PersistentModel.Type] { M.abstractClasses }
            let abstract = Set(abstractClasses(root.modelType).map { ObjectIdentifier($0) })
            for (position, layout) in layouts.enumerated() {
                var mine: [Int] = []
                var own: [String] = []
                let parent = _getSuperclass(layout.modelType).flatMap { $0 as? any PersistentModel.Type }
                let parentLayout = parent.flatMap { ModelLayout.of(existential: $0) }
                for field in layout.fields {
                    if position > 0, let existing = slots[field.name] {
                        Self.checkShared(field, with: properties[existing], of: layout, problems: &problems)
                        mine.append(existing)
                        if parentLayout?.fieldsByName[field.name] == nil { own.append(field.name) }
                        continue
                    }
                    let slot = properties.count
                    if let field = field as? AttributeAccessor {
                        let widened = position > 0 && !field.attributeType.isOptional
                        let attribute = Attribute(
                            name: field.name, originalName: field.originalName, slot: slot,
                            valueType: widened ? .optional(field.attributeType) : field.attributeType,
                            options: field.options, defaultValue: widened ? .null : field.defaultValue,
                            transformation: field.transformation, keyPath: field.keyPath)
                        attributes.append(attribute)
                        properties.append(.attribute(attribute))
                    } else if let field = field as? RelationshipAccessor {
                        let relationship = Self.relationship(field, slot: slot, of: layout, problems: &problems)
                        relationships.append(relationship)
                        properties.append(.relationship(relationship))
                    } else {
                        continue
                    }
                    if slots[field.name] != nil {
                        problems.append(
                            .invalidSchema(
                                "entity '\(layout.entityName)' declares the property '\(field.name)' twice",
                                remedy: "Rename one of the properties", entityName: layout.entityName))
                    }
                    slots[field.name] = slot
                    mine.append(slot)
                    own.append(field.name)
                }
                for (name, problem, remedy) in layout.unsupportedProperties {
                    problems.append(
                        .invalidSchema(
                            "property '\(layout.className).\(name)' \(problem)", remedy: remedy,
                            entityName: layout.entityName))
                }
                classSlots.append(mine)
                classes.append(
                    ModelClass(
                        name: layout.className, superclassName: parent.map(Schema.className(for:)),
                        ownPropertyNames: position == 0 ? layout.fields.map(\.name) : own,
                        modelType: layout.modelType,
                        isAbstract: abstract.contains(ObjectIdentifier(layout.modelType))))
            }
            var classAttribute: Attribute?
            var indices: [[String]] = []
            if isHierarchy {
                // Kept in history tombstones too, so a deleted model's history names its class.
                let attribute = Attribute(
                    name: Self.classAttributeName, originalName: nil, slot: properties.count, valueType: .string,
                    options: [.preserveValueOnDeletion], defaultValue: .string(root.className), transformation: nil,
                    keyPath: nil)
                if slots[attribute.name] != nil {
                    problems.append(
                        .invalidSchema(
                            "'\(root.className)' declares a property named '\(attribute.name)', the name of the attribute that records each model's class",
                            remedy: "Rename the property", entityName: root.entityName))
                }
                attributes.append(attribute)
                properties.append(.attribute(attribute))
                slots[attribute.name] = attribute.slot
                classAttribute = attribute
                indices.append([attribute.name])
            }
            self.classAttribute = classAttribute
            self.classes = classes
            var byType: [ObjectIdentifier: ModelLayout] = [:]
            var byClassName: [String: ModelLayout] = [:]
            var rootLayout = root
            for (position, layout) in layouts.enumerated() {
                var mapped = layout
                if let classAttribute {
                    var filler = properties.map(\.initialValue)
                    filler[classAttribute.slot] = .string(layout.className)
                    var storage = ModelLayout.StorageMap(slots: classSlots[position], filler: filler)
                    for (index, field) in layout.fields.enumerated() {
                        guard let field = field as? AttributeAccessor, !field.attributeType.isOptional,
                            case .attribute(let stored) = properties[classSlots[position][index]], stored.isOptional
                        else { continue }
                        storage.nullFallbacks.append((index, field.defaultValue))
                    }
                    mapped = ModelLayout(layout, storage: storage)
                }
                if position == 0 { rootLayout = mapped }
                byType[ObjectIdentifier(layout.modelType)] = mapped
                byClassName[layout.className] = mapped
            }
            self.layout = rootLayout
            self.layoutsByType = byType
            self.layoutsByClassName = byClassName
            var unique = attributes.filter { $0.options.contains(.unique) }.map { [$0.name] }
            for (kind, names) in Self.constraints(of: root) {
                let resolved = names.compactMap { $0 }
                if resolved.count != names.count || resolved.contains(where: { slots[$0] == nil }) {
                    problems.append(
                        .invalidSchema(
                            "a \(kind == .unique ? "uniqueness constraint" : "index") of '\(root.entityName)' names a property that is not stored",
                            remedy:
                                "Use key paths to @Attribute or to-one @Relationship properties of '\(root.entityName)'",
                            entityName: root.entityName))
                    continue
                }
                if kind == .unique { unique.append(resolved) } else { indices.append(resolved) }
            }
            self.properties = properties
            self.propertyNames = properties.map(\.name)
            self.attributes = attributes
            self.relationships = relationships
            self.ephemeralAttributeNames = layouts.flatMap { $0.ephemeralAttributes.map(\.name) }
            self.uniquenessConstraints = unique
            self.indices = indices
            self.slots = slots
        }

        /// The relationship a field declares, with the problems of its inverse.
        private static func relationship(
            _ field: RelationshipAccessor, slot: Int, of layout: ModelLayout, problems: inout [DataStoreError]
        ) -> Relationship {
            let inverse = field.inverse
            if field.declaredInverse != nil && inverse == nil {
                problems.append(
                    .invalidSchema(
                        "the inverse of '\(layout.className).\(field.name)' is not a relationship of '\(field.destinationEntityName)' back to '\(layout.entityName)'",
                        remedy:
                            "Pass a key path to a @Relationship property of '\(field.destinationEntityName)' whose type is '\(layout.entityName)' or '[\(layout.entityName)]'",
                        entityName: layout.entityName))
            }
            if let inverse, inverse.destinationEntityName != layout.entityName {
                problems.append(
                    .invalidSchema(
                        "the inverse of '\(layout.className).\(field.name)' points to '\(inverse.destinationEntityName)', not '\(layout.entityName)'",
                        remedy:
                            "Make the inverse relationship's type '\(layout.entityName)?' or '[\(layout.entityName)]'",
                        entityName: layout.entityName))
            }
            return Relationship(
                name: field.name, originalName: field.originalName, slot: slot,
                destination: field.destinationEntityName, isToOne: !field.isToMany,
                inverseName: inverse?.name, deleteRule: field.deleteRule,
                minimumModelCount: field.minimumModelCount, maximumModelCount: field.maximumModelCount,
                keyPath: field.keyPath)
        }

        /// Reports a subclass field that shares a name with another class's property of another kind or type.
        private static func checkShared(
            _ field: FieldAccessor, with property: Property, of layout: ModelLayout, problems: inout [DataStoreError]
        ) {
            let matches: Bool
            switch property {
            case .attribute(let attribute):
                guard let field = field as? AttributeAccessor else {
                    matches = false
                    break
                }
                matches =
                    attribute.valueType == field.attributeType || attribute.valueType == .optional(field.attributeType)
            case .relationship(let relationship):
                guard let field = field as? RelationshipAccessor else {
                    matches = false
                    break
                }
                matches =
                    relationship.destination == field.destinationEntityName && relationship.isToOne == !field.isToMany
            }
            guard !matches else { return }
            problems.append(
                .invalidSchema(
                    "'\(layout.className).\(field.name)' has another type than the property '\(field.name)' another class of the '\(layout.entityName)' hierarchy declares; one entity stores the whole hierarchy",
                    remedy: "Rename one of the two properties, or declare it once on a common superclass",
                    entityName: layout.entityName))
        }

        /// The layout that reads and writes a model of this class in this entity's slots, or `nil`
        /// if the entity does not store the class.
        func layout(for type: AnyObject.Type) -> ModelLayout? {
            if classAttribute == nil { return ObjectIdentifier(type) == ObjectIdentifier(modelType) ? layout : nil }
            return layoutsByType[ObjectIdentifier(type)]
        }

        /// The layout of a model's class in this entity, or the entity's own layout.
        func layout(of model: AnyObject) -> ModelLayout { layout(for: type(of: model)) ?? layout }

        /// The layout of the class whose model holds these values (the class attribute's), or `nil`
        /// if the entity stores no class of that name.
        func layout(forValues values: [StoreValue]) -> ModelLayout? {
            guard let classAttribute else { return layout }
            guard classAttribute.slot < values.count, case .string(let name) = values[classAttribute.slot] else {
                return layout
            }
            return layoutsByClassName[name]
        }

        /// The condition that a model (the entity's own, or the one `path` reaches) is of `type` or
        /// one of its subclasses: a membership test of the class attribute. `nil` when the entity
        /// does not store `type` as one of its classes.
        func classFilter(_ type: any PersistentModel.Type, path: [String] = []) -> StoreFilter? {
            guard let classAttribute, layout(for: type) != nil else { return nil }
            let names = classNames(inheritingFrom: Schema.className(for: type))
            return .isIn(StorePath(path + [classAttribute.name]), names.map { .string($0) })
        }

        /// The properties that only the classes a class filter (`_modelClass IN [...]`) admits
        /// declare, which every model of another class stores empty.
        func propertiesStoredEmptyOutside(_ classFilter: StoreFilter) -> Set<String> {
            guard case .isIn(_, let values) = classFilter else { return [] }
            let inside = Set(
                values.compactMap { value -> String? in
                    if case .string(let name) = value { return name }
                    return nil
                })
            let outside = classes.filter { !inside.contains($0.name) }.flatMap(\.ownPropertyNames)
            let admitted = classes.filter { inside.contains($0.name) }.flatMap(\.ownPropertyNames)
            return Set(admitted).subtracting(outside)
        }

        /// The names of a class and of every class that inherits from it, as the class attribute records them.
        public func classNames(inheritingFrom className: String) -> [String] {
            var names = [className]
            var index = 0
            while index < names.count {
                let parent = names[index]
                names.append(contentsOf: classes.filter { $0.superclassName == parent }.map(\.name))
                index += 1
            }
            return names
        }

        /// An entity from a stored description, with ``SchemaOnlyModel`` as its model type.
        package init(description: EntityDescription) throws {
            guard let layout = ModelLayout.of(SchemaOnlyModel.self) else {
                throw DataStoreError.invalidSchema(
                    "the schema-only model has no layout", remedy: "Report this as a bug")
            }
            self.layout = layout
            name = description.name
            modelType = SchemaOnlyModel.self
            layoutsByType = [:]
            layoutsByClassName = [:]
            var properties: [Property] = []
            var slots: [String: Int] = [:]
            for (slot, property) in description.properties.enumerated() {
                guard slots[property.name] == nil else {
                    throw DataStoreError.invalidSchema(
                        "the stored entity '\(description.name)' describes the property '\(property.name)' twice",
                        remedy: "Repair the store's header", entityName: description.name)
                }
                slots[property.name] = slot
                if let type = property.type {
                    properties.append(
                        .attribute(
                            Attribute(
                                name: property.name, originalName: property.originalName, slot: slot, valueType: type,
                                options: Schema.Attribute.Options(names: property.options),
                                defaultValue: type.zeroValue, transformation: nil, keyPath: nil)))
                } else if let destination = property.destination {
                    properties.append(
                        .relationship(
                            Relationship(
                                name: property.name, originalName: property.originalName, slot: slot,
                                destination: destination,
                                isToOne: property.isToOne ?? true, inverseName: property.inverse,
                                deleteRule: property.deleteRule ?? .nullify,
                                minimumModelCount: property.minimumModelCount ?? 0,
                                maximumModelCount: property.maximumModelCount ?? 0, keyPath: nil)))
                } else {
                    throw DataStoreError.invalidSchema(
                        "the stored property '\(description.name).\(property.name)' has neither a type nor a destination",
                        remedy: "Repair the store's header", entityName: description.name)
                }
            }
            for names in description.uniquenessConstraints + description.indices
            where names.contains(where: { slots[$0] == nil }) {
                throw DataStoreError.invalidSchema(
                    "a constraint of the stored entity '\(description.name)' names an unknown property",
                    remedy: "Repair the store's header", entityName: description.name)
            }
            self.properties = properties
            self.propertyNames = properties.map(\.name)
            let attributes = properties.compactMap { if case .attribute(let a) = $0 { a } else { nil } }
            self.attributes = attributes
            self.relationships = properties.compactMap { if case .relationship(let r) = $0 { r } else { nil } }
            self.ephemeralAttributeNames = []
            self.classAttribute = attributes.first { $0.name == Self.classAttributeName }
            self.classes = (description.classes ?? []).map {
                ModelClass(
                    name: $0.name, superclassName: $0.superclassName, ownPropertyNames: $0.ownPropertyNames,
                    modelType: SchemaOnlyModel.self, isAbstract: $0.isAbstract ?? false)
            }
            self.uniquenessConstraints = description.uniquenessConstraints
            self.indices = description.indices
            self.slots = slots
        }

        private static func constraints(of layout: ModelLayout) -> [(ModelConstraintKind, [String?])] {
            func open<M: PersistentModel>(_ type: M.Type) -> [(ModelConstraintKind, [String?])] {
                M.constraints.map { constraint in
                    (constraint.kind, constraint.keyPaths.map { layout.propertyName(for: $0) })
                }
            }
            return open(layout.modelType)
        }

        /// The slot of the property with this name, or `nil` if the entity has no such stored property.
        public func slot(of name: String) -> Int? { slots[name] }

        /// The property with this name.
        public func property(named name: String) -> Property? { slots[name].map { properties[$0] } }

        /// The attribute with this name.
        public func attribute(named name: String) -> Attribute? {
            guard case .attribute(let attribute)? = property(named: name) else { return nil }
            return attribute
        }

        /// The relationship with this name.
        public func relationship(named name: String) -> Relationship? {
            guard case .relationship(let relationship)? = property(named: name) else { return nil }
            return relationship
        }

        /// The attribute a key path on the model reads (`\Trip.name`, or an attribute's own
        /// ``Schema/Attribute/keyPath``), or `nil` if it reads no stored attribute.
        public func attribute(for keyPath: AnyKeyPath) -> Attribute? {
            propertyName(for: keyPath).flatMap(attribute(named:))
        }

        /// The relationship a key path on the model reads (`\Trip.items`, or a relationship's own
        /// ``Schema/Relationship/keyPath``), or `nil` if it reads no relationship.
        public func relationship(for keyPath: AnyKeyPath) -> Relationship? {
            propertyName(for: keyPath).flatMap(relationship(named:))
        }

        /// The stored property a key path on the model reads (`\Trip.name` → `name`), or `nil`.
        ///
        /// Resolved once per key path and cached, so this is cheap to call repeatedly.
        public func propertyName(for keyPath: AnyKeyPath) -> String? {
            if classAttribute != nil, let own = layoutsByType[ObjectIdentifier(type(of: keyPath).rootType)] {
                return own.propertyName(for: keyPath)
            }
            return layout.propertyName(for: keyPath)
        }

        /// Entities are equal when they have the same name and model type.
        public static func == (lhs: Entity, rhs: Entity) -> Bool {
            lhs === rhs || (lhs.name == rhs.name && lhs.modelType == rhs.modelType)
        }

        /// Hashes the name.
        public func hash(into hasher: inout Hasher) { hasher.combine(name) }

        /// The entity's name.
        public var description: String { name }
    }

    /// A schema key path cast to its typed form. Key paths are immutable, so every key path the
    /// schema holds is `Sendable`; the cast only restores the marker a dynamic cast drops.
    static func typed<Model, Value>(
        _ keyPath: (any AnyKeyPath & Sendable)?, on _: Model.Type, as _: Value.Type
    ) -> (any KeyPath<Model, Value> & Sendable)? {
        guard let typed = keyPath as? KeyPath<Model, Value> else { return nil }
        return unsafeBitCast(typed, to: (any KeyPath<Model, Value> & Sendable).self)
    }

    /// A persisted property: an attribute or a relationship.
    public enum Property: Sendable, Hashable {
        /// A stored value.
        case attribute(Attribute)
        /// A reference to other models.
        case relationship(Relationship)

        /// The property's name.
        public var name: String {
            switch self {
            case .attribute(let a): a.name
            case .relationship(let r): r.name
            }
        }

        /// The property's index in its entity's properties and snapshots.
        public var slot: Int {
            switch self {
            case .attribute(let a): a.slot
            case .relationship(let r): r.slot
            }
        }

        /// The property's type in Swift spelling (`String?`, `[Item]`).
        public var typeDescription: String {
            switch self {
            case .attribute(let a): a.valueType.description
            case .relationship(let r): r.isToOne ? "\(r.destination)?" : "[\(r.destination)]"
            }
        }
    }

    /// A stored attribute of an entity.
    public struct Attribute: Sendable, Hashable {
        /// The property's name.
        public let name: String
        /// The name the property had in an earlier schema version, for migrations.
        public let originalName: String?
        /// The property's index in its entity's properties and snapshots.
        public let slot: Int
        /// The stored type.
        public let valueType: AttributeType
        /// The attribute's options.
        public let options: Options
        /// The stored form of the property's initial value on a fresh model.
        public let defaultValue: StoreValue
        /// The value transformer that stores the attribute's values as `Data`
        /// (`@Attribute(.transformable(by:))`), if any: predicates and sorts on the attribute run on
        /// the models. `nil` for entities read from a stored ``Schema/Description``.
        public let transformation: Transformation?
        /// A key path that reads this attribute on a model of the entity's type, typed
        /// `KeyPath<Model, Value>`; `nil` for entities read from a stored ``Schema/Description``.
        ///
        /// Use it in generic code: `model[keyPath:]`, a `SortDescriptor`, or a hand-built predicate
        /// (typed with ``keyPath(on:as:)``).
        /// Fetches resolve it like the key path literal (`\Trip.name`), but the two are different
        /// values; to find the attribute of a literal, use ``Schema/Entity/attribute(for:)``.
        /// Reading through it is not seen by `withObservationTracking`; read the property itself for that.
        public let keyPath: (any AnyKeyPath & Sendable)?

        /// ``keyPath`` typed for `Model` and `Value`, or `nil` if it is not a key path of that type:
        /// `attribute.keyPath(on: Trip.self, as: String.self)`, ready for `SortDescriptor` or a predicate.
        public func keyPath<Model: PersistentModel, Value>(
            on model: Model.Type, as value: Value.Type
        ) -> (any KeyPath<Model, Value> & Sendable)? {
            Schema.typed(keyPath, on: model, as: value)
        }

        /// Whether the attribute may be `nil`.
        public var isOptional: Bool { valueType.isOptional }
        /// Whether the attribute's values must be unique.
        public var isUnique: Bool { options.contains(.unique) }

        /// Options of an attribute, as in `@Attribute(.unique)`.
        public struct Options: OptionSet, Sendable, Hashable {
            /// The option bits.
            public let rawValue: UInt8
            /// Creates options from bits.
            public init(rawValue: UInt8) { self.rawValue = rawValue }
            /// No two models of the entity may have the same value.
            public static let unique = Options(rawValue: 1 << 0)
            /// Large values live outside the main store file, where the adapter supports it.
            public static let externalStorage = Options(rawValue: 1 << 1)
            /// The value is kept in the history tombstone when the model is deleted.
            public static let preserveValueOnDeletion = Options(rawValue: 1 << 2)
            /// Changes are tracked in memory but never stored.
            public static let ephemeral = Options(rawValue: 1 << 3)
            /// The value is sealed (AES-256-GCM) before it leaves the process, under the attribute key
            /// the app gives `AttributeEncryption` (ModelStoreCrypto), and stored as `Data`. A
            /// predicate or sort on it runs on the models. See "Protecting data at rest".
            public static let encrypted = Options(rawValue: 1 << 4)
            /// SwiftData's spelling, which asks CloudKit to encrypt the value: here, ``encrypted``.
            public static let allowsCloudEncryption = encrypted
        }
    }

    /// A relationship of an entity to another entity.
    public struct Relationship: Sendable, Hashable {
        /// The property's name.
        public let name: String
        /// The name the property had in an earlier schema version, for migrations.
        public let originalName: String?
        /// The property's index in its entity's properties and snapshots.
        public let slot: Int
        /// The related entity's name.
        public let destination: String
        /// Whether the relationship holds at most one model.
        public let isToOne: Bool
        /// The name of the inverse relationship on the destination, if any.
        public let inverseName: String?
        /// What deleting a model does to the models it relates to.
        public let deleteRule: DeleteRule
        /// The least number of related models a saved model may have (0: no minimum).
        public let minimumModelCount: Int
        /// The greatest number of related models a saved model may have (0: no maximum).
        public let maximumModelCount: Int
        /// A key path that reads this relationship on a model of the entity's type (loading it if
        /// needed), typed `KeyPath<Model, Destination?>` or `KeyPath<Model, [Destination]>`; `nil`
        /// for entities read from a stored ``Schema/Description``.
        ///
        /// Fetches resolve it like the key path literal (`\Trip.items`), but the two are different
        /// values; to find the relationship of a literal, use ``Schema/Entity/relationship(for:)``.
        /// Reading through it is not seen by `withObservationTracking`; read the property itself for that.
        public let keyPath: (any AnyKeyPath & Sendable)?

        /// ``keyPath`` typed for `Model` and `Value` (`Destination?` or `[Destination]`), or `nil` if
        /// it is not a key path of that type: `relationship.keyPath(on: Trip.self, as: [Item].self)`.
        public func keyPath<Model: PersistentModel, Value>(
            on model: Model.Type, as value: Value.Type
        ) -> (any KeyPath<Model, Value> & Sendable)? {
            Schema.typed(keyPath, on: model, as: value)
        }

        /// What deleting a model does to the models on the other end of a relationship.
        public enum DeleteRule: String, Sendable, Hashable, Codable {
            /// Clear the inverse reference on the related models (the default).
            case nullify
            /// Delete the related models too.
            case cascade
            /// Refuse the delete while any related model exists.
            case deny
            /// Do nothing to the related models.
            case noAction
        }
    }
}
