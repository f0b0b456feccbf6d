import CSQLite
import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// `.externalStorage` values in `<database>.external/`: which values go there, that each file
/// lives exactly as long as a committed row names it, and what `compact` and `verify` do with the
/// folder.
struct SQLiteExternalStorageTests {
    /// Deterministic bytes, different per seed.
    static func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed) &+ ($0 >> 8)) })
    }

    static func item(_ entity: Schema.Entity, _ code: String, blob: Data) throws -> DefaultSnapshot {
        try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Item"), entity: entity,
            namedValues: ["code": .string(code), "blob": .data(blob)])
    }

    /// The files of the store's external folder, sorted.
    static func files(_ url: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path + ".external").sorted()
    }

    /// What SQLite keeps in the `blob` column of the item `code`: its type name and, for text, the text.
    static func column(_ store: SQLiteStore, code: String) throws -> (type: String, text: String?) {
        try store.database.withLock { connection in
            let statement = try connection.prepare(
                "SELECT typeof(\"blob\"), CASE WHEN typeof(\"blob\") = 'text' THEN \"blob\" END FROM \"Item\" "
                    + "WHERE \"code\" = ?")
            statement.bind(1, code)
            guard try statement.step() else { return ("none", nil) }
            return (statement.text(0), statement.isNull(1) ? nil : statement.text(1))
        }
    }

    static func blob(_ store: SQLiteStore, code: String) throws -> StoreValue? {
        try store.run(StoreQuery(entityName: "Item", filter: .compare(StorePath("code"), .equal, .string(code))))
            .first?["blob"]
    }

    static func update(_ store: SQLiteStore, code: String, _ change: (inout DefaultSnapshot) -> Void) throws {
        var snapshot = try #require(
            try store.run(StoreQuery(entityName: "Item", filter: .compare(StorePath("code"), .equal, .string(code))))
                .first)
        change(&snapshot)
        _ = try store.save(
            DataStoreSaveChangesRequest(editingState: EditingState(), inserted: [], updated: [snapshot], deleted: []))
    }

    @Test func largeValuesAreFilesBesideTheDatabaseAndSmallOnesStayInTheirColumn() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let store = try ItemSchema.store(url)
        let entity = try #require(store.schema.entity(named: "Item"))
        let large = Self.bytes(ExternalValueFolder.inlineLimit, seed: 1)
        let small = Self.bytes(ExternalValueFolder.inlineLimit - 1, seed: 2)
        _ = try store.insert([try Self.item(entity, "large", blob: large), try Self.item(entity, "small", blob: small)])
        let files = try Self.files(url)
        #expect(files.count == 1)
        #expect(try Self.column(store, code: "large") == ("text", files.first))
        #expect(try Self.column(store, code: "small").type == "blob")
        #expect(try Data(contentsOf: URL(fileURLWithPath: url.path + ".external/" + files[0])) == large)
        let reopened = try ItemSchema.store(url)
        #expect(try Self.blob(reopened, code: "large") == .data(large))
        #expect(try Self.blob(reopened, code: "small") == .data(small))
    }

    @Test func aReplacedOrDeletedValueLosesItsFileAndAnUnrelatedChangeKeepsIt() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let store = try ItemSchema.store(url)
        let entity = try #require(store.schema.entity(named: "Item"))
        let ids = try store.insert([try Self.item(entity, "a", blob: Self.bytes(1 << 20, seed: 1))])
        let first = try Self.files(url)
        try Self.update(store, code: "a") { $0["name"] = .string("unrelated") }
        #expect(try Self.files(url) == first, "an unchanged value must keep its file")
        let replacement = Self.bytes(1 << 20, seed: 2)
        try Self.update(store, code: "a") { $0["blob"] = .data(replacement) }
        let second = try Self.files(url)
        #expect(second.count == 1 && second != first)
        #expect(try Self.blob(store, code: "a") == .data(replacement))
        // Back to a small value: the column holds it and the file goes.
        try Self.update(store, code: "a") { $0["blob"] = .data(Data([1, 2, 3])) }
        #expect(try Self.files(url).isEmpty)
        try Self.update(store, code: "a") { $0["blob"] = .data(replacement) }
        #expect(try Self.files(url).count == 1)
        _ = try store.save(
            DataStoreSaveChangesRequest(
                editingState: EditingState(), inserted: [], updated: [],
                deleted: try store.run(StoreQuery(entityName: "Item", filter: .identifiers(Set(ids))))))
        #expect(try Self.files(url).isEmpty)
    }

    @Test func batchesAndEraseGiveEachRowItsOwnFileAndRemoveThem() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let store = try ItemSchema.store(url)
        let entity = try #require(store.schema.entity(named: "Item"))
        let ids = try store.insert(
            try (0..<3).map { try Self.item(entity, "c\($0)", blob: Self.bytes(1 << 16, seed: UInt8($0))) })
        #expect(try Self.files(url).count == 3)
        let shared = Self.bytes(1 << 16, seed: 9)
        try store.update(
            DataStoreBatchUpdateRequest<SchemaOnlyModel>(
                identifiers: Array(ids[0..<2]), values: [entity.slot(of: "blob")!: .data(shared)],
                editingState: EditingState()))
        #expect(try Self.files(url).count == 3)
        #expect(try Self.column(store, code: "c0").text != Self.column(store, code: "c1").text)
        #expect(try Self.blob(store, code: "c1") == .data(shared))
        try store.delete(
            DataStoreBatchDeleteRequest<SchemaOnlyModel>(identifiers: [ids[0]], editingState: EditingState()))
        #expect(try Self.files(url).count == 2)
        try store.erase()
        #expect(try Self.files(url).isEmpty)
    }

    @Test func aSaveThatFailsRemovesTheFilesItWroteAndKeepsTheOldValue() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let store = try ItemSchema.store(url)
        let entity = try #require(store.schema.entity(named: "Item"))
        let kept = Self.bytes(1 << 20, seed: 1)
        _ = try store.insert([try Self.item(entity, "a", blob: kept), try Self.item(entity, "b", blob: Data())])
        let before = try Self.files(url)
        var a = try #require(try store.run(StoreQuery(entityName: "Item")).first { $0["code"] == .string("a") })
        a["blob"] = .data(Self.bytes(1 << 20, seed: 2))
        // The same save inserts a second "a": the unique index refuses it after the file is written.
        let error = #expect(throws: DataStoreError.self) {
            try store.save(
                DataStoreSaveChangesRequest(
                    editingState: EditingState(),
                    inserted: [try Self.item(entity, "b", blob: Self.bytes(1 << 20, seed: 3))], updated: [a],
                    deleted: []))
        }
        #expect(error?.code == .uniqueConstraintViolation)
        #expect(try Self.files(url) == before)
        #expect(try Self.blob(store, code: "a") == .data(kept))
    }

    @Test func compactRemovesFilesNoRowNamesAndVerifyReportsAMissingOne() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let store = try ItemSchema.store(url)
        let entity = try #require(store.schema.entity(named: "Item"))
        _ = try store.insert([try Self.item(entity, "a", blob: Self.bytes(1 << 16, seed: 1))])
        let named = try Self.files(url)
        // What a process killed between writing its files and committing leaves behind.
        let folder = url.path + ".external/"
        try Data([1]).write(to: URL(fileURLWithPath: folder + "0123456789abcdef-0123456789abcdef.bin"))
        try Data([2]).write(to: URL(fileURLWithPath: folder + "0123456789abcdef-fedcba9876543210.bin.tmp"))
        try Data([3]).write(to: URL(fileURLWithPath: folder + "notes.txt"))
        #expect(try SQLiteStore.integrityProblems(at: url).isEmpty)
        let report = try store.compact()
        #expect(report.unnamedExternalFilesRemoved == 2)
        #expect(try Self.files(url) == (named + ["notes.txt"]).sorted())
        #expect(try Self.blob(store, code: "a") == .data(Self.bytes(1 << 16, seed: 1)))

        try FileManager.default.removeItem(atPath: folder + named[0])
        let problems = try SQLiteStore.integrityProblems(at: url)
        #expect(problems.count == 1 && problems[0].contains("'\(folder + named[0])'"), "\(problems)")
        let error = #expect(throws: DataStoreError.self) { try Self.blob(store, code: "a") }
        #expect(error?.code == .corrupted)
        #expect(error?.message.contains(folder + named[0]) == true, "\(String(describing: error))")
    }

    @Test func filtersOnAnExternalAttributeCompareTheBytes() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let store = try ItemSchema.store(url)
        let entity = try #require(store.schema.entity(named: "Item"))
        let large = Self.bytes(1 << 16, seed: 1)
        _ = try store.insert([
            try Self.item(entity, "large", blob: large), try Self.item(entity, "small", blob: Data([1])),
        ])
        for (value, code) in [(large, "large"), (Data([1]), "small")] {
            let found = try store.run(
                StoreQuery(entityName: "Item", filter: .compare(StorePath("blob"), .equal, .data(value))))
            #expect(found.map { $0["code"] } == [.string(code)])
        }
    }

    @Test func copiedSnapshotsCarryTheBytesIntoTheOtherStoresFolder() throws {
        // What `modelstore convert` does between two SQLite stores: read every snapshot, insert it.
        let directory = try TemporaryDirectory()
        let source = try ItemSchema.store(directory.file("source.sqlite"))
        let entity = try #require(source.schema.entity(named: "Item"))
        let large = Self.bytes(1 << 18, seed: 5)
        _ = try source.insert([try Self.item(entity, "a", blob: large)])
        let destinationURL = directory.file("copy.sqlite")
        let destination = try ItemSchema.store(destinationURL)
        #expect(try destination.insert(try source.run(StoreQuery(entityName: "Item"))).count == 1)
        #expect(try Self.files(destinationURL).count == 1)
        #expect(try Self.blob(try ItemSchema.store(destinationURL), code: "a") == .data(large))
    }

    @Test func anInMemoryStoreKeepsLargeValuesInTheirColumn() throws {
        let store = try ItemSchema.store(nil)
        let entity = try #require(store.schema.entity(named: "Item"))
        let large = Self.bytes(1 << 20, seed: 1)
        _ = try store.insert([try Self.item(entity, "a", blob: large)])
        #expect(try Self.column(store, code: "a").type == "blob")
        #expect(try Self.blob(store, code: "a") == .data(large))
    }

    @Test func anAbortAfterCommitPutsTheValueBackWithEveryNamedFileOnDisk() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let store = try ItemSchema.store(url)
        let entity = try #require(store.schema.entity(named: "Item"))
        let original = Self.bytes(1 << 16, seed: 1)
        _ = try store.insert([try Self.item(entity, "a", blob: original)])
        var a = try #require(try store.run(StoreQuery(entityName: "Item")).first)
        a["blob"] = .data(Self.bytes(1 << 16, seed: 2))
        let part = try store.prepareSave(
            DataStoreSaveChangesRequest(
                editingState: EditingState(),
                inserted: [try Self.item(entity, "b", blob: Self.bytes(1 << 16, seed: 3))],
                updated: [a], deleted: []))
        try part.commit()
        part.abort()
        #expect(try store.run(StoreQuery(entityName: "Item")).map { $0["blob"] } == [.data(original)])
        #expect(try Self.files(url).count == 1)
        #expect(try SQLiteStore.integrityProblems(at: url).isEmpty)
    }
}
