import Foundation
import ModelStoreAdapters
import ModelStoreMacros
import Testing

/// The root of a `@Model` class hierarchy in SwiftData's spelling: not `final`, a unique name, a
/// relationship with an inverse and an initializer of its own.
@Model
class Cruise {
    #Unique<Cruise>([\.name])

    var name: String
    var days: Int = 1
    @Relationship(inverse: \Harbour.voyages) var port: Harbour?

    init(name: String, days: Int = 1, port: Harbour? = nil) {
        self.name = name
        self.days = days
        self.port = port
    }
}

/// A subclass with properties and a relationship of its own, and a designated initializer that
/// calls its superclass's.
@Model
class BusinessCruise: Cruise {
    var perks: [String] = []
    var budget: Double
    @Relationship(inverse: \Charterer.voyages) var client: Charterer?

    init(name: String, budget: Double, client: Charterer? = nil) {
        self.budget = budget
        self.client = client
        super.init(name: name, days: 2)
    }
}

/// A final subclass of a subclass.
@Model
final class CharterCruise: BusinessCruise {
    var vessel: String

    init(name: String, vessel: String) {
        self.vessel = vessel
        super.init(name: name, budget: 5000)
        perks = ["crew"]
    }
}

/// A subclass that declares no initializer: it inherits its superclass's.
@Model
final class ShoreTrip: Cruise {
    var guide: String = "none"
}

@Model
final class Harbour {
    var city: String
    var voyages: [Cruise] = []

    init(city: String) {
        self.city = city
    }
}

@Model
final class Charterer {
    var name: String
    var voyages: [BusinessCruise] = []

    init(name: String) {
        self.name = name
    }
}

/// An abstract root, declared with `abstractClasses` in the `@Model` class itself.
@Model
class Vessel {
    static var abstractClasses: [any PersistentModel.Type] { [Vessel.self] }

    var name: String = ""
}

@Model
final class Ferry: Vessel {
    var cars: Int = 0
}

/// `@Model` class hierarchies stored and read back on every built-in store.
struct InheritanceSpellingTests {
    static let schema = Schema([
        Cruise.self, BusinessCruise.self, CharterCruise.self, ShoreTrip.self, Harbour.self, Charterer.self,
    ])

    @Test func theSchemaHasOneEntityPerHierarchy() throws {
        let entity = try #require(Self.schema.entity(named: "Cruise"))
        #expect(entity.classes.map(\.name) == ["Cruise", "BusinessCruise", "ShoreTrip", "CharterCruise"])
        #expect(entity.classes.map(\.superclassName) == [nil, "Cruise", "Cruise", "BusinessCruise"])
        #expect(entity.classes.map { $0.ownPropertyNames.sorted() }[1] == ["budget", "client", "perks"])
        #expect(entity.uniquenessConstraints == [["name"]])
    }

    @Test func initializersSetEveryClassesPropertiesAndLinkTheirInverses() {
        let port = Harbour(city: "Bergen")
        let client = Charterer(name: "Acme")
        let business = BusinessCruise(name: "fair", budget: 900, client: client)
        let charter = CharterCruise(name: "fjord", vessel: "Skarv")
        let excursion = ShoreTrip(name: "hike", port: port)
        #expect(business.days == 2 && business.budget == 900 && business.perks.isEmpty)
        #expect(charter.perks == ["crew"] && charter.budget == 5000 && charter.vessel == "Skarv")
        #expect(excursion.guide == "none" && excursion.days == 1)
        // Each initializer links what it set as it returns: the subclass's relationship too, before
        // anything reads the new model.
        #expect(client.voyages.map(\.name) == ["fair"] && client.voyages.first === business)
        #expect(port.voyages.map(\.name) == ["hike"] && port.voyages.first === excursion)
        #expect(business.client === client && excursion.port === port)
    }

    @Test func theFrameworkMakesEachClassWithItsPlaceholders() {
        let charter = CharterCruise()
        #expect(charter.vessel == "" && charter.budget == 0 && charter.name == "" && charter.days == 1)
    }

    @Test(arguments: 0..<4)
    func eachClassIsStoredAndFetchedAsItself(store: Int) throws {
        try TemporaryDirectory().writeThenReopen(store: store, schema: Self.schema) { container in
            let context = ModelContext(container)
            let port = Harbour(city: "Bergen")
            let client = Charterer(name: "Acme")
            context.insert(port)
            context.insert(client)
            context.insert(Cruise(name: "a-plain", days: 3, port: port))
            let business = BusinessCruise(name: "b-fair", budget: 900, client: client)
            business.perks = ["lounge"]
            context.insert(business)
            context.insert(CharterCruise(name: "c-fjord", vessel: "Skarv"))
            context.insert(ShoreTrip(name: "d-hike", port: port))
            try context.save()
        } read: { context in
            let all = try context.fetch(FetchDescriptor<Cruise>(sortBy: [SortDescriptor(\.name)]))
            #expect(all.map(\.name) == ["a-plain", "b-fair", "c-fjord", "d-hike"])
            #expect(all.map { "\(type(of: $0))" } == ["Cruise", "BusinessCruise", "CharterCruise", "ShoreTrip"])
            let business = try #require(all[1] as? BusinessCruise)
            #expect(business.perks == ["lounge"] && business.budget == 900 && business.client?.name == "Acme")
            let charter = try #require(all[2] as? CharterCruise)
            #expect(charter.vessel == "Skarv" && charter.perks == ["crew"] && charter.days == 2)
            #expect((all[3] as? ShoreTrip)?.port?.city == "Bergen" && all[0].port?.city == "Bergen")

            let subclass = try context.fetch(FetchDescriptor<BusinessCruise>(sortBy: [SortDescriptor(\.name)]))
            #expect(subclass.map(\.name) == ["b-fair", "c-fjord"])
            #expect(try context.fetch(FetchDescriptor<CharterCruise>()).map(\.vessel) == ["Skarv"])
            let isBusiness = try context.fetch(
                FetchDescriptor<Cruise>(
                    predicate: #Predicate { $0 is BusinessCruise }, sortBy: [SortDescriptor(\.name)]))
            #expect(isBusiness.map(\.name) == ["b-fair", "c-fjord"])
            let port = try #require(try context.fetch(FetchDescriptor<Harbour>()).first)
            #expect(port.voyages.map(\.name).sorted() == ["a-plain", "d-hike"])
            #expect(try context.fetch(FetchDescriptor<Charterer>()).first?.voyages.map(\.name) == ["b-fair"])
        }
    }

    @Test func aRootDeclaresItsAbstractClasses() throws {
        let schema = Schema([Vessel.self, Ferry.self])
        #expect(schema.entity(named: "Vessel")?.classes.map(\.isAbstract) == [true, false])
        let container = try ModelContainer(for: schema, url: "memory:")
        let context = ModelContext(container)
        let ferry = Ferry()
        ferry.name = "Bastø"
        ferry.cars = 200
        context.insert(ferry)
        try context.save()
        let vessels = try ModelContext(container).fetch(FetchDescriptor<Vessel>())
        #expect(vessels.map(\.name) == ["Bastø"] && (vessels.first as? Ferry)?.cars == 200)
    }
}
