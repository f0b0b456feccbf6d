import Foundation
import ModelStoreAdapters
import ModelStoreMacros
import Testing

/// A hand-written root class, as a ModelStore app declares one without the macros.
class Journey: PersistentModel {
    @ModelStore.Attribute(.unique) var title: String = ""
    @ModelStore.Attribute var days: Int = 1

    let persistentBackingData = BackingData()
    required init() {}

    convenience init(title: String) {
        self.init()
        self.title = title
    }
}

/// A `@Model` subclass of the hand-written root: values set before `super.init()`, a relationship
/// with an inverse set after it, a top-level enum and struct unmarked.
@Model
class SalesJourney: Journey {
    var client: String
    var stops: [Waypoint] = []
    var mood: Mood?
    var agency: Agency?

    init(title: String, client: String, agency: Agency?) {
        self.client = client
        super.init()
        self.title = title
        self.agency = agency
    }
}

/// A subclass of the hand-written root that sets a relationship before `super.init()`, which
/// nothing could link to its inverse.
@Model
final class EarlyJourney: Journey {
    var agency: Agency?

    init(agency: Agency) {
        self.agency = agency
        super.init()
    }
}

/// A `@Model` subclass of the `@Model` subclass.
@Model
final class KeySalesJourney: SalesJourney {
    var tier: Int = 1
    var notes: [Waypoint] = []
}

@Model
final class Agency {
    var name: String
    @Relationship(inverse: \SalesJourney.agency) var journeys: [SalesJourney] = []

    init(name: String) {
        self.name = name
    }
}

/// `@Model` subclasses of a hand-written model class, stored and read back on every built-in store.
struct HandWrittenRootTests {
    static let schema = Schema([Journey.self, SalesJourney.self, KeySalesJourney.self, Agency.self])

    @Test func theHierarchyIsOneEntityNamedAfterTheHandWrittenRoot() throws {
        let entity = try #require(Self.schema.entity(named: "Journey"))
        #expect(entity.classes.map(\.name) == ["Journey", "SalesJourney", "KeySalesJourney"])
        #expect(entity.classes.map { $0.ownPropertyNames.sorted() }[1] == ["agency", "client", "mood", "stops"])
        #expect(entity.uniquenessConstraints == [["title"]])
    }

    @Test func aRelationshipSetAfterSuperInitIsLinkedToItsInverse() {
        let agency = Agency(name: "Acme")
        let journey = SalesJourney(title: "fair", client: "Bolt", agency: agency)
        #expect(journey.title == "fair" && journey.client == "Bolt" && journey.days == 1)
        #expect(agency.journeys.map(\.title) == ["fair"])
        let key = KeySalesJourney()
        #expect(key.client == "" && key.tier == 1 && key.title == "")
    }

    @Test(arguments: 0..<4)
    func eachClassIsStoredAndFetchedAsItself(store: Int) throws {
        try TemporaryDirectory().writeThenReopen(store: store, schema: Self.schema) { container in
            let context = ModelContext(container)
            let agency = Agency(name: "Acme")
            context.insert(agency)
            context.insert(Journey(title: "a-plain"))
            let sales = SalesJourney(title: "b-sales", client: "Bolt", agency: agency)
            sales.stops = [Waypoint(name: "Depot", minutes: 15)]
            sales.mood = .busy
            context.insert(sales)
            let key = KeySalesJourney(title: "c-key", client: "Crane", agency: nil)
            key.tier = 3
            context.insert(key)
            try context.save()
        } read: { context in
            let all = try context.fetch(FetchDescriptor<Journey>(sortBy: [SortDescriptor(\.title)]))
            #expect(all.map(\.title) == ["a-plain", "b-sales", "c-key"])
            #expect(all.map { "\(type(of: $0))" } == ["Journey", "SalesJourney", "KeySalesJourney"])
            let sales = try #require(all[1] as? SalesJourney)
            #expect(sales.client == "Bolt" && sales.mood == .busy && sales.agency?.name == "Acme")
            #expect(sales.stops == [Waypoint(name: "Depot", minutes: 15)])
            let key = try #require(all[2] as? KeySalesJourney)
            #expect(key.tier == 3 && key.client == "Crane" && key.mood == nil && key.agency == nil)
            let subclass = try context.fetch(FetchDescriptor<SalesJourney>(sortBy: [SortDescriptor(\.title)]))
            #expect(subclass.map(\.title) == ["b-sales", "c-key"])
            #expect(try context.fetch(FetchDescriptor<Agency>()).first?.journeys.map(\.title) == ["b-sales"])
        }
    }

    @Test func aRelationshipSetBeforeSuperInitStopsTheProgram() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = EarlyJourney(agency: Agency(name: "Acme"))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("a relationship of 'EarlyJourney' was set before 'super.init()'"))
    }
}
