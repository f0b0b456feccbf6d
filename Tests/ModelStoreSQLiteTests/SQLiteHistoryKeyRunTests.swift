import CSQLite
import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// A note without unique or preserved attributes: a delete of every note keeps no tombstones.
final class RunNote: PersistentModel {
    @Attribute var text: String = ""

    let persistentBackingData = BackingData()
    init() {}
}

/// History bodies of format 4: consecutive inserts, or deletes without tombstones, of one entity are
/// one line whose key field is a run of keys (`first..last`); reading a body lists every change
/// again, and a run that does not fit its row is damage, never a long list.
struct SQLiteHistoryKeyRunTests {
    private static func id(_ key: Int64, _ entity: String = "Plain") -> PersistentIdentifier {
        .identifier(for: "s", entityName: entity, primaryKey: key)
    }

    @Test func consecutiveInsertsAndPlainDeletesOfOneEntityAreOneLineEach() throws {
        let changes = [
            StoreHistoryRecord.Change(.insert, Self.id(1)),
            StoreHistoryRecord.Change(.insert, Self.id(2)),
            StoreHistoryRecord.Change(.insert, Self.id(3)),
            StoreHistoryRecord.Change(.insert, Self.id(4, "Other")),
            StoreHistoryRecord.Change(.insert, Self.id(6, "Other")),
            StoreHistoryRecord.Change(.update, Self.id(7), updatedProperties: ["n"]),
            StoreHistoryRecord.Change(.update, Self.id(8), updatedProperties: ["n"]),
            StoreHistoryRecord.Change(.delete, Self.id(-2)),
            StoreHistoryRecord.Change(.delete, Self.id(-1)),
            StoreHistoryRecord.Change(.delete, Self.id(0), tombstone: ["code": .string("x")]),
            StoreHistoryRecord.Change(.delete, Self.id(9_223_372_036_854_775_806)),
            StoreHistoryRecord.Change(.delete, Self.id(9_223_372_036_854_775_807)),
        ]
        let body = try HistoryTable.body(of: changes)
        let lines = body.split(separator: "\n").map(String.init)
        #expect(lines.count == 8, "\(body)")
        #expect(lines[0] == "i\tPlain\t1..3\t\t")
        #expect(lines[1] == "i\tOther\t4\t\t" && lines[2] == "i\tOther\t6\t\t")
        #expect(lines[3] == "u\tPlain\t7\tn\t" && lines[4] == "u\tPlain\t8\tn\t")
        #expect(lines[5] == "d\tPlain\t-2..-1\t\t")
        #expect(lines[6].hasPrefix("d\tPlain\t0\t\t{"))
        #expect(lines[7] == "d\tPlain\t9223372036854775806..9223372036854775807\t\t")

        let read = try HistoryTable.changes(
            in: body, count: Int64(changes.count), storeIdentifier: "s", path: "test")
        #expect(read.map(\.id) == changes.map(\.id))
        #expect(read.map(\.kind) == changes.map(\.kind))
        #expect(read.map(\.updatedProperties) == changes.map(\.updatedProperties))
        #expect(read[9].tombstone["code"] == .string("x"))
    }

    @Test func aBatchsIdentifiersAreWrittenFromTheirRunsAsTheirChangesWouldBe() throws {
        var runs = PersistentIdentifiers(storeIdentifier: "s", entityName: "Plain", keys: 5...9)
        runs.append(Self.id(11))
        runs.append(storeIdentifier: "s", entityName: "Plain", keys: -3...(-2))
        runs.append(Self.id(-1))
        let mixed = PersistentIdentifiers([Self.id(1), Self.id(2), Self.id(3, "Other")])
        #expect(runs.keyRuns?.keys.count == 3 && mixed.keyRuns == nil)
        for kind in [StoreHistoryRecord.Change.Kind.insert, .delete] {
            for ids in [runs, mixed, []] {
                let body = try HistoryTable.bodyBytes(of: kind, ids)
                #expect(body == (try HistoryTable.bodyBytes(of: ids.map { StoreHistoryRecord.Change(kind, $0) })))
            }
        }
        #expect(
            String(decoding: try HistoryTable.bodyBytes(of: .delete, runs), as: UTF8.self)
                == "d\tPlain\t5..9\t\t\nd\tPlain\t11\t\t\nd\tPlain\t-3..-1\t\t")
    }

    @Test(arguments: [
        ("i\tPlain\t1..4\t\t", Int64(3)),  // more changes than the row counts
        ("i\tPlain\t1\t\t\ni\tPlain\t2..4\t\t", Int64(3)),  // the run after a line no longer fits
        ("i\tPlain\t-9223372036854775808..9223372036854775807\t\t", Int64.max),  // a span past Int64
        ("i\tPlain\t1..1000\t\t", Int64.min),  // a damaged count
        ("i\tPlain\t5..2\t\t", Int64(10)),  // backwards
        ("i\tPlain\t2..2\t\t", Int64(10)),  // one key written as a run
        ("u\tPlain\t1..3\tn\t", Int64(10)),  // an update never forms a run
        ("d\tPlain\t1..3\t\t{}", Int64(10)),  // nor a delete with a tombstone
        ("i\tPlain\t1..x\t\t", Int64(10)),
        ("i\tPlain\t..3\t\t", Int64(10)),
        ("i\tPlain\t1..2..3\t\t", Int64(10)),
    ])
    func aRunThatCannotBeTheRowsIsDamage(body: String, count: Int64) throws {
        let error = #expect(throws: DataStoreError.self) {
            _ = try HistoryTable.changes(in: body, count: count, storeIdentifier: "s", path: "test.sqlite")
        }
        #expect(error?.code == .corrupted, "\(String(describing: error))")
        #expect(error?.message.contains("'test.sqlite'") == true)
    }

    // MARK: Through a store

    private static func container(_ url: URL, historyLimit: Int? = 100_000, allowsSave: Bool = true) throws
        -> ModelContainer
    {
        var configuration = SQLiteStoreConfiguration(url: url)
        configuration.historyLimit = historyLimit
        configuration.allowsSave = allowsSave
        return try ModelContainer(for: RunNote.self, configurations: configuration)
    }

    private static func bodies(_ url: URL) throws -> [String] {
        var handle: OpaquePointer?
        try #require(sqlite3_open(url.path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        try #require(
            sqlite3_prepare_v2(handle, "SELECT body FROM modelstore_history ORDER BY number", -1, &statement, nil)
                == SQLITE_OK)
        defer { sqlite3_finalize(statement) }
        var bodies: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            bodies.append(String(cString: sqlite3_column_text(statement, 0)))
        }
        return bodies
    }

    /// Records another format number in the file, as a build of that format would have left it.
    private static func setFormat(_ format: Int64, of url: URL) throws {
        var handle: OpaquePointer?
        try #require(sqlite3_open(url.path, &handle) == SQLITE_OK)
        defer { sqlite3_close(handle) }
        let db = try #require(handle)
        RowChecksum.register(on: db)
        try SQLiteRowChecksumTests.exec(db, "UPDATE modelstore_meta SET value = \(format) WHERE key = 'format'")
    }

    private static func changedKeys(_ container: ModelContainer) throws -> [[Int64?]] {
        try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).map { transaction in
            transaction.changes.map(\.changedPersistentIdentifier.primaryKey.intValue)
        }
    }

    @Test func aBatchInsertAndADeleteOfEveryModelAreOneShortLineAndListEveryModel() throws {
        let folder = try TemporaryDirectory()
        let url = folder.file("runs.sqlite")
        let container = try Self.container(url)
        let context = ModelContext(container)
        let ids = try context.insert(RunNote.self, rows: (0..<2_000).map { [.set(\.text, to: "n\($0)")] })
        let keys = ids.map { $0.primaryKey.intValue }
        try context.delete(model: RunNote.self)

        let bodies = try Self.bodies(url)
        #expect(bodies.count == 2)
        let (first, last) = (try #require(keys.first ?? nil), try #require(keys.last ?? nil))
        #expect(bodies == ["i\tRunNote\t\(first)..\(last)\t\t", "d\tRunNote\t\(first)..\(last)\t\t"])
        // Read back, each run lists every model again, in order.
        #expect(try Self.changedKeys(container) == [keys, keys])
    }

    @Test func aFileOfFormatThreeIsReadAsItIsAndRaisedToFourByAnOpenThatWrites() throws {
        let folder = try TemporaryDirectory()
        let url = folder.file("three.sqlite")
        do {
            let context = ModelContext(try Self.container(url))
            let note = RunNote()
            note.text = "kept"
            context.insert(note)
            try context.save()
        }
        try Self.setFormat(3, of: url)
        // A read-only open reads it without writing: format 3 holds nothing format 4 lacks.
        let readOnly = try Self.container(url, allowsSave: false)
        #expect(try ModelContext(readOnly).fetch(FetchDescriptor<RunNote>()).map(\.text) == ["kept"])
        #expect(try Self.changedKeys(readOnly).count == 1)
        #expect(try SQLiteRowChecksumTests.format(of: url) == 3)
        _ = try Self.container(url)
        #expect(try SQLiteRowChecksumTests.format(of: url) == 4)
    }
}
