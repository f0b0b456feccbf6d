import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// A crate whose label survives in tombstones, whose photo is kept in a file beside the database,
/// and which lists other crates (a join table the crate table owns).
final class Crate: PersistentModel {
    @Attribute(.unique, .preserveValueOnDeletion) var label: String = ""
    @Attribute(.externalStorage) var photo: Data = Data()
    @Relationship var nested: [Crate] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ label: String, photo: Data) {
        self.init()
        self.label = label
        self.photo = photo
    }
}

/// A shelf that refers to crates from another table: a to-one column and a join table.
final class Shelf: PersistentModel {
    @Attribute var name: String = ""
    @Relationship var front: Crate?
    @Relationship var crates: [Crate] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ name: String) {
        self.init()
        self.name = name
    }
}

/// `SQLiteStore.deleteEveryModel`, beyond the conformance cases: what it records in history, the
/// external files and join rows it releases, and the references from other entities it clears.
struct SQLiteDeleteEveryModelTests {
    let folder: TemporaryDirectory
    let url: URL

    init() throws {
        folder = try TemporaryDirectory()
        url = folder.url.appendingPathComponent("crates.sqlite")
    }

    private func container(historyLimit: Int? = 10_000) throws -> ModelContainer {
        var configuration = SQLiteStoreConfiguration(url: url)
        configuration.historyLimit = historyLimit
        return try ModelContainer(for: Crate.self, Shelf.self, HistoryNote.self, configurations: configuration)
    }

    private func photo(_ seed: UInt8) -> Data {
        Data((0..<(1 << 15)).map { UInt8(truncatingIfNeeded: $0) &+ seed })
    }

    private func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path + ".external")
    }

    private func rows(_ table: String, _ store: SQLiteStore) throws -> Int64 {
        try store.database.withLock { connection in
            let statement = try connection.prepare("SELECT count(*) FROM \(quote(table))")
            _ = try statement.step()
            return statement.int64(0)
        }
    }

    @Test func itRecordsTombstonesReleasesFilesAndJoinRowsAndClearsReferences() throws {
        let container = try container()
        let store = try #require(container.stores.first as? SQLiteStore)
        let context = ModelContext(container)
        let crates = (0..<3).map { Crate("c\($0)", photo: photo(UInt8($0))) }
        for crate in crates { context.insert(crate) }
        crates[0].nested = [crates[1], crates[2]]
        let shelf = Shelf("top")
        context.insert(shelf)
        shelf.front = crates[0]
        shelf.crates = [crates[2], crates[1]]
        try context.save()
        #expect(try files().count == 3)
        #expect(try rows("Crate.nested", store) == 2)
        let saved = Set(crates.map(\.persistentModelID))

        let deleted = try store.deleteEveryModel(
            DataStoreDeleteEveryModelRequest<Crate>(editingState: EditingState(author: "mover")))
        #expect(deleted.count == 3 && Set(deleted) == saved)
        #expect(try files().isEmpty, "every photo's file is released")
        #expect(try rows("Crate.nested", store) == 0)
        #expect(try rows("Shelf.crates", store) == 0)

        let fresh = ModelContext(container)
        #expect(try fresh.fetchCount(FetchDescriptor<Crate>()) == 0)
        let reread = try #require(try fresh.fetch(FetchDescriptor<Shelf>()).first)
        #expect(reread.front == nil && reread.crates.isEmpty && reread.name == "top")

        let last = try #require(try fresh.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        #expect(last.author == "mover")
        let labels = last.changes.compactMap { change -> String? in
            guard case .delete(let delete as DefaultHistoryDelete<Crate>) = change else { return nil }
            return delete.tombstone[\Crate.label]
        }
        #expect(labels.sorted() == ["c0", "c1", "c2"], "one tombstone per crate: \(last.changes)")

        let again = try store.deleteEveryModel(DataStoreDeleteEveryModelRequest<Crate>(editingState: EditingState()))
        #expect(again.isEmpty)
        #expect(try fresh.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last?.token == last.token)
    }

    /// Through the context (an entity no relationship touches), with keys that are not one range.
    @Test func theContextsDeleteOfEveryModelRecordsEachAndLeavesOtherEntitiesAlone() throws {
        let container = try container()
        let context = ModelContext(container)
        let notes = ["a", "b", "c", "d"].map { HistoryNote($0) }
        for note in notes { context.insert(note) }
        context.insert(Crate("kept", photo: photo(7)))
        try context.save()
        // Keys with a gap: the table's keys are no longer one range from its smallest to its largest.
        context.delete(notes[1])
        try context.save()

        try context.delete(model: HistoryNote.self)
        let fresh = ModelContext(container)
        #expect(try fresh.fetchCount(FetchDescriptor<HistoryNote>()) == 0)
        #expect(try fresh.fetch(FetchDescriptor<Crate>()).map(\.label) == ["kept"])
        #expect(try files().count == 1)
        let last = try #require(try fresh.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        let titles = last.changes.compactMap { change -> String? in
            guard case .delete(let delete as DefaultHistoryDelete<HistoryNote>) = change else { return nil }
            return delete.tombstone[\HistoryNote.title]
        }
        #expect(titles.sorted() == ["a", "c", "d"] && last.changes.count == 3)
    }

    /// A delete of more models than the trim keeps writes no history row, as a batch delete does;
    /// numbers go on after it.
    @Test func aDeleteOverTheHistoryLimitWritesNoRowAndNumbersGoOn() throws {
        let container = try container(historyLimit: 10)
        let context = ModelContext(container)
        _ = try context.insert(HistoryNote.self, rows: (1...12).map { index in [.set(\.title, to: "n\(index)")] })
        try context.delete(model: HistoryNote.self)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<HistoryNote>()) == 0)
        context.insert(HistoryNote("after"))
        try context.save()
        let numbers = try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
            .map(\.token.transactionNumber)
        #expect(numbers == [3])
    }
}
