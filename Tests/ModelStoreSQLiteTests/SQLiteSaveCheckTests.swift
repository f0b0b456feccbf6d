import CSQLite
import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// A save's check of the stored row against the values the context expects, made column by column
/// where the row is stored (no snapshot read) for entities of plain attributes, and the history
/// row it writes.
struct SQLiteSaveCheckTests {
    let folder: TemporaryDirectory
    let url: URL

    init() throws {
        folder = try TemporaryDirectory()
        url = folder.url.appendingPathComponent("plain.sqlite")
    }

    /// An entity of attributes only, one of each kind compared in place.
    static let description = Schema.Description(
        version: Schema.Version(1, 0, 0),
        entities: [
            Schema.EntityDescription(
                name: "Plain",
                properties: [
                    .attribute("code", .string),
                    .attribute("nick", .optional(.string)),
                    .attribute("n", .integer(bits: 64, signed: true)),
                    .attribute("d", .double),
                    .attribute("od", .optional(.double)),
                    .attribute("flag", .bool),
                    .attribute("when", .date),
                    .attribute("token", .uuid),
                    .attribute("big", .integer(bits: 64, signed: false)),
                ],
                uniquenessConstraints: [["code"]], indices: [])
        ])

    private func store() throws -> SQLiteStore {
        var configuration = SQLiteStoreConfiguration(url: url)
        configuration.schema = try Schema(Self.description)
        return try SQLiteStore(configuration, migrationPlan: nil)
    }

    private static let token = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!

    /// A store holding one row, and that row as the store reads it.
    private func seeded(
        code: String = "caf\u{E9}", d: Double = 0.0, od: Double? = 2.5
    ) throws -> (SQLiteStore, DefaultSnapshot) {
        let store = try store()
        let entity = try #require(store.schema.entity(named: "Plain"))
        let values: [String: StoreValue] = [
            "code": .string(code), "nick": .null, "n": .int(-7), "d": .double(d),
            "od": od.map(StoreValue.double) ?? .null,
            "flag": .bool(true), "when": .date(Date(timeIntervalSinceReferenceDate: 12.5)), "token": .uuid(Self.token),
            "big": .uint(.max),
        ]
        let id = try #require(
            try store.insert([
                try DefaultSnapshot(
                    persistentIdentifier: .temporary(entityName: "Plain"), entity: entity, namedValues: values)
            ]).first)
        let stored = try #require(try store.run(StoreQuery(entityName: "Plain", filter: .identifiers([id]))).first)
        return (store, stored)
    }

    /// Runs `body` with the store's writer connection's reader, inside a write transaction.
    private func withReader<T>(_ store: SQLiteStore, _ body: (RowReader, EntityLayout) throws -> T) throws -> T {
        try store.withWriter { writer in try body(writer.reader, try writer.layout("Plain")) }
    }

    @Test func onlyEntitiesOfPlainAttributesAreComparedInPlace() throws {
        let plain = EntityLayout(try #require(try Schema(Self.description).entity(named: "Plain")))
        #expect(plain.comparesRowsInPlace)
        // Relationships, a decimal and an external data column: read whole.
        let item = EntityLayout(try #require(try ItemSchema.schema().entity(named: "Item")))
        #expect(!item.comparesRowsInPlace)
    }

    @Test func aRowHoldsExactlyTheValuesItWasReadAs() throws {
        let (store, stored) = try seeded()
        let key = try #require(stored.persistentIdentifier.primaryKey.intValue)
        try withReader(store) { reader, layout in
            #expect(try reader.holds(key, layout: layout, exactly: stored.values) == true)
            #expect(try reader.holds(key + 1, layout: layout, exactly: stored.values) == nil)
            // Each change of one value, however small, is not shown identical.
            let changes: [(String, StoreValue)] = [
                ("code", .string("cafe\u{301}")),  // canonically equivalent, spelled otherwise
                ("d", .double(-0.0)),  // equal to 0.0, another bit pattern
                ("nick", .string("")),  // empty text is not nil
                ("n", .int(-8)), ("od", .null), ("flag", .bool(false)),
                ("when", .date(Date(timeIntervalSinceReferenceDate: 12.25))), ("token", .uuid(UUID())),
                ("big", .uint(.max - 1)),
                ("n", .double(-7)),  // another case than the column's kind
            ]
            for (name, value) in changes {
                var values = stored.values
                values[try #require(stored.entity.slot(of: name))] = value
                let held = try reader.holds(key, layout: layout, exactly: values)
                #expect(held == false, "\(name) = \(value)")
            }
            #expect(try reader.holds(key, layout: layout, exactly: Array(stored.values.dropLast())) == false)
        }
    }

    @Test func nanIsNeverShownIdenticalInPlaceSoTheRowIsReadWhole() throws {
        let (store, stored) = try seeded(d: .nan, od: .nan)
        let key = try #require(stored.persistentIdentifier.primaryKey.intValue)
        let held = try withReader(store) { reader, layout in
            try reader.holds(key, layout: layout, exactly: stored.values)
        }
        #expect(held == false)
        // The save still goes through: the row read whole matches its expected values.
        var update = stored
        update.values[try #require(stored.entity.slot(of: "n"))] = .int(1)
        var request = DataStoreSaveChangesRequest(
            editingState: EditingState(), inserted: [], updated: [update], deleted: [])
        request.expectedValues = [stored.persistentIdentifier: stored.values]
        _ = try store.save(request)
    }

    @Test func aSaveWhoseExpectedValuesDifferFromTheRowIsAConflict() throws {
        let (store, stored) = try seeded()
        let codeSlot = try #require(stored.entity.slot(of: "code"))
        let nSlot = try #require(stored.entity.slot(of: "n"))
        var update = stored
        update.values[nSlot] = .int(99)
        // The context read the code in another (equivalent) spelling than the one stored.
        var stale = stored.values
        stale[codeSlot] = .string("cafe\u{301}")
        var request = DataStoreSaveChangesRequest(
            editingState: EditingState(), inserted: [], updated: [update], deleted: [])
        request.expectedValues = [stored.persistentIdentifier: stale]
        let error = #expect(throws: DataStoreError.self) { _ = try store.save(request) }
        #expect(error?.code == .conflict)
        #expect(error?.propertyNames == ["code"])
        #expect(try store.run(StoreQuery(entityName: "Plain")).first?.values[nSlot] == .int(-7))

        // With the stored values expected, the save goes through, and history names what changed.
        request.expectedValues = [stored.persistentIdentifier: stored.values]
        _ = try store.save(request)
        let after = try #require(try store.run(StoreQuery(entityName: "Plain")).first)
        #expect(after.values[nSlot] == .int(99))
        #expect(after.values[codeSlot].isIdentical(to: .string("caf\u{E9}")))
        let key = try #require(stored.persistentIdentifier.primaryKey.intValue)
        #expect(try lastHistoryBody() == "u\tPlain\t\(key)\tn\t")
    }

    @Test func aStaleRowIsAConflictWhenTheStoreChangedAfterTheContextRead() throws {
        let (store, stored) = try seeded()
        let nickSlot = try #require(stored.entity.slot(of: "nick"))
        // Another writer sets the nickname after the context read the row.
        var other = stored
        other.values[nickSlot] = .string("someone else's")
        _ = try store.save(
            DataStoreSaveChangesRequest(editingState: EditingState(), inserted: [], updated: [other], deleted: []))
        var mine = stored
        mine.values[try #require(stored.entity.slot(of: "flag"))] = .bool(false)
        var request = DataStoreSaveChangesRequest(
            editingState: EditingState(), inserted: [], updated: [mine], deleted: [])
        request.expectedValues = [stored.persistentIdentifier: stored.values]
        let error = #expect(throws: DataStoreError.self) { _ = try store.save(request) }
        #expect(error?.code == .conflict)
        #expect(error?.propertyNames == ["nick"])
        let kept = try #require(try store.run(StoreQuery(entityName: "Plain")).first)
        #expect(kept.values[nickSlot] == .string("someone else's"))
    }

    @Test func historyBodiesAreOneLinePerChangeInTheFileFormat() throws {
        let id = { (key: Int64) in PersistentIdentifier.identifier(for: "s", entityName: "Plain", primaryKey: key) }
        let changes = [
            StoreHistoryRecord.Change(.insert, id(1)),
            StoreHistoryRecord.Change(.update, id(-42), updatedProperties: ["code", "n"]),
            StoreHistoryRecord.Change(.delete, id(9_223_372_036_854_775_807), tombstone: ["code": .string("x")]),
            StoreHistoryRecord.Change(.delete, id(0)),
        ]
        let body = try HistoryTable.body(of: changes)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let tombstone = String(decoding: try encoder.encode(["code": StoreValue.string("x")]), as: UTF8.self)
        #expect(
            body == "i\tPlain\t1\t\t\nu\tPlain\t-42\tcode,n\t\nd\tPlain\t9223372036854775807\t\t\(tombstone)"
                + "\nd\tPlain\t0\t\t")
        let read = try HistoryTable.changes(in: body, count: 4, storeIdentifier: "s", path: "test")
        #expect(read.map(\.id) == changes.map(\.id))
        #expect(read.map(\.updatedProperties) == changes.map(\.updatedProperties))
        #expect(read[2].tombstone["code"] == .string("x"))
        #expect(try HistoryTable.body(of: []) == "")
    }

    @Test func statementsCachedByTheirSQLObjectAreFoundByIdentity() throws {
        let store = try store()
        try store.withWriter { writer in
            let connection = writer.connection
            let first = CachedSQL("SELECT 1")
            let same = try connection.statement(first)
            #expect(try connection.statement(first) === same)
            // Another object with the same text is another entry, never another text's statement.
            let second = CachedSQL("SELECT 2")
            let other = try connection.statement(second)
            #expect(other !== same)
            try other.step()
            #expect(other.int64(0) == 2)
            try same.step()
            #expect(same.int64(0) == 1)
        }
    }

    /// The body of the newest history row, read with SQLite's own API.
    private func lastHistoryBody() throws -> String? {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(url.path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let handle else {
            return nil
        }
        defer { sqlite3_close_v2(handle) }
        var statement: OpaquePointer?
        guard
            sqlite3_prepare_v2(
                handle, "SELECT body FROM modelstore_history ORDER BY number DESC LIMIT 1", -1, &statement, nil)
                == SQLITE_OK
        else { return nil }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { return nil }
        return String(cString: text)
    }
}
