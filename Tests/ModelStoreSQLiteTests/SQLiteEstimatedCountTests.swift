import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// A store browser's counts: exact up to a bound, estimated past it without reading the table.
struct SQLiteEstimatedCountTests {
    @Test func countsAreExactUpToTheBoundAndEstimatedPastIt() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("items.sqlite")
        let schema = try ItemSchema.schema()
        let entity = try #require(schema.entity(named: "Item"))
        var store: SQLiteStore? = try ItemSchema.store(url, schema: schema)
        let ids = try store!.insert((0..<30).map { ItemSchema.item(code: "c\($0)", in: entity) })
        // Deleting models in the middle leaves the keys' range as it was.
        _ = try store!.save(
            DataStoreSaveChangesRequest(
                editingState: EditingState(), inserted: [], updated: [],
                deleted: ids[10..<15].map {
                    let item = ItemSchema.item(code: "", in: entity)
                    return DefaultSnapshot(persistentIdentifier: $0, entity: entity, values: item.values)
                }))
        store = nil

        let exact = try SQLiteStore.estimatedCounts(at: url, countingUpTo: 100)
        #expect(exact.map(\.entity) == ["Item"])
        #expect(exact.map(\.count) == [25] && exact.map(\.isEstimate) == [false])
        // Past the bound, without statistics: the range of the keys, never below what was counted.
        let ranged = try SQLiteStore.estimatedCounts(at: url, countingUpTo: 10)
        #expect(ranged.map(\.count) == [30] && ranged.map(\.isEstimate) == [true])
        // Compacting runs ANALYZE: then the estimate is the rows it found.
        _ = try ItemSchema.store(url, schema: schema).compact()
        let analyzed = try SQLiteStore.estimatedCounts(at: url, countingUpTo: 10)
        #expect(analyzed.map(\.count) == [25] && analyzed.map(\.isEstimate) == [true])
    }
}
