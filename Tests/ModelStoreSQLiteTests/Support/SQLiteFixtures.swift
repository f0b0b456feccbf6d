import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreSQLite
import ModelStoreTestSupport

/// A schema without model types, so tests can drive a store with snapshots of every value kind.
enum ItemSchema {
    static func description(version: Schema.Version = Schema.Version(1, 0, 0)) -> Schema.Description {
        Schema.Description(
            version: version,
            entities: [
                Schema.EntityDescription(
                    name: "Item",
                    properties: [
                        .attribute("code", .string),
                        .attribute("name", .string),
                        .attribute("nick", .optional(.string)),
                        .attribute("n", .integer(bits: 64, signed: true)),
                        .attribute("m", .optional(.integer(bits: 64, signed: true))),
                        .attribute("d", .double),
                        .attribute("od", .optional(.double)),
                        .attribute("flag", .bool),
                        .attribute("when", .date),
                        .attribute("token", .uuid),
                        .attribute("price", .decimal),
                        .attribute("big", .integer(bits: 64, signed: false)),
                        .attribute("tags", .array(.string)),
                        .attribute("blob", .data, options: ["externalStorage"]),
                        .relationship("parent", to: "Item", isToOne: true),
                        .relationship("children", to: "Item", isToOne: false),
                    ],
                    uniquenessConstraints: [["code"]], indices: [["n"], ["name"]])
            ])
    }

    /// A new item with this code and these tags, every other property at a plain value.
    static func item(code: String, tags: [String] = [], in entity: Schema.Entity) -> DefaultSnapshot {
        let values = entity.properties.map { property -> StoreValue in
            switch property.name {
            case "code": .string(code)
            case "tags": .array(tags.map { .string($0) })
            case "name": .string("")
            case "n": .int(0)
            case "d": .double(0)
            case "flag": .bool(false)
            case "when": .date(Date(timeIntervalSinceReferenceDate: 0))
            case "token": .uuid(UUID())
            case "price": .decimal(0)
            case "big": .uint(0)
            case "blob": .data(Data())
            case "children": .references([])
            default: .null
            }
        }
        return DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Item"), entity: entity, values: values)
    }

    static func schema(version: Schema.Version = Schema.Version(1, 0, 0)) throws -> Schema {
        try Schema(description(version: version))
    }

    static func store(_ url: URL?, schema: Schema? = nil) throws -> SQLiteStore {
        var configuration = SQLiteStoreConfiguration(url: url)
        configuration.schema = try schema ?? Self.schema()
        return try SQLiteStore(configuration, migrationPlan: nil)
    }
}

extension SQLiteStore {
    /// Runs a neutral query, as a context would push it.
    func run(_ query: StoreQuery) throws -> [DefaultSnapshot] {
        try fetch(
            DataStoreFetchRequest<SchemaOnlyModel>(
                descriptor: FetchDescriptor(), editingState: EditingState(), query: query)
        ).fetchedSnapshots
    }

    func count(_ query: StoreQuery) throws -> Int {
        try fetchCount(
            DataStoreFetchRequest<SchemaOnlyModel>(
                descriptor: FetchDescriptor(), editingState: EditingState(), query: query))
    }

    func identifiers(_ query: StoreQuery) throws -> [PersistentIdentifier] {
        try fetchIdentifiers(
            DataStoreFetchRequest<SchemaOnlyModel>(
                descriptor: FetchDescriptor(), editingState: EditingState(), query: query))
    }

    func insert(_ snapshots: [DefaultSnapshot]) throws -> [PersistentIdentifier] {
        Array(try insert(DataStoreBatchInsertRequest(snapshots: snapshots, editingState: EditingState())))
    }
}

/// Values equal as stored, `NaN` equal to `NaN` and `-0.0` distinct from `0.0`.
func sameStoredValue(_ a: StoreValue, _ b: StoreValue) -> Bool {
    switch (a, b) {
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
    case (.string(let x), .string(let y)): return Array(x.unicodeScalars) == Array(y.unicodeScalars)
    case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(sameStoredValue)
    default: return a == b
    }
}
