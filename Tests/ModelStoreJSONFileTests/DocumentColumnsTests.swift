import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreTestSupport
import Testing

@testable import ModelStoreJSONFile

/// The document is written straight from the table's typed columns and read straight back into
/// them; these tests hold both paths to what the snapshots say, value by value.
struct DocumentColumnsTests {
    static let schema = Schema([Gadget.self, Part.self])
    static let store = "json-columns"

    /// Gadget snapshots whose typed columns hold `nil`s, extremes, text that needs escapes, and
    /// (in one row per kind) a value of another kind than the column's, which makes the column
    /// fall back to stored values.
    static func gadgets(count: Int, seed: UInt64, wrongKinds: Bool) -> [DefaultSnapshot] {
        let entity = schema.entity(named: "Gadget")!
        var random = SplitMix64(seed: seed)
        let texts = [
            "", "Rome", "quote \" and \\ back", "tab\tnew\nline", "naïve 🚀", String(repeating: "x", count: 40),
        ]
        let doubles: [Double] = [0, -0.0, 0.1, 1e300, -2.5, .infinity, -.infinity, .nan, 736_000_000.123456]
        return (0..<count).map { row in
            var values = entity.properties.map { property -> StoreValue in
                switch property {
                case .attribute(let attribute): attribute.defaultValue
                case .relationship(let relationship): relationship.isToOne ? .null : .references([])
                }
            }
            func set(_ name: String, _ value: StoreValue) { values[entity.slot(of: name)!] = value }
            set("name", .string("gadget \(row) " + random.pick(texts)))
            set("flag", .bool(random.chance(50)))
            set("int", .int(Int64(bitPattern: random.next())))
            set("int8", .int(Int64(Int8(truncatingIfNeeded: random.next()))))
            set("double", .double(random.pick(doubles)))
            set("date", .date(Date(timeIntervalSinceReferenceDate: Double(Int64(random.next() % 2_000_000_000)) / 8)))
            set("optionalString", random.chance(40) ? .null : .string(random.pick(texts)))
            set("optionalInt", random.chance(40) ? .null : .int(Int64(random.next() % 1000) - 500))
            if wrongKinds && row == count / 2 {
                set("int", .string("not an integer"))
                set("double", .int(3))
                set("optionalString", .double(1.5))
                set("flag", .int(1))
                set("date", .string("yesterday"))
            }
            let id = PersistentIdentifier.identifier(for: store, entityName: "Gadget", primaryKey: Int64(row + 1))
            return DefaultSnapshot(persistentIdentifier: id, entity: entity, values: values)
        }
    }

    func document(of table: SnapshotTable) -> [UInt8] {
        DocumentEncoder(
            schema: Self.schema, storeIdentifier: Self.store, nextPrimaryKey: table.nextPrimaryKey, preserved: [],
            externalFiles: [:]
        ).encode(table).bytes
    }

    func decode(_ bytes: [UInt8]) throws -> DecodedDocument {
        let decoder = DocumentDecoder(
            schema: Self.schema, limits: JSONFileStoreConfiguration.Limits().readLimits,
            fallbackStoreIdentifier: "json-fallback", loadExternalFile: { _ in Data() })
        return try bytes.withUnsafeBufferPointer { try decoder.decode($0) }
    }

    func expectSameModels(_ read: [DefaultSnapshot], _ written: [DefaultSnapshot]) {
        #expect(read.count == written.count)
        for (read, written) in zip(read, written) {
            #expect(read.persistentIdentifier == written.persistentIdentifier)
            for (slot, property) in written.entity.properties.enumerated()
            where !read.values[slot].isIdentical(to: written.values[slot]) {
                let message =
                    "\(written.persistentIdentifier) '\(property.name)': wrote \(written.values[slot]), "
                    + "read \(read.values[slot])"
                Issue.record(Comment(rawValue: message))
            }
        }
    }

    @Test(arguments: [(1 as UInt64, false), (2, true), (3, true)])
    func typedColumnsRoundTrip(seed: UInt64, wrongKinds: Bool) throws {
        let snapshots = Self.gadgets(count: 300, seed: seed, wrongKinds: wrongKinds)
        var table = SnapshotTable(schema: Self.schema)
        try table.load(snapshots)
        let columns = try #require(table.storedColumns(of: "Gadget"))
        let intSlot = Self.schema.entity(named: "Gadget")!.slot(of: "int")!
        // The column of a kind that a wrong value reached is stored values; otherwise it is typed.
        #expect((columns.integers(intSlot) == nil) == wrongKinds)
        let decoded = try decode(document(of: table))
        expectSameModels(decoded.table.snapshots(of: "Gadget"), snapshots)
        #expect(decoded.table.nextPrimaryKey == table.nextPrimaryKey)
    }

    /// The decoder reads the writer's own layout on a fast path (each key one comparison with its
    /// literal); the same records spaced otherwise, or with a key spelled with an escape, go through
    /// the general path, and every form reads back the same models.
    @Test func otherSpacingAndEscapedKeysReadTheSameAsTheWritersLayout() throws {
        let snapshots = Self.gadgets(count: 120, seed: 5, wrongKinds: false)
        var table = SnapshotTable(schema: Self.schema)
        try table.load(snapshots)
        let written = String(decoding: document(of: table), as: UTF8.self)
        #expect(written.contains("{\"$id\": 1, \"name\": "), "the layout the fast path expects")
        let variants = [
            written,
            written.replacingOccurrences(of: "\": ", with: "\":"),
            written.replacingOccurrences(of: ", \"", with: ",\n\t\""),
            written.replacingOccurrences(of: "{\"$id\": ", with: "{ \"$id\" : "),
            written.replacingOccurrences(of: "\"name\": ", with: "\"n\\u0061me\": "),
            written.replacingOccurrences(of: "\"int\": ", with: "\"\\u0069nt\": "),
        ]
        for (index, variant) in variants.enumerated() {
            #expect(index == 0 || variant != written, "variant \(index) changed the text")
            let decoded = try decode(Array(variant.utf8))
            expectSameModels(decoded.table.snapshots(of: "Gadget"), snapshots)
        }
    }

    @Test func storedColumnsDescribeNullsAndKinds() throws {
        let snapshots = Self.gadgets(count: 50, seed: 9, wrongKinds: false)
        var table = SnapshotTable(schema: Self.schema)
        try table.load(snapshots)
        let entity = Self.schema.entity(named: "Gadget")!
        let columns = try #require(table.storedColumns(of: "Gadget"))
        #expect(table.storedColumns(of: "Nothing") == nil)
        #expect(columns.rowCount == 50)
        let optionalInt = entity.slot(of: "optionalInt")!
        let integers = try #require(columns.integers(optionalInt))
        #expect(columns.mayHoldNull(optionalInt))
        #expect(!columns.mayHoldNull(entity.slot(of: "int")!))
        #expect(columns.strings(optionalInt) == nil)
        for (row, snapshot) in snapshots.enumerated() {
            #expect(columns.isLive(row))
            #expect(columns.identifier(at: row) == snapshot.persistentIdentifier)
            #expect(columns.primaryKey(at: row) == snapshot.persistentIdentifier.primaryKey)
            switch snapshot.values[optionalInt] {
            case .null: #expect(columns.isNull(optionalInt, at: row))
            case .int(let value):
                #expect(!columns.isNull(optionalInt, at: row))
                #expect(integers[row] == value)
            default: Issue.record("an unexpected value \(snapshot.values[optionalInt])")
            }
            #expect(columns.value(optionalInt, at: row).isIdentical(to: snapshot.values[optionalInt]))
        }
    }

    @Test func aRepeatedUniqueValueStopsTheReadWithTheTablesError() throws {
        let snapshots = Self.gadgets(count: 20, seed: 4, wrongKinds: false)
        let nameSlot = snapshots[0].entity.slot(of: "name")!
        var table = SnapshotTable(schema: Self.schema)
        try table.load(snapshots)
        var text = String(decoding: document(of: table), as: UTF8.self)
        // Give the eleventh record the first one's name, by hand, as an editor would.
        guard case .string(let first) = snapshots[0].values[nameSlot],
            case .string(let eleventh) = snapshots[10].values[nameSlot]
        else { throw WrongFixture() }
        let quote = { (text: String) -> String in
            let out = JSONOutput(capacity: 64)
            out.string(text)
            return String(decoding: out.bytes, as: UTF8.self)
        }
        text = text.replacingOccurrences(of: quote(eleventh), with: quote(first))
        let error = try #require(throws: DataStoreError.self) { try decode(Array(text.utf8)) }
        #expect(error.code == .corrupted)
        #expect(error.message.contains("share a unique value of 'name'"), "\(error)")
    }

    struct WrongFixture: Error {}
}
