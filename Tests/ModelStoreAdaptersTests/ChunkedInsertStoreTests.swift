import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreTestSupport
import Testing

/// A member whose values are all plain attributes, so a large insert of members is saved with its
/// snapshots made a chunk at a time.
final class Member: PersistentModel {
    @Attribute(.unique) var email: String = ""
    @Attribute var rank: Int = 0

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ index: Int) {
        self.init()
        email = "member-\(index)@example.com"
        rank = index
    }
}

/// The file stores saving a large insert whose snapshots the context makes a chunk at a time.
struct ChunkedInsertStoreTests {
    static let count = 20_000

    @Test(arguments: ["json", "log", "sqlite"])
    func aLargeInsertIsWrittenWholeOrNotAtAllAndReopensInOrder(_ kind: String) throws {
        let directory = try TemporaryDirectory()
        let url =
            switch kind {
            case "json": "json:" + directory.file("members.json").path
            case "log": "log:" + directory.file("members-log").path
            default: "sqlite:" + directory.file("members.sqlite").path
            }
        let container = try ModelContainer(for: Schema([Member.self]), url: url)
        let context = ModelContext(container)
        context.duplicateInsertPolicy = .error
        context.insert(Member(15_000))
        try context.save()
        let files = try FileTree.snapshot(directory.url)
        let history = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).map(\.token)

        // The duplicate of the stored email sits in the second chunk of 8,192.
        var members = (0..<Self.count).map(Member.init)
        for member in members { context.insert(member) }
        #expect(throws: DataStoreError.self) { try context.save() }
        // SQLite's write-ahead log may hold the rolled-back transaction's pages, so it is read, not compared.
        if kind != "sqlite" {
            #expect(try FileTree.snapshot(directory.url) == files, "a failed save changed the files")
        }
        let reader = ModelContext(container)
        #expect(try reader.fetchCount(FetchDescriptor<Member>()) == 1)
        #expect(try reader.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).map(\.token) == history)
        #expect(members.allSatisfy { $0.persistentModelID.isTemporary })

        context.delete(members.remove(at: 15_000))
        try context.save()
        let ids = members.map(\.persistentModelID)
        #expect(Set(ids).count == ids.count && !ids.contains(where: \.isTemporary))

        ToolLibrary.close(container)
        try Self.expectReopened(url, holdsEveryMemberWith: ids)
    }

    /// Opens the store at `url` again and checks that it holds every member in rank order, each
    /// but member 15,000 (saved first) under the identifier in `ids`.
    static func expectReopened(_ url: String, holdsEveryMemberWith ids: [PersistentIdentifier]) throws {
        let reopened = ModelContext(try ModelContainer(for: Schema([Member.self]), url: url))
        let stored = try reopened.fetch(FetchDescriptor<Member>(sortBy: [SortDescriptor(\.rank)]))
        #expect(stored.count == Self.count)
        #expect(stored.filter { $0.rank != 15_000 }.map(\.persistentModelID) == ids)
        #expect(stored.map(\.email) == (0..<Self.count).map { "member-\($0)@example.com" })
    }

    /// The rows of a batch insert, `context.insert(Member.self, rows:)`, for members `range`.
    static func rows(_ range: Range<Int>) -> some Sequence<[BatchAssignment<Member>]> {
        range.lazy.map { [.set(\Member.email, to: "member-\($0)@example.com"), .set(\Member.rank, to: $0)] }
    }

    /// A batch insert into the append log reads its rows a chunk at a time into the table and
    /// writes one record from the table's rows: a duplicate in a later chunk leaves the files and
    /// the table as they were; a whole batch reopens in order.
    @Test func aLogBatchInsertIsWrittenWholeOrNotAtAllAndReopensInOrder() throws {
        let directory = try TemporaryDirectory()
        let url = "log:" + directory.file("members-log").path
        let container = try ModelContainer(for: Schema([Member.self]), url: url)
        let context = ModelContext(container)
        context.insert(Member(15_000))
        try context.save()
        let files = try FileTree.snapshot(directory.url)
        let history = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).map(\.token)

        let error = try #require(throws: DataStoreError.self) {
            try context.insert(Member.self, rows: Self.rows(0..<Self.count))
        }
        #expect(error.code == .uniqueConstraintViolation, "\(error)")
        #expect(try FileTree.snapshot(directory.url) == files, "a failed batch insert changed the files")
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Member>()) == 1)
        #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).map(\.token) == history)

        let first = try context.insert(Member.self, rows: Self.rows(0..<15_000))
        let second = try context.insert(Member.self, rows: Self.rows(15_001..<Self.count))
        let ids: [PersistentIdentifier] = Array(first) + Array(second)
        #expect(Set(ids).count == ids.count && !ids.contains(where: \.isTemporary))
        #expect(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == history.count + 2)

        ToolLibrary.close(container)
        try Self.expectReopened(url, holdsEveryMemberWith: ids)
    }

    /// Renames a copy of each of the append log's files over it, as a restore does, so the open
    /// store's next write is refused.
    static func replaceFiles(of folder: URL) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) where !name.hasSuffix("lock") {
            let file = folder.appendingPathComponent(name)
            let copy = file.appendingPathExtension("copy")
            try FileManager.default.copyItem(at: file, to: copy)
            #expect(rename(copy.path, file.path) == 0)
        }
    }

    /// An append log whose segment was replaced under the open store refuses the write after the
    /// new rows went into its table: it takes them out again, so a fetch sees what was saved.
    @Test(arguments: ["save", "batch"])
    func aLogWriteRefusedAfterTheTableTookTheRowsTakesThemBack(_ path: String) throws {
        let directory = try TemporaryDirectory()
        let container = try ModelContainer(
            for: Schema([Member.self]), url: "log:" + directory.file("members-log").path)
        let context = ModelContext(container)
        context.insert(Member(0))
        try context.save()
        try Self.replaceFiles(of: directory.file("members-log"))

        let error = try #require(throws: DataStoreError.self) {
            if path == "batch" {
                try context.insert(Member.self, rows: Self.rows(1..<Self.count))
            } else {
                for member in (1..<Self.count).map(Member.init) { context.insert(member) }
                try context.save()
            }
        }
        #expect(error.message.contains("replaced or removed"), "\(error)")
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Member>()) == 1)
        #expect(
            try ModelContext(container).fetchCount(FetchDescriptor<Member>(predicate: #Predicate { $0.rank > 0 })) == 0)
    }
}
