import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreTestSupport

@testable import ModelStoreJSONFile

/// A composite value with nested kinds JSON cannot tell apart by itself (a date, a UUID).
struct Dimensions: Codable, Hashable, Sendable {
    var width: Double
    var height: Double
    var label: String
    var measuredAt: Date
    var serial: UUID
    var tags: [String]
}

enum Tier: String, Codable, Sendable {
    case basic, pro
}

enum Level: Int, Codable, Sendable {
    case one = 1
    case two
}

/// A model with an attribute of every supported type.
final class Gadget: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var flag: Bool = false
    @Attribute var int: Int = 0
    @Attribute var int8: Int8 = 0
    @Attribute var int16: Int16 = 0
    @Attribute var int32: Int32 = 0
    @Attribute var int64: Int64 = 0
    @Attribute var uint: UInt = 0
    @Attribute var uint8: UInt8 = 0
    @Attribute var uint32: UInt32 = 0
    @Attribute var uint64: UInt64 = 0
    @Attribute var double: Double = 0
    @Attribute var float: Float = 0
    @Attribute var decimal: Decimal = 0
    @Attribute var date: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var data: Data = Data()
    @Attribute var uuid: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Attribute var url: URL = URL(string: "https://example.com/")!
    @Attribute var optionalString: String? = nil
    @Attribute var optionalInt: Int? = nil
    @Attribute var strings: [String] = []
    @Attribute var doublesByName: [String: Double] = [:]
    @Attribute var namesByNumber: [Int: String] = [:]
    @Attribute var tier: Tier = .basic
    @Attribute var level: Level? = nil
    @Attribute var dimensions: Dimensions? = nil
    @Attribute(.externalStorage) var photo: Data? = nil
    @Relationship(deleteRule: .cascade, inverse: \Part.gadget) var parts: [Part] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(name: String) {
        self.init()
        self.name = name
    }
}

/// A part of a gadget: the other side of a to-many relationship.
final class Part: PersistentModel {
    @Attribute var label: String = ""
    @Relationship var gadget: Gadget?
    @Relationship var spare: Part?

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ label: String) {
        self.init()
        self.label = label
    }
}

/// A model with no relationships, outside the fixture schema's graph.
final class Memo: PersistentModel {
    @Attribute var text: String = ""

    let persistentBackingData = BackingData()
    init() {}
}

extension TemporaryDirectory {
    /// The store file inside it, or another file.
    func file() -> URL { file("store.json") }
}

enum Stores {
    static let schema = Schema(Gadget.self, Part.self)

    /// A store on `url` with the fixture schema (or another).
    static func open(
        _ url: URL, schema: Schema = Stores.schema, configure: (inout JSONFileStoreConfiguration) -> Void = { _ in }
    )
        throws -> JSONFileStore
    {
        var configuration = JSONFileStoreConfiguration(url: url, schema: schema)
        configure(&configuration)
        return try JSONFileStore(configuration, migrationPlan: nil)
    }

    /// A snapshot of a new model (temporary identifier) with some values set by name.
    static func new(
        _ entityName: String, _ values: [String: StoreValue], schema: Schema = Stores.schema
    ) throws -> DefaultSnapshot {
        try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: entityName), entity: schema.entity(named: entityName)!,
            namedValues: values)
    }

    /// Saves inserts, updates and deletes; returns the permanent identifiers of the inserts, in order.
    @discardableResult
    static func save(
        _ store: JSONFileStore, inserting inserted: [DefaultSnapshot] = [], updating updated: [DefaultSnapshot] = [],
        deleting deleted: [DefaultSnapshot] = []
    ) throws -> [PersistentIdentifier] {
        let result = try store.save(
            DataStoreSaveChangesRequest(
                editingState: EditingState(), inserted: inserted, updated: updated, deleted: deleted))
        return inserted.map { result.remappedIdentifiers[$0.persistentIdentifier]! }
    }

    /// Every snapshot of an entity, in identifier order.
    static func all(_ store: JSONFileStore, _ entityName: String) throws -> [DefaultSnapshot] {
        try store.table.withLock { try $0.fetch(StoreQuery(entityName: entityName)) }
    }
}

extension URL {
    /// The file's bytes as text.
    var text: String { (try? String(contentsOf: self, encoding: .utf8)) ?? "" }
}
