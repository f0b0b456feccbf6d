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

/// A parking spot at most one car holds.
final class Spot: PersistentModel {
    @Attribute var label: String = ""

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ label: String) {
        self.init()
        self.label = label
    }
}

/// A car whose spot is unique: a uniqueness constraint on a to-one relationship
/// (SwiftData's `@Relationship(.unique)`).
final class ParkedCar: PersistentModel {
    @Attribute var plate: String = ""
    @Relationship var spot: Spot?

    static var constraints: [ModelConstraint<ParkedCar>] { [.unique(\.spot)] }

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ plate: String, spot: Spot?) {
        self.init()
        self.plate = plate
        self.spot = spot
    }
}

/// An upsert matches a unique to-one relationship by the related model, as SwiftData's does.
struct UpsertOnAUniqueRelationshipTests {
    @Test(arguments: StoreKind.allCases)
    func anInsertRelatedToATakenModelUpdatesTheModelThatHasIt(kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: [ParkedCar.self, Spot.self])
        let first = ModelContext(store.container)
        let a1 = Spot("A1")
        first.insert(ParkedCar("OLD-1", spot: a1))
        first.insert(ParkedCar("OLD-2", spot: Spot("A2")))
        first.insert(ParkedCar("WALK-1", spot: nil))
        try first.save()

        let second = ModelContext(try store.reopen())
        let stored = try #require(try second.fetch(FetchDescriptor<Spot>()).first { $0.label == "A1" })
        second.insert(ParkedCar("NEW-1", spot: stored))
        second.insert(ParkedCar("WALK-2", spot: nil))
        // Two new cars in one new spot fold into one.
        let b1 = Spot("B1")
        second.insert(ParkedCar("NEW-2", spot: b1))
        second.insert(ParkedCar("NEW-3", spot: b1))
        try second.save()

        let reader = ModelContext(try store.reopen())
        let cars = try reader.fetch(FetchDescriptor<ParkedCar>(sortBy: [SortDescriptor(\.plate)]))
        #expect(cars.map(\.plate) == ["NEW-1", "NEW-3", "OLD-2", "WALK-1", "WALK-2"])
        #expect(cars.map { $0.spot?.label } == ["A1", "B1", "A2", nil, nil])

        // Under the error policy the same insert is refused, and nothing is stored.
        let strict = ModelContext(try store.reopen())
        strict.duplicateInsertPolicy = .error
        let taken = try #require(try strict.fetch(FetchDescriptor<Spot>()).first { $0.label == "A2" })
        strict.insert(ParkedCar("LATE-1", spot: taken))
        let error = try #require(throws: DataStoreError.self) { try strict.save() }
        #expect(error.code == .uniqueConstraintViolation)
        #expect(try ModelContext(try store.reopen()).fetchCount(FetchDescriptor<ParkedCar>()) == 5)
    }
}
