import Foundation
import ModelStore
import ModelStoreAdapterKit
import Testing

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
