import CSQLite
import Foundation
import ModelStore
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// Opening a store while another connection holds the database's write lock: an open that has
/// nothing to write does not wait for the lock, and one that must migrate does.
struct SQLiteOpenLockTests {
    /// A store of `ItemSchema` with one row, at `url`, closed again.
    static func storeWithOneItem(at url: URL) throws {
        let store = try ItemSchema.store(url)
        let entity = try #require(store.schema.entity(named: "Item"))
        let snapshot = try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Item"), entity: entity, namedValues: ["code": .string("a")])
        #expect(try store.insert([snapshot]).count == 1)
    }

    /// `ItemSchema` at version 2, with one optional attribute more: opening a version-1 store with it migrates.
    static func schemaWithAnAddedAttribute() throws -> Schema {
        var description = ItemSchema.description(version: Schema.Version(2, 0, 0))
        description.entities[0].properties.append(.attribute("note", .optional(.string)))
        return try Schema(description)
    }

    /// Opens the store at `url` with a short busy timeout.
    static func open(_ url: URL, schema: Schema) throws -> SQLiteStore {
        var configuration = SQLiteStoreConfiguration(url: url, busyTimeout: .milliseconds(50))
        configuration.schema = schema
        return try SQLiteStore(configuration, migrationPlan: nil)
    }

    /// Runs `body` while a second connection to the file holds its write lock (`BEGIN IMMEDIATE`).
    static func whileLocked(_ url: URL, _ body: () throws -> Void) throws {
        var handle: OpaquePointer?
        try #require(sqlite3_open(url.path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        try #require(sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        defer { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
        try body()
    }

    @Test func aStoreThatNeedsNoMigrationOpensWhileAnotherWriterHoldsTheLock() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try Self.storeWithOneItem(at: url)
        try Self.whileLocked(url) {
            let store = try Self.open(url, schema: try ItemSchema.schema())
            #expect(try store.run(StoreQuery(entityName: "Item")).count == 1)
        }
    }

    @Test func aStoreThatMustMigrateWaitsForTheLockAndMigratesOnceItIsFree() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try Self.storeWithOneItem(at: url)
        let newSchema = try Self.schemaWithAnAddedAttribute()
        try Self.whileLocked(url) {
            let error = #expect(throws: DataStoreError.self) { try Self.open(url, schema: newSchema) }
            #expect(error?.code == .locked, "\(String(describing: error))")
        }
        #expect(try SQLiteStore.storedSchema(at: url).version == Schema.Version(1, 0, 0))
        let store = try Self.open(url, schema: newSchema)
        #expect(try store.run(StoreQuery(entityName: "Item")).count == 1)
        #expect(try SQLiteStore.storedSchema(at: url).version == Schema.Version(2, 0, 0))
    }
}
