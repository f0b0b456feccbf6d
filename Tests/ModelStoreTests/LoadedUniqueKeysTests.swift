import Foundation
import ModelStore
import ModelStoreAdapterKit
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
