import CSQLite
import Foundation
import ModelStore
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// Files that must not open, and a database locked past the timeout: each gives a typed error
/// naming the file, and leaves every file in the folder exactly as it was.
struct SQLiteBadInputTests {
    /// The bytes of every file in a folder.
    static func contents(of directory: TemporaryDirectory) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) {
            result[name] = try Data(contentsOf: directory.file(name))
        }
        return result
    }

    /// Opens the file with `schema` and returns the error, checking that the folder did not change.
    func openError(
        _ url: URL, in directory: TemporaryDirectory, schema: Schema? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> DataStoreError? {
        let before = try Self.contents(of: directory)
        defer {
            #expect(
                (try? Self.contents(of: directory)) == before, "a failed open changed the folder",
                sourceLocation: sourceLocation)
        }
        do {
            _ = try ItemSchema.store(url, schema: schema)
            Issue.record("the file opened", sourceLocation: sourceLocation)
            return nil
        } catch let error as DataStoreError {
            #expect(
                error.message.contains(url.path), "the error does not name the file: \(error)",
                sourceLocation: sourceLocation)
            return error
        }
    }

    /// A store file with one item, closed.
    static func validStore(_ url: URL) throws {
        let store = try ItemSchema.store(url)
        let entity = try #require(store.schema.entity(named: "Item"))
        _ = try store.insert([
            try DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: "Item"), entity: entity,
                namedValues: ["code": .string("a")])
        ])
    }

    @Test func notSQLite() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try Data("{\"this\": \"is JSON, not SQLite\"}\n".utf8).write(to: url)
        let error = try #require(try openError(url, in: directory))
        #expect(error.code == .corrupted, "\(error)")
        #expect(error.message.contains("file is not a database"), "\(error)")
    }

    @Test func anEmptiedFileIsRefusedAsDamage() throws {
        // The store creates its file whole (built beside it, then linked into place), so an empty
        // file at its path was emptied from outside: refused, not opened as a new, empty store.
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try Self.validStore(url)
        try Data().write(to: url)
        let error = try #require(try openError(url, in: directory))
        #expect(error.code == .corrupted, "\(error)")
        #expect(error.message.contains("empty file (0 bytes)"), "\(error)")
        let schemaError = expectError(.corrupted) { try SQLiteStore.storedSchema(at: url) }
        #expect(schemaError?.message.contains("empty file") == true, "\(String(describing: schemaError))")
        expectError(.corrupted) { try SQLiteStore.integrityProblems(at: url) }
    }

    @Test func aDatabaseWithNoTablesHoldsNoStoreYetAndOpensAsANewOne() throws {
        // A database another tool made, with no tables: nothing in it to lose, so the open creates the store.
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        var handle: OpaquePointer?
        #expect(sqlite3_open(url.path, &handle) == SQLITE_OK)
        #expect(sqlite3_exec(handle, "PRAGMA user_version = 7", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        #expect(try Data(contentsOf: url).count > 0)
        let error = expectError(.notFound) { try SQLiteStore.storedSchema(at: url) }
        #expect(error?.message.contains("holds no store yet") == true, "\(String(describing: error))")
        _ = try ItemSchema.store(url)
        #expect(try SQLiteStore.storedSchema(at: url).entities.map(\.name) == ["Item"])
    }

    @Test func aNewStoreLeavesNoFileButItsOwn() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try Self.validStore(url)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["store.sqlite"])
    }

    @Test func damagedFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try Self.validStore(url)
        // Keep SQLite's 100-byte header and overwrite the rest of the first pages with garbage.
        var bytes = try Data(contentsOf: url)
        for index in 100..<min(bytes.count, 8192) { bytes[index] = UInt8(truncatingIfNeeded: index &* 7) }
        try bytes.write(to: url)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) where name != "store.sqlite"
        {
            try FileManager.default.removeItem(at: directory.file(name))
        }
        let error = try #require(try openError(url, in: directory))
        #expect(error.code == .corrupted, "\(error)")
    }

    @Test func anotherProgramsDatabase() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        var handle: OpaquePointer?
        #expect(sqlite3_open(url.path, &handle) == SQLITE_OK)
        #expect(sqlite3_exec(handle, "CREATE TABLE songs (title TEXT)", nil, nil, nil) == SQLITE_OK)
        sqlite3_close(handle)
        let error = try #require(try openError(url, in: directory))
        #expect(error.code == .corrupted, "\(error)")
        #expect(error.message.contains("not a ModelStore store"), "\(error)")
    }

    @Test func newerSchemaVersion() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        _ = try ItemSchema.store(url, schema: try ItemSchema.schema(version: Schema.Version(2, 0, 0)))
        let error = try #require(try openError(url, in: directory, schema: try ItemSchema.schema()))
        #expect(error.code == .invalidSchema, "\(error)")
        #expect(error.message.contains("2.0.0"), "\(error)")
    }

    @Test func incompatibleTypeChangeLeavesTheFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        try Self.validStore(url)
        var description = ItemSchema.description(version: Schema.Version(2, 0, 0))
        let slot = try #require(description.entities[0].properties.firstIndex { $0.name == "n" })
        description.entities[0].properties[slot] = .attribute("n", .string)
        let error = try #require(try openError(url, in: directory, schema: try Schema(description)))
        #expect(error.code == .invalidSchema, "\(error)")
        #expect(try ItemSchema.store(url).run(StoreQuery(entityName: "Item")).count == 1)
    }

    @Test func lockedPastTheTimeoutChangesNothing() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        var configuration = SQLiteStoreConfiguration(url: url, busyTimeout: .milliseconds(50))
        configuration.schema = try ItemSchema.schema()
        let store = try SQLiteStore(configuration, migrationPlan: nil)
        let entity = try #require(store.schema.entity(named: "Item"))
        var handle: OpaquePointer?
        #expect(sqlite3_open(url.path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        #expect(sqlite3_exec(handle, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        let snapshot = try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Item"), entity: entity, namedValues: ["code": .string("x")])
        let error = #expect(throws: DataStoreError.self) { try store.insert([snapshot]) }
        #expect(error?.code == .locked, "\(String(describing: error))")
        #expect(error?.message.contains(url.path) == true, "\(String(describing: error))")
        #expect(sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) == SQLITE_OK)
        #expect(try store.run(StoreQuery(entityName: "Item")).isEmpty)
        // Once the other writer is done, the same save goes through.
        #expect(try store.insert([snapshot]).count == 1)
    }
}
