import CSQLite
import Foundation
import ModelStore
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// Every row carries a checksum of its values (format 3): a flipped bit in a value is a typed
/// `corrupted` error naming the file, the table and the row, never a wrong value; `verify` lists the
/// damaged rows without writing a file; a file of format 2 gets its checksums on its first open.
struct SQLiteRowChecksumTests {
    static let canary = "checksum-canary-0123456789"

    /// A closed store holding the canary item; returns its key.
    static func storeWithCanary(_ url: URL) throws -> Int64 {
        let store = try ItemSchema.store(url)
        let entity = try #require(store.schema.entity(named: "Item"))
        let saved = try store.insert([
            try DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: "Item"), entity: entity,
                namedValues: ["code": .string("a"), "name": .string(canary)])
        ])
        return try #require(saved.first?.primaryKey.intValue)
    }

    /// Flips the lowest bit of the first byte of every copy of the canary in the file (the row's and
    /// the name index's).
    static func flipCanary(in url: URL) throws {
        var bytes = [UInt8](try Data(contentsOf: url))
        let needle = [UInt8](canary.utf8)
        var flipped = 0
        var index = 0
        while index + needle.count <= bytes.count {
            if bytes[index] == needle[0] && Array(bytes[index..<index + needle.count]) == needle {
                bytes[index] ^= 1
                flipped += 1
            }
            index += 1
        }
        #expect(flipped > 0, "the canary is not in the file")
        try Data(bytes).write(to: url)
    }

    @Test func aFlippedBitInAValueIsATypedErrorNamingTheRow() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let key = try Self.storeWithCanary(url)
        try Self.flipCanary(in: url)
        let store = try ItemSchema.store(url)
        let error = expectError(.corrupted) { try store.run(StoreQuery(entityName: "Item")) }
        let damage = try #require(error?.underlyingError as? SQLiteDamage, "\(String(describing: error))")
        #expect(damage == SQLiteDamage(file: url.path, table: "Item", row: key), "\(damage)")
        #expect(error?.message.contains(url.path) == true && error?.message.contains("row \(key)") == true)
        #expect(error?.message.contains(Self.canary) == false, "the error shows the row's values")
    }

    @Test func verifyListsTheDamagedRowAndWritesNoFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let key = try Self.storeWithCanary(url)
        #expect(try SQLiteStore.integrityProblems(at: url).isEmpty)
        try Self.flipCanary(in: url)
        let before = try SQLiteBadInputTests.contents(of: directory)
        let problems = try SQLiteStore.integrityProblems(at: url)
        #expect(problems.contains { $0.contains("row \(key) of 'Item'") && $0.contains("checksum") }, "\(problems)")
        #expect(try SQLiteBadInputTests.contents(of: directory) == before, "verify wrote")
    }

    @Test func verifyOfAnOpenStoreAndOfACopiedLogWritesNoFile() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let copy = try TemporaryDirectory()
        try withExtendedLifetime(try ItemSchema.store(url)) { store in
            let entity = try #require(store.schema.entity(named: "Item"))
            _ = try store.insert([
                try DefaultSnapshot(
                    persistentIdentifier: .temporary(entityName: "Item"), entity: entity,
                    namedValues: ["code": .string("b")])
            ])
            // Open: the log and its index are there, and stay as they are.
            let names = Set(try FileManager.default.contentsOfDirectory(atPath: directory.url.path))
            #expect(names.contains("store.sqlite-wal") && names.contains("store.sqlite-shm"))
            #expect(try SQLiteStore.integrityProblems(at: url).isEmpty)
            #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.url.path)) == names)
            for name in ["store.sqlite", "store.sqlite-wal"] {
                try FileManager.default.copyItem(at: directory.file(name), to: copy.file(name))
            }
        }
        // A copied store with its log and no index: read as it is, and nothing is left beside it.
        let before = try SQLiteBadInputTests.contents(of: copy)
        #expect(try SQLiteStore.integrityProblems(at: copy.file("store.sqlite")).isEmpty)
        #expect(try SQLiteStore.storedSchema(at: copy.file("store.sqlite")).entities.map(\.name) == ["Item"])
        #expect(try SQLiteBadInputTests.contents(of: copy) == before)
    }

    @Test func aFileOfFormatTwoGetsItsChecksumsOnItsFirstOpen() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let key = try Self.storeWithCanary(url)
        try Self.makeFormatTwo(url)
        do {
            let store = try ItemSchema.store(url)
            #expect(
                try store.run(StoreQuery(entityName: "Item")).map { $0.persistentIdentifier.primaryKey.intValue } == [
                    key
                ])
        }
        #expect(try Self.format(of: url) == 4)
        try Self.flipCanary(in: url)
        let store = try ItemSchema.store(url)
        expectError(.corrupted) { try store.run(StoreQuery(entityName: "Item")) }
    }

    // MARK: Files of an older format

    /// Rebuilds every table without its checksum column and records format 2: the file as a build
    /// before row checksums wrote it.
    static func makeFormatTwo(_ url: URL) throws {
        var handle: OpaquePointer?
        try #require(sqlite3_open(url.path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        let db = try #require(handle)
        RowChecksum.register(on: db)
        SwiftCollation.register(on: db)
        for row in try rows(db, "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND sql LIKE '%\"_crc\"%'") {
            let (name, sql) = (row[0], row[1])
            let indexes = try rows(
                db, "SELECT sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND tbl_name = '\(name)'"
            ).map { $0[0] }
            let quoted = "\"" + name + "\""
            let old = "\"" + name + ".old\""
            try exec(db, "ALTER TABLE \(quoted) RENAME TO \(old)")
            try exec(db, try withoutChecksum(sql))
            let columns = try rows(db, "SELECT name FROM pragma_table_info('\(name).old')").map { "\"\($0[0])\"" }
                .joined(separator: ", ")
            try exec(db, "INSERT INTO \(quoted) (\(columns)) SELECT \(columns) FROM \(old)")
            try exec(db, "DROP TABLE \(old)")
            for index in indexes { try exec(db, index) }
        }
        try exec(db, "UPDATE modelstore_meta SET value = 2 WHERE key = 'format'")
    }

    /// A `CREATE TABLE` statement without its `"_crc" … STORED` column.
    static func withoutChecksum(_ sql: String) throws -> String {
        let start = try #require(sql.range(of: ", \"_crc\" INTEGER GENERATED ALWAYS AS ("))
        var depth = 1
        var index = start.upperBound
        while depth > 0 {
            if sql[index] == "(" { depth += 1 } else if sql[index] == ")" { depth -= 1 }
            index = sql.index(after: index)
        }
        let end = try #require(sql.range(of: " STORED", range: index..<sql.endIndex))
        return String(sql[..<start.lowerBound] + sql[end.upperBound...])
    }

    static func format(of url: URL) throws -> Int64 {
        var handle: OpaquePointer?
        try #require(sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        let db = try #require(handle)
        let value = try rows(db, "SELECT value FROM modelstore_meta WHERE key = 'format'").first?.first
        return value.flatMap { Int64($0) } ?? -1
    }

    static func exec(_ db: OpaquePointer, _ sql: String) throws {
        let code = sqlite3_exec(db, sql, nil, nil, nil)
        try #require(code == SQLITE_OK, "\(sql): \(String(cString: sqlite3_errmsg(db)))")
    }

    /// The rows of a query, every column as text.
    static func rows(_ db: OpaquePointer, _ sql: String) throws -> [[String]] {
        var statement: OpaquePointer?
        try #require(sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, "\(sql)")
        defer { sqlite3_finalize(statement) }
        var result: [[String]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            result.append(
                (0..<sqlite3_column_count(statement)).map { column in
                    sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
                })
        }
        return result
    }
}
