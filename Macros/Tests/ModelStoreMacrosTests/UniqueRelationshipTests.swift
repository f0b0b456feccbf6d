import Foundation
import ModelStoreAdapters
import ModelStoreMacros
import Testing

/// A badge that at most one member wears.
@Model
final class Badge {
    var code: String

    init(code: String) {
        self.code = code
    }
}

/// A member whose badge is unique, in SwiftData's spelling.
@Model
final class Member {
    var name: String
    @Relationship(.unique, deleteRule: .nullify) var badge: Badge?

    init(name: String, badge: Badge?) {
        self.name = name
        self.badge = badge
    }
}

/// `@Relationship(.unique)` on a to-one relationship: a uniqueness constraint on it, kept by every store.
struct UniqueRelationshipTests {
    @Test func theRelationshipIsAUniquenessConstraintOfTheModel() throws {
        let entity = try #require(Schema([Member.self, Badge.self]).entity(named: "Member"))
        #expect(entity.uniquenessConstraints == [["badge"]])
        #expect(entity.relationship(named: "badge")?.deleteRule == .nullify)
    }

    /// A second member with the same badge updates the member that has it, as in SwiftData (the
    /// default insert policy's upsert); under the error policy every store refuses it.
    @Test(arguments: TripStoreTests.stores)
    func aSecondMemberWithTheSameBadgeUpdatesTheFirstOrIsRefused(store: String) throws {
        let directory = try TemporaryDirectory()
        let container = try ModelContainer(
            for: Member.self, Badge.self, url: directory.storeURLs[TripStoreTests.stores.firstIndex(of: store)!])
        let context = ModelContext(container)
        let badge = Badge(code: "B-1")
        context.insert(Member(name: "Ada", badge: badge))
        context.insert(Member(name: "Alan", badge: Badge(code: "B-2")))
        context.insert(Member(name: "Barbara", badge: nil))
        context.insert(Member(name: "Niklaus", badge: nil))
        try context.save()

        let other = ModelContext(container)
        let stored = try #require(try other.fetch(FetchDescriptor<Badge>()).first { $0.code == "B-1" })
        other.insert(Member(name: "Grace", badge: stored))
        try other.save()
        let names = try ModelContext(container).fetch(FetchDescriptor<Member>(sortBy: [SortDescriptor(\.name)]))
            .map(\.name)
        #expect(names == ["Alan", "Barbara", "Grace", "Niklaus"], "models without a badge do not collide")

        let strict = ModelContext(container)
        strict.duplicateInsertPolicy = .error
        let taken = try #require(try strict.fetch(FetchDescriptor<Badge>()).first { $0.code == "B-2" })
        strict.insert(Member(name: "Edsger", badge: taken))
        #expect {
            try strict.save()
        } throws: {
            ($0 as? DataStoreError)?.code == .uniqueConstraintViolation
        }
    }
}
