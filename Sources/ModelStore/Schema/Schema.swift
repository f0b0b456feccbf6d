import Foundation

/// The entities a container stores: their attributes, relationships, constraints and indexes.
///
/// A schema is built from model types and is immutable and `Sendable`, so adapters can keep it
/// and read it from any thread. Creating a ``ModelContainer`` validates it (see ``validate()``).
public final class Schema: Sendable, CustomStringConvertible {
    /// The entities, in the order their model types were given (related types reached through
    /// relationships follow).
    public let entities: [Entity]
    /// The schema's version (from a ``VersionedSchema``, or 1.0.0).
    public let version: Version
    private let entitiesByName: [String: Entity]
    /// The layout of each model class, reading and writing its entity's slots.
    private let layoutsByType: [ObjectIdentifier: ModelLayout]
    private let problems: [DataStoreError]
    /// Values derived from this schema alone, made once and kept with it (see ``derived(by:make:)``).
    private let derivations = LockedValue<[ObjectIdentifier: any Sendable]>([:])

    /// A semantic version of a schema.
    public struct Version: Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
        /// The major version.
        public var major: Int
        /// The minor version.
        public var minor: Int
        /// The patch version.
        public var patch: Int
        /// Creates a version.
        public init(_ major: Int, _ minor: Int, _ patch: Int) {
            self.major = major
            self.minor = minor
            self.patch = patch
        }
        /// `major.minor.patch`.
        public var description: String { "\(major).\(minor).\(patch)" }
        /// Orders versions by major, minor, then patch.
        public static func < (lhs: Version, rhs: Version) -> Bool {
            (lhs.major, lhs.minor, lhs.patch) < (rhs.major, rhs.minor, rhs.patch)
        }
    }

    /// A schema of these model types and every model type their relationships reach.
    public convenience init(_ types: [any PersistentModel.Type], version: Version = Version(1, 0, 0)) {
        self.init(types: types, version: version)
    }

    /// A schema of these model types (variadic form).
    public convenience init(_ types: any PersistentModel.Type..., version: Version = Version(1, 0, 0)) {
        self.init(types: types, version: version)
    }

    /// The schema of a versioned schema's models, with its version.
    public convenience init(versionedSchema: any VersionedSchema.Type) {
        self.init(types: versionedSchema.models, version: versionedSchema.versionIdentifier)
    }

    private convenience init(types: [any PersistentModel.Type], version: Version) {
        var problems: [DataStoreError] = []
        var layouts: [ModelLayout] = []
        var seen: Set<ObjectIdentifier> = []
        var queue = types
        while !queue.isEmpty {
            let type = queue.removeFirst()
            guard seen.insert(ObjectIdentifier(type)).inserted else { continue }
            guard let layout = ModelLayout.of(existential: type) else { continue }
            layouts.append(layout)
            queue.append(contentsOf: Self.superclasses(of: type))
            queue.append(contentsOf: layout.relationships.map(\.destinationType))
        }
        // The classes of one hierarchy share their root's entity: group them, parents first.
        var groups: [ObjectIdentifier: [ModelLayout]] = [:]
        var order: [ObjectIdentifier] = []
        for layout in layouts {
            let root = ObjectIdentifier(layout.rootType)
            if groups[root] == nil { order.append(root) }
            groups[root, default: []].append(layout)
        }
        var entities: [Entity] = []
        var byName: [String: Entity] = [:]
        for root in order {
            let members = groups[root, default: []].sorted {
                Self.depth(of: $0.modelType) < Self.depth(of: $1.modelType)
            }
            let entity = Entity(layouts: members, problems: &problems)
            if byName[entity.name] != nil {
                problems.append(
                    .invalidSchema(
                        "two model types are both named '\(entity.name)'",
                        remedy: "Rename one of the types; entity names must be unique in a schema",
                        entityName: entity.name))
                continue
            }
            byName[entity.name] = entity
            entities.append(entity)
        }
        self.init(entities: entities, version: version, problems: problems)
    }

    /// The schemas ``ModelContainer`` makes for lists of model types, kept so that opening a
    /// container for the same types again reuses the immutable schema instead of building it anew
    /// (about 70,000 instructions for one model type, some 6% of opening a small SQLite store's
    /// container).
    static let sharedSchemas = SchemaCache(limit: 64)

    /// The schema of these model types at version 1.0.0: the same instance for the same list,
    /// while ``sharedSchemas`` keeps it.
    static func shared(for types: [any PersistentModel.Type]) -> Schema { sharedSchemas.schema(for: types) }

    /// A value that depends on this schema alone, made by `make` the first time it is asked for
    /// under `key` and kept with the schema: an adapter's tables of its entities (such as SQL
    /// layouts), built once however many stores open with this schema. `make` runs outside the
    /// lock and may run twice when two threads ask at once; the first value kept is the one returned.
    package func derived<Value: Sendable>(by key: Any.Type, make: () -> Value) -> Value {
        let identifier = ObjectIdentifier(key)
        if let value = derivations.withLock({ $0[identifier] }) as? Value { return value }
        let made = make()
        return derivations.withLock { kept in
            if let first = kept[identifier] as? Value { return first }
            kept[identifier] = made
            return made
        }
    }

    /// A model class's model superclasses, nearest first: what registering a subclass registers too.
    private static func superclasses(of type: any PersistentModel.Type) -> [any PersistentModel.Type] {
        var parents: [any PersistentModel.Type] = []
        var current: AnyClass = type
        while let parent = _getSuperclass(current), let model = parent as? any PersistentModel.Type {
            parents.append(model)
            current = parent
        }
        return parents
    }

    /// How many model superclasses a model class has.
    private static func depth(of type: any PersistentModel.Type) -> Int { superclasses(of: type).count }

    package init(entities: [Entity], version: Version, problems: [DataStoreError] = []) {
        self.version = version
        self.entities = entities
        self.entitiesByName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var layouts: [ObjectIdentifier: ModelLayout] = [:]
        for entity in entities where entity.modelType != SchemaOnlyModel.self {
            for modelClass in entity.classes {
                if let layout = entity.layout(for: modelClass.modelType) {
                    layouts[ObjectIdentifier(modelClass.modelType)] = layout
                }
            }
        }
        self.layoutsByType = layouts
        self.problems = problems
    }

    /// The entity name ModelStore uses for a model type: the type's name, or for a subclass of a
    /// model class, the name of its hierarchy's root class, whose entity stores the whole hierarchy.
    public static func entityName(for type: any PersistentModel.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = entityNames.withLock({ $0[key] }) { return name }
        let name = String(describing: rootType(of: type))
        entityNames.withLock { $0[key] = name }
        return name
    }

    /// The root class of a model type's hierarchy: the class that declares the conformance.
    static func rootType(of type: any PersistentModel.Type) -> any PersistentModel.Type {
        func root<M: PersistentModel>(_: M.Type) -> any PersistentModel.Type { M.RelatedModel.self }
        return root(type)
    }

    /// The name a hierarchy's entity records for models of this class: the type's name.
    public static func className(for type: any PersistentModel.Type) -> String { String(describing: type) }

    /// Type names, formatted once per type: formatting costs far more than the lookup.
    private static let entityNames = LockedValue<[ObjectIdentifier: String]>([:])

    /// The entity of a model type, if the schema has it.
    public func entity(for type: any PersistentModel.Type) -> Entity? {
        entitiesByName[Schema.entityName(for: type)]
    }

    /// The layout that reads and writes a model of this class in its entity's slots, if the
    /// schema has the class.
    func layout(for type: AnyObject.Type) -> ModelLayout? { layoutsByType[ObjectIdentifier(type)] }

    /// The entity with this name, if the schema has it.
    public func entity(named name: String) -> Entity? { entitiesByName[name] }

    /// Whether a relationship of any entity (this one's included) has the named entity as its
    /// destination: then deleting its models touches other models' references.
    public func isReferenced(_ entityName: String) -> Bool {
        entities.contains { $0.relationships.contains { $0.destination == entityName } }
    }

    /// Checks the schema and throws the first problem found, as ``DataStoreError/invalidSchema``.
    ///
    /// Reports: unsupported attribute types (naming the type and the property), duplicate entity
    /// or property names, missing or mismatched inverses, and constraints or indexes on unknown
    /// properties.
    public func validate() throws {
        if let problem = problems.first { throw problem }
    }

    /// Every problem the schema has, in the order found.
    public var validationErrors: [DataStoreError] { problems }

    /// The entity names and their properties, one entity a line.
    public var description: String {
        entities.map { entity in
            "\(entity.name)(" + entity.properties.map { "\($0.name): \($0.typeDescription)" }.joined(separator: ", ")
                + ")"
        }.joined(separator: "\n")
    }
}

/// Schemas of model type lists, at version 1.0.0, one instance per list: at most `limit` lists are
/// kept; past it, a schema is built for each call and not kept.
final class SchemaCache: Sendable {
    private let kept = LockedValue<[[ObjectIdentifier]: Schema]>([:])
    /// The most lists kept.
    let limit: Int

    init(limit: Int) { self.limit = limit }

    /// The schema of `types`, kept or built (and kept while there is room).
    func schema(for types: [any PersistentModel.Type]) -> Schema {
        let key = types.map { ObjectIdentifier($0) }
        if let schema = kept.withLock({ $0[key] }) { return schema }
        let schema = Schema(types)
        return kept.withLock { kept in
            if let first = kept[key] { return first }
            if kept.count < limit { kept[key] = schema }
            return schema
        }
    }

    /// How many lists are kept.
    var count: Int { kept.withLock { $0.count } }
}
