import Foundation
@_spi(AdapterKit) import ModelStore
import ModelStoreSQLite

/// A temporary directory that removes itself.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ModelStoreSQLiteTests-" + UUID().uuidString)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }
}

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

    static func schema(version: Schema.Version = Schema.Version(1, 0, 0)) throws -> Schema {
        try Schema(description(version: version))
    }

    static func store(_ url: URL?, schema: Schema? = nil) throws -> SQLiteStore {
        var configuration = SQLiteStoreConfiguration(url: url)
        configuration.schema = try schema ?? Self.schema()
        return try SQLiteStore(configuration, migrationPlan: nil)
    }
}

/// A seeded generator (SplitMix64), so a failing run can be replayed from its seed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
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
        try insert(DataStoreBatchInsertRequest(snapshots: snapshots, editingState: EditingState()))
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
