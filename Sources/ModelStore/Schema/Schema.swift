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
    private let problems: [DataStoreError]

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
            queue.append(contentsOf: layout.relationships.map(\.destinationType))
        }
        var entities: [Entity] = []
        var byName: [String: Entity] = [:]
        for layout in layouts {
            let entity = Entity(layout: layout, problems: &problems)
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

    package init(entities: [Entity], version: Version, problems: [DataStoreError] = []) {
        self.version = version
        self.entities = entities
        self.entitiesByName = Dictionary(entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.problems = problems
    }

    /// The entity name ModelStore uses for a model type: the type's name.
    public static func entityName(for type: any PersistentModel.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = entityNames.withLock({ $0[key] }) { return name }
        let name = String(describing: type)
        entityNames.withLock { $0[key] = name }
        return name
    }

    /// Type names, formatted once per type: formatting costs far more than the lookup.
    private static let entityNames = LockedValue<[ObjectIdentifier: String]>([:])

    /// The entity of a model type, if the schema has it.
    public func entity(for type: any PersistentModel.Type) -> Entity? {
        entitiesByName[Schema.entityName(for: type)]
    }

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
