import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

/// A model with a unique attribute and a to-many relationship, for upserts.
final class Member: PersistentModel {
    @Attribute(.unique) var handle: String = ""
    @Attribute var score: Int = 0
    @Relationship(deleteRule: .cascade, inverse: \Badge.member) var badges: [Badge] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ handle: String, score: Int = 0, badges: [Badge] = []) {
        self.init()
        self.handle = handle
        self.score = score
        self.badges = badges
    }
}

/// A badge some member holds.
final class Badge: PersistentModel {
    @Attribute var title: String = ""
    @Relationship var member: Member?

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ title: String) {
        self.init()
        self.title = title
    }
}

/// SwiftData's upsert on every built-in store: the lookup of the stored model runs through each
/// store's own query (SQL in SQLite), and the result survives reopening.
struct UpsertOnEveryStoreTests {
    @Test(arguments: StoreKind.allCases)
    func anInsertWithAStoredUniqueValueUpdatesTheStoredModel(kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: [Member.self, Badge.self])
        let first = ModelContext(store.container)
        first.duplicateInsertPolicy = .upsert
        let ada = Member("ada", score: 1, badges: [Badge("gold")])
        first.insert(ada)
        first.insert(Member("bob", score: 2))
        try first.save()

        let container = try store.reopen()
        let second = ModelContext(container)
        second.duplicateInsertPolicy = .upsert
        let again = Member("ada", score: 7, badges: [Badge("silver")])
        second.insert(again)
        second.insert(Member("cy", score: 3))
        try second.save()
        #expect(again.persistentModelID == ada.persistentModelID, "the inserted object names the kept model")

        let reader = ModelContext(try store.reopen())
        let members = try reader.fetch(FetchDescriptor<Member>(sortBy: [SortDescriptor(\.handle)]))
        #expect(members.map(\.handle) == ["ada", "bob", "cy"])
        #expect(members.map(\.score) == [7, 2, 3])
        #expect(members[0].badges.map(\.title).sorted() == ["gold", "silver"])
        let badges = try reader.fetch(FetchDescriptor<Badge>())
        #expect(badges.count == 2 && badges.allSatisfy { $0.member?.handle == "ada" })
    }
}
