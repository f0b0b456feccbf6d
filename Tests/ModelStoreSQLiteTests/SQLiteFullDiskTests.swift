import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// A database that cannot grow (SQLite's `max_page_count`, standing in for a full disk): the
/// save fails with an I/O error naming the file, and the store keeps exactly what it had.
struct SQLiteFullDiskTests {
    @Test func aSaveThatDoesNotFitChangesNothing() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let store = try ItemSchema.store(url)
        let entity = try #require(store.schema.entity(named: "Item"))
        let first = try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Item"), entity: entity, namedValues: ["code": .string("a")])
        let ids = try store.insert([first])
        try store.database.withLock { connection in
            let pages = try connection.prepare("PRAGMA page_count")
            try pages.step()
            let count = pages.int64(0)
            try connection.execute("PRAGMA max_page_count = \(count)")
        }
        let big = try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Item"), entity: entity,
            namedValues: ["code": .string("b"), "name": .string(String(repeating: "x", count: 1 << 20))])
        let error = #expect(throws: DataStoreError.self) { try store.insert([big]) }
        #expect(error?.code == .io, "\(String(describing: error))")
        #expect(error?.message.contains(url.path) == true, "\(String(describing: error))")
        #expect(error?.message.contains("full") == true, "\(String(describing: error))")
        #expect(try store.identifiers(StoreQuery(entityName: "Item")) == ids)
        // The next save that fits goes through, with the key the failed save did not keep.
        let small = try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Item"), entity: entity, namedValues: ["code": .string("c")])
        #expect(try store.insert([small]).count == 1)
    }
}
