import Foundation
@_spi(AdapterKit) import ModelStore
import Testing

/// A model with a one-column uniqueness constraint on each kind of column the table keeps typed, and
/// one kept as stored values.
final class UniqueKinds: PersistentModel {
    @Attribute(.unique) var int: Int = 0
    @Attribute(.unique) var double: Double = 0
    @Attribute(.unique) var date: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute(.unique) var text: String = ""
    @Attribute(.unique) var flag: Bool? = nil
    @Attribute(.unique) var note: String? = nil
    @Attribute(.unique) var amount: Decimal = 0

    let persistentBackingData = BackingData()
    init() {}
}

/// A load claims each one-column unique key by reading its typed column in place
/// (`Column.appendClaims`), while a save claims from its snapshots' values. The two must hash a
/// value alike for every kind, or a save would take a value a loaded row owns.
struct LoadedUniqueKeysTests {
    static let schema = Schema([UniqueKinds.self])
    static var entity: Schema.Entity { schema.entity(named: "UniqueKinds")! }
    static let rowCount = 300

    /// Row `i`'s values: every column distinct between rows, `flag` set on two rows only, and `note`
    /// `nil` on every third row (a `nil` claims nothing).
    static func values(_ i: Int) -> [String: StoreValue] {
        [
            "int": .int(Int64(i * 7 - 500)), "double": .double(Double(i) + 0.25),
            "date": .date(Date(timeIntervalSinceReferenceDate: Double(i) * 60 - 1_000)),
            "text": .string("row \(i) of the loaded table"), "flag": i < 2 ? .bool(i == 0) : .null,
            "note": i % 3 == 0 ? .null : .string("n\(i)"), "amount": .decimal(Decimal(i) / 4),
        ]
    }

    /// A new row whose values no loaded row has, `nil` where a column may hold it.
    static func freshValues() -> [String: StoreValue] {
        [
            "int": .int(1_000_000), "double": .double(-9.5),
            "date": .date(Date(timeIntervalSinceReferenceDate: 9e8)), "text": .string("fresh"),
            "flag": .null, "note": .null, "amount": .decimal(Decimal(-1)),
        ]
    }

    /// A table holding the rows, read back through a load in identifier order (so its claims come
    /// from the columns: rows out of order would be compacted, which claims again row by row).
    static func loadedTable() throws -> SnapshotTable {
        var saved = SnapshotTable(schema: schema)
        let inserted = try (0..<rowCount).map {
            try DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: "UniqueKinds"), entity: entity, namedValues: values($0))
        }
        _ = try saved.save(
            DataStoreSaveChangesRequest(editingState: EditingState(), inserted: inserted, updated: [], deleted: []),
            storeIdentifier: "t")
        var loaded = SnapshotTable(schema: schema)
        try loaded.load(saved.snapshots(of: "UniqueKinds"))
        return loaded
    }

    static func insert(_ values: [String: StoreValue], into table: inout SnapshotTable) throws {
        let snapshot = try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "UniqueKinds"), entity: entity, namedValues: values)
        _ = try table.save(
            DataStoreSaveChangesRequest(editingState: EditingState(), inserted: [snapshot], updated: [], deleted: []),
            storeIdentifier: "t")
    }

    @Test(arguments: ["int", "double", "date", "text", "flag", "note", "amount"])
    func aSaveCannotTakeAValueALoadedRowOwns(column: String) throws {
        var table = try Self.loadedTable()
        for owner in [0, 1, 2, 157, Self.rowCount - 1] {
            guard let owned = Self.values(owner)[column], owned != .null else { continue }
            var values = Self.freshValues()
            values[column] = owned
            #expect("\(column) of row \(owner)") {
                try Self.insert(values, into: &table)
            } throws: { error in
                (error as? DataStoreError)?.code == .uniqueConstraintViolation
            }
        }
    }

    @Test func valuesNoLoadedRowOwnsAndNilsAreAccepted() throws {
        var table = try Self.loadedTable()
        try Self.insert(Self.freshValues(), into: &table)
        // `nil` again, in both optional columns: a `nil` conflicts with nothing.
        var second = Self.freshValues()
        for column in ["int", "double", "date", "text", "amount"] {
            second[column] = Self.values(Self.rowCount + 5)[column]
        }
        try Self.insert(second, into: &table)
        #expect(table.count(of: "UniqueKinds") == Self.rowCount + 2)
    }
}

/// A batch insert moves each property's values into its typed column, one column at a time; a value
/// of another kind than the column's (which only a hand-made snapshot holds) or `nil` must come back
/// exactly as it went in.
struct BatchColumnsTests {
    @Test func valuesOfEveryKindComeBackAsTheyWentIn() throws {
        let entity = LoadedUniqueKeysTests.entity
        var rows: [[String: StoreValue]] = (0..<40).map { LoadedUniqueKeysTests.values($0) }
        rows[3]["int"] = .string("not an int")
        rows[5]["double"] = .int(3)
        rows[7]["date"] = .double(1.5)
        rows[9]["text"] = .null
        rows[11]["int"] = .null
        let snapshots = try rows.map {
            try DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: "UniqueKinds"), entity: entity, namedValues: $0)
        }
        var table = SnapshotTable(schema: LoadedUniqueKeysTests.schema)
        let ids = try table.insert(
            DataStoreBatchInsertRequest(snapshots: snapshots, editingState: EditingState()), storeIdentifier: "t")
        #expect(ids.count == rows.count)
        let stored = table.snapshots(of: "UniqueKinds")
        try #require(stored.count == rows.count)
        for (row, snapshot) in zip(snapshots, stored) {
            #expect(row.values.count == snapshot.values.count)
            for slot in row.values.indices {
                #expect(
                    row.values[slot].isIdentical(to: snapshot.values[slot]), "slot \(slot): \(snapshot.values[slot])")
            }
        }
    }

    /// One chunk of many snapshots (a save hands over every inserted model at once) goes into the
    /// columns a few thousand rows at a time; a value repeated in a later stretch takes every
    /// stretch back, and the table is as it was.
    @Test func aRepeatInALaterStretchTakesTheWholeChunkBack() throws {
        let entity = LoadedUniqueKeysTests.entity
        var table = try LoadedUniqueKeysTests.loadedTable()
        let before = table.snapshots(of: "UniqueKinds")
        let count = 10_000
        var rows = (0..<count).map { LoadedUniqueKeysTests.values(LoadedUniqueKeysTests.rowCount + $0) }
        rows[9_000]["text"] = rows[10]["text"]
        let snapshots = try rows.map {
            try DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: "UniqueKinds"), entity: entity, namedValues: $0)
        }
        #expect {
            try table.insert(
                DataStoreBatchInsertRequest(snapshots: snapshots, editingState: EditingState()), storeIdentifier: "t")
        } throws: { error in
            (error as? DataStoreError)?.code == .uniqueConstraintViolation
        }
        #expect(
            table.snapshots(of: "UniqueKinds").elementsEqual(before) { a, b in
                a.persistentIdentifier == b.persistentIdentifier
                    && a.values.elementsEqual(b.values) { $0.isIdentical(to: $1) }
            })
        // Without the repeat, every row goes in, after the loaded ones.
        rows[9_000]["text"] = .string("no longer a repeat")
        let fixed = try rows.map {
            try DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: "UniqueKinds"), entity: entity, namedValues: $0)
        }
        let ids = try table.insert(
            DataStoreBatchInsertRequest(snapshots: fixed, editingState: EditingState()), storeIdentifier: "t")
        #expect(ids.count == count)
        #expect(table.count(of: "UniqueKinds") == LoadedUniqueKeysTests.rowCount + count)
    }
}
