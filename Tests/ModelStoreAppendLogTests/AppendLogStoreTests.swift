import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreAppendLog
import ModelStoreTestSupport
import Testing

struct AppendLogStoreTests {
    @Test func modelsSavedThroughAContainerAreThereAfterReopening() throws {
        let directory = try TemporaryDirectory()
        do {
            let container = try ModelContainer(
                for: Note.self, Folder.self, configurations: .appendLog(at: directory.store))
            let context = ModelContext(container)
            context.author = "tester"
            let inbox = Folder("Inbox", notes: [Note("Milk", rank: 2), Note("Eggs", body: "a dozen", rank: 1)])
            context.insert(inbox)
            try context.save()
            let eggs = try #require(inbox.notes.first { $0.title == "Eggs" })
            eggs.rank = 5
            try context.save()
        }
        let container = try ModelContainer(for: Note.self, Folder.self, configurations: .appendLog(at: directory.store))
        let context = ModelContext(container)
        let notes = try context.fetch(FetchDescriptor<Note>(sortBy: [SortDescriptor(\.rank)]))
        #expect(notes.map(\.title) == ["Milk", "Eggs"])
        #expect(notes.map(\.rank) == [2, 5])
        #expect(notes.last?.body == "a dozen")
        #expect(notes.allSatisfy { $0.folder?.name == "Inbox" })
        let folders = try context.fetch(FetchDescriptor<Folder>())
        #expect(folders.first?.notes.count == 2)
    }

    @Test func anUpdateAppendsOnlyTheValuesThatChanged() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.store)
        let big = String(repeating: "x", count: 10_000)
        let id = try #require(try save(store, inserting: [try noteSnapshot("Long", body: big)]).first)
        let segment = file(directory.store, "segment-00000001.mslog")
        let before = FileManager.default.sizeOfFile(segment)
        var changed = try current(store, id)
        changed["rank"] = .int(7)
        try save(store, updating: [changed])
        let growth = FileManager.default.sizeOfFile(segment) - before
        #expect(growth > 0)
        #expect(growth < 100, "an update of one integer appended \(growth) bytes")
        store.close()
        let reopened = try openStore(directory.store)
        let snapshot = try current(reopened, id)
        #expect(snapshot["rank"] == .int(7))
        #expect(snapshot["body"] == .string(big))
    }

    @Test func aSaveThatChangesNothingAppendsNothing() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.store)
        let id = try #require(try save(store, inserting: [try noteSnapshot("Same")]).first)
        let count = store.info.transactionCount
        try save(store, updating: [try current(store, id)])
        #expect(store.info.transactionCount == count)
    }

    @Test func keysOfDeletedModelsAreNotReusedAfterReopening() throws {
        let directory = try TemporaryDirectory()
        var store = try openStore(directory.store)
        let ids = try save(store, inserting: [try noteSnapshot("A"), try noteSnapshot("B")])
        try save(store, deleting: [try current(store, ids[1])])
        store.close()
        store = try openStore(directory.store)
        let next = try #require(try save(store, inserting: [try noteSnapshot("C")]).first)
        #expect(!ids.contains(next))
        #expect(next.primaryKey > ids[1].primaryKey)
        #expect(next.storeIdentifier == ids[0].storeIdentifier)
    }

    @Test func uniqueConstraintViolationsLeaveTheLogAsItWas() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.store)
        try save(store, inserting: [try noteSnapshot("Unique")])
        let before = store.info
        expectError(.uniqueConstraintViolation) {
            try save(store, inserting: [try noteSnapshot("Other"), try noteSnapshot("Unique")])
        }
        #expect(store.info.transactionCount == before.transactionCount)
        #expect(store.info.logByteCount == before.logByteCount)
        store.close()
        let reopened = try openStore(directory.store)
        #expect(try contents(of: reopened).count == 1)
    }

    @Test func batchOperationsAreTransactionsOfTheLog() throws {
        let directory = try TemporaryDirectory()
        var store = try openStore(directory.store)
        let ids = try store.insert(
            DataStoreBatchInsertRequest(
                snapshots: try (0..<5).map { try noteSnapshot("N\($0)", rank: $0) }, editingState: EditingState()))
        let slot = try #require(noteSchema.entity(named: "Note")?.slot(of: "rank"))
        try store.update(
            DataStoreBatchUpdateRequest<Note>(
                identifiers: Array(ids[0..<3]), values: [slot: .int(100)], editingState: EditingState()))
        try store.delete(DataStoreBatchDeleteRequest<Note>(identifiers: [ids[4]], editingState: EditingState()))
        #expect(store.info.transactionCount == 3)
        let expected = try contents(of: store)
        store.close()
        store = try openStore(directory.store)
        #expect(try contents(of: store) == expected)
        #expect(expected.count == 4)
        try store.erase()
        #expect(try contents(of: store).isEmpty)
        store.close()
        #expect(try contents(of: try openStore(directory.store)).isEmpty)
    }

    /// Each kind of change the kit hands the log (a prepared save, new models already in the table,
    /// every model of an entity), refused because the segment was replaced under the open store,
    /// leaves the store's table as it was: nothing is half-applied in memory.
    @Test func aChangeTheLogRefusesLeavesTheTableAsItWas() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.store)
        defer { store.close() }
        let ids = try save(store, inserting: [try noteSnapshot("Kept", rank: 1), try noteSnapshot("Also", rank: 2)])
        let expected = try contents(of: store)
        // As an editor or a restore does: a copy of the active segment renamed over it.
        let segment = file(directory.store, "segment-00000001.mslog")
        let copy = segment.appendingPathExtension("copy")
        try FileManager.default.copyItem(at: segment, to: copy)
        #expect(rename(copy.path, segment.path) == 0)

        // New models only: the table's batch insert takes them before the log refuses the record.
        expectError(.conflict) { try save(store, inserting: [try noteSnapshot("New", rank: 3)]) }
        expectError(.conflict) {
            _ = try store.insert(
                DataStoreBatchInsertRequest(snapshots: [try noteSnapshot("Batch")], editingState: EditingState()))
        }
        // A save of an insert, an update and a delete.
        var updated = try current(store, ids[0])
        updated.values[try #require(noteSchema.entity(named: "Note")?.slot(of: "rank"))] = .int(9)
        expectError(.conflict) {
            try save(
                store, inserting: [try noteSnapshot("Other")], updating: [updated],
                deleting: [try current(store, ids[1])])
        }
        // Every note at once.
        expectError(.conflict) {
            _ = try store.deleteEveryModel(DataStoreDeleteEveryModelRequest<Note>(editingState: EditingState()))
        }
        #expect(try contents(of: store) == expected)
    }

    @Test func aClosedStoreRefusesCalls() throws {
        let directory = try TemporaryDirectory()
        let store = try openStore(directory.store)
        store.close()
        expectError(.io) { try save(store, inserting: [try noteSnapshot("Late")]) }
        store.close()
    }

    @Test func aDirectoryThatIsNotALogIsRefusedAndLeftAlone() throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.store, withIntermediateDirectories: true)
        let stranger = file(directory.store, "notes.txt")
        try Data("keep me".utf8).write(to: stranger)
        expectError(.invalidConfiguration) { try openStore(directory.store) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.store.path) == ["notes.txt"])
    }
}

extension FileManager {
    func sizeOfFile(_ url: URL) -> Int {
        (try? attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
    }
}
