import Foundation
import ModelStore
import ModelStoreJSONFile
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

/// The JSON file store saving a large insert whose snapshots the context makes a chunk at a time.
struct JSONFileChunkedInsertTests {
    static let count = 20_000

    @Test func aLargeInsertIsWrittenWholeOrNotAtAllAndReopensInOrder() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("members.json")
        let container = try ModelContainer(for: Member.self, configurations: .jsonFile(at: url))
        let context = ModelContext(container)
        context.duplicateInsertPolicy = .error
        context.insert(Member(15_000))
        try context.save()
        let before = try Data(contentsOf: url)

        // The duplicate of the stored email sits in the second chunk of 8,192.
        var members = (0..<Self.count).map(Member.init)
        for member in members { context.insert(member) }
        #expect(throws: DataStoreError.self) { try context.save() }
        #expect(try Data(contentsOf: url) == before, "a failed save changed the file")
        #expect(members.allSatisfy { $0.persistentModelID.isTemporary })

        context.delete(members.remove(at: 15_000))
        try context.save()
        let ids = members.map(\.persistentModelID)
        #expect(Set(ids).count == ids.count && !ids.contains(where: \.isTemporary))

        let reopened = ModelContext(try ModelContainer(for: Member.self, configurations: .jsonFile(at: url)))
        let stored = try reopened.fetch(FetchDescriptor<Member>(sortBy: [SortDescriptor(\.rank)]))
        #expect(stored.count == Self.count)
        #expect(stored.filter { $0.rank != 15_000 }.map(\.persistentModelID) == ids)
        #expect(stored.map(\.email) == (0..<Self.count).map { "member-\($0)@example.com" })
    }
}
