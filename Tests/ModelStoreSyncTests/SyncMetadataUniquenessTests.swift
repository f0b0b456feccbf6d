import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// The keys of the engine's own entities hold one row each in every store kind: a record's global
/// identifier, a state row's remote, a replica's identifier and a conflict's identifier. Two servers
/// that take the same push at once store its models once; stores written before the constraints gain
/// them on open, and one that already holds two rows for a key refuses to open and stays as it was.
@Suite struct SyncMetadataUniquenessTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    static let legRecords = SyncMetadata.recordEntityName(for: "Leg")

    /// Each keyed entity of the sync metadata, with its key.
    static let keys: [(entity: String, property: String)] = [
        (SyncMetadata.recordEntityName(for: "Journey"), "globalID"), (legRecords, "globalID"),
        (SyncMetadata.stateEntityName, "remote"), (SyncMetadata.replicaEntityName, "replica"),
        (SyncMetadata.conflictEntityName, "conflictID"),
    ]

    func url(_ scheme: String, _ name: String = "store") -> String {
        scheme == "memory" ? "memory:" : scheme + ":" + directory.path(name + "." + scheme)
    }

    /// Inserts one row of `entityName` holding `values`, through the store (as the engine writes).
    static func insert(_ entityName: String, _ values: [String: StoreValue], into container: ModelContainer) throws {
        let entity = try #require(container.schema.entity(named: entityName))
        let row = try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: entityName), entity: entity, namedValues: values)
        _ = try container.stores[0].saveErased(
            DataStoreSaveChangesRequest(
                editingState: EditingState(author: "test"), inserted: [row], updated: [], deleted: []))
    }

    /// The text a row holds for a property, if it holds text.
    static func text(_ value: StoreValue?) -> String? {
        if case .string(let text)? = value { text } else { nil }
    }

    /// Every row of `entityName`.
    static func rows(_ entityName: String, in container: ModelContainer) throws -> [DefaultSnapshot] {
        try container.stores[0].fetchErased(
            DataStoreFetchRequest<SchemaOnlyModel>(
                descriptor: FetchDescriptor(), editingState: EditingState(author: "test"),
                query: StoreQuery(entityName: entityName))
        ).snapshots
    }

    /// The test schema as a store written before the engine's entities had uniqueness constraints
    /// recorded it.
    static func schemaWithoutConstraints() throws -> Schema {
        var description = Replica.schema.storedDescription
        for index in description.entities.indices where SyncMetadata.isMetadata(description.entities[index].name) {
            description.entities[index].uniquenessConstraints = []
        }
        return try Schema(description)
    }

    @Test func everyKeyedEntityDeclaresItsKeyUnique() throws {
        for (entity, property) in Self.keys {
            let found = try #require(Replica.schema.entity(named: entity))
            #expect(found.uniquenessConstraints == [[property]], "\(entity)")
        }
    }

    @Test(arguments: ["memory", "json", "log", "sqlite"])
    func aSecondRowForAKeyIsRefusedAndTheFirstStays(scheme: String) throws {
        let container = try ModelContainer(for: Replica.schema, url: url(scheme))
        for (entity, property) in Self.keys {
            try Self.insert(entity, [property: .string("key-1")], into: container)
            #expect {
                try Self.insert(entity, [property: .string("key-1")], into: container)
            } throws: { error in
                let error = try #require(error as? DataStoreError)
                return error.code == .uniqueConstraintViolation && error.entityName == entity
            }
            try Self.insert(entity, [property: .string("key-2")], into: container)
            let keys = try Self.rows(entity, in: container).compactMap { Self.text($0[property]) }
            #expect(keys.sorted() == ["key-1", "key-2"], "\(entity)")
        }
    }

    @Test(arguments: ["json", "log", "sqlite"])
    func aStoreWrittenBeforeTheConstraintsGainsThemAndKeepsItsRows(scheme: String) throws {
        let url = url(scheme)
        do {
            let old = try ModelContainer(for: try Self.schemaWithoutConstraints(), url: url)
            for number in 0..<3 { try Self.insert(Self.legRecords, ["globalID": .string("G\(number)")], into: old) }
            // The old schema lets a second row in: what the constraint is there to stop.
            try Self.insert(Self.legRecords, ["globalID": .string("G0")], into: old)
        }
        // A store with two records for one key does not open with the constraint, and is left as it was.
        let before = try Self.contents(of: url)
        #expect {
            _ = try ModelContainer(for: Replica.schema, url: url)
        } throws: { error in
            "\(error)".contains(Self.legRecords) && "\(error)".contains("globalID")
        }
        #expect(try Self.contents(of: url) == before)

        // Once the duplicate is gone (as a person repairing the store would remove it), the store opens
        // with the constraint, keeps its records, and refuses a second record for a key.
        do {
            let old = try ModelContainer(for: try Self.schemaWithoutConstraints(), url: url)
            let duplicate = try #require(
                Self.rows(Self.legRecords, in: old).filter { Self.text($0["globalID"]) == "G0" }.last)
            _ = try old.stores[0].saveErased(
                DataStoreSaveChangesRequest(
                    editingState: EditingState(author: "test"), inserted: [], updated: [], deleted: [duplicate]))
        }
        let container = try ModelContainer(for: Replica.schema, url: url)
        let keys = try Self.rows(Self.legRecords, in: container).compactMap { Self.text($0["globalID"]) }
        #expect(keys.sorted() == ["G0", "G1", "G2"])
        #expect(throws: DataStoreError.self) {
            try Self.insert(Self.legRecords, ["globalID": .string("G1")], into: container)
        }
    }

    /// The bytes of a store's file, or of every file of its directory, by name.
    static func contents(of url: String) throws -> [String: Data] {
        let path = String(url.drop { $0 != ":" }.dropFirst())
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [:] }
        guard isDirectory.boolValue else { return [path: try Data(contentsOf: URL(fileURLWithPath: path))] }
        var contents: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            contents[name] = try Data(contentsOf: URL(fileURLWithPath: path + "/" + name))
        }
        return contents
    }

    /// Two servers on one shared SQLite store take every push of a replica at the same moment (see
    /// ``SyncScenarios/twoHostsTakingTheSamePushesStoreEachModelOnce(first:second:sourceLocation:)``).
    @Test func twoHostsTakingTheSamePushesStoreEachModelOnce() async throws {
        let shared = "sqlite:" + directory.path("shared.sqlite")
        try await SyncScenarios.twoHostsTakingTheSamePushesStoreEachModelOnce(
            first: makeHost(url: shared), second: makeHost(url: shared))
    }
}
