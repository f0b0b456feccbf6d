import Foundation
import ModelStoreAdapters
import ModelStoreMacros
import Testing

/// The Trips models in SwiftData's spelling, saved, reopened and fetched through every built-in store.
struct TripStoreTests {
    static let stores = ["memory", "json", "log", "sqlite"]

    private func url(_ store: String, in directory: TemporaryDirectory) -> String {
        directory.storeURLs[Self.stores.firstIndex(of: store)!]
    }

    private func container(_ url: String) throws -> ModelContainer {
        try ModelContainer(for: Trip.self, Item.self, Destination.self, url: url)
    }

    @Test(arguments: stores)
    func modelsSaveReopenAndFetch(store: String) throws {
        let directory = try TemporaryDirectory()
        let url = url(store, in: directory)
        var first: ModelContainer? = try container(url)
        do {
            let context = ModelContext(try #require(first))
            let lisbon = Destination("Lisbon", location: Coordinate(latitude: 38.7, longitude: -9.1))
            let passport = Item("Passport")
            let socks = Item("Socks", quantity: 4)
            let trip = Trip(
                name: "Spring", start: Date(timeIntervalSince1970: 1_000), budget: 900, kind: .business,
                destination: lisbon, items: [passport, socks])
            trip.photo = Data([1, 2, 3])
            trip.isExpanded = true
            context.insert(trip)
            context.insert(Trip(name: "Autumn", start: Date(timeIntervalSince1970: 5_000), budget: 300))
            try context.save()
            #expect(passport.trip === trip, "the initializer's relationship reached its inverse")
            #expect(lisbon.trips.map(\.name) == ["Spring"])
        }
        // memory: keeps nothing across containers, so it is read through the same container; the
        // others are closed and opened again.
        if store != "memory" { first = nil }
        let reopened = try first ?? container(url)
        let context = ModelContext(reopened)
        let trips = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.start)]))
        #expect(trips.map(\.name) == ["Spring", "Autumn"])
        let spring = try #require(trips.first)
        #expect(spring.budget == 900 && spring.kind == .business && spring.photo == Data([1, 2, 3]))
        #expect(spring.isExpanded == false, "a transient property is not stored")
        #expect(spring.items.map(\.title).sorted() == ["Passport", "Socks"])
        #expect(spring.items.allSatisfy { $0.trip === spring })
        #expect(spring.destination?.city == "Lisbon")
        #expect(spring.destination?.location == Coordinate(latitude: 38.7, longitude: -9.1))

        let cheap = try context.fetch(
            FetchDescriptor<Trip>(
                predicate: #Predicate { $0.budget < 500 && !$0.isDone }, sortBy: [SortDescriptor(\.name)]))
        #expect(cheap.map(\.name) == ["Autumn"])
        let packed = try context.fetch(
            FetchDescriptor<Item>(
                predicate: #Predicate { $0.trip?.name == "Spring" },
                sortBy: [SortDescriptor(\.quantity, order: .reverse)]))
        #expect(packed.map(\.title) == ["Socks", "Passport"])
    }

    @Test(arguments: stores)
    func deleteRulesCascadeToItemsAndNullifyTheDestination(store: String) throws {
        let directory = try TemporaryDirectory()
        let container = try container(url(store, in: directory))
        let context = ModelContext(container)
        let rome = Destination("Rome")
        context.insert(Trip(name: "Easter", start: .now, destination: rome, items: [Item("Map"), Item("Hat")]))
        context.insert(Trip(name: "June", start: .now, destination: rome))
        try context.save()

        let easter = try #require(
            try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "Easter" })).first)
        context.delete(easter)
        try context.save()

        let fresh = ModelContext(container)
        #expect(try fresh.fetchCount(FetchDescriptor<Item>()) == 0, "the cascade deleted the trip's items")
        let destinations = try fresh.fetch(FetchDescriptor<Destination>())
        #expect(destinations.map(\.city) == ["Rome"], "nullify kept the destination")
        #expect(destinations.first?.trips.map(\.name) == ["June"])
    }

    @Test(arguments: stores)
    func aSecondTripWithAUniqueNameUpdatesTheFirst(store: String) throws {
        let directory = try TemporaryDirectory()
        let container = try container(url(store, in: directory))
        let context = ModelContext(container)
        context.insert(Trip(name: "Oslo", start: Date(timeIntervalSince1970: 0), budget: 100))
        try context.save()
        context.insert(Trip(name: "Oslo", start: Date(timeIntervalSince1970: 0), budget: 250))
        try context.save()
        let trips = try ModelContext(container).fetch(FetchDescriptor<Trip>())
        #expect(trips.map(\.budget) == [250], "SwiftData's upsert on a unique attribute")

        context.duplicateInsertPolicy = .error
        context.insert(Trip(name: "Oslo", start: Date(timeIntervalSince1970: 0), budget: 1))
        #expect(throws: DataStoreError.self) { try context.save() }
    }

    @Test(arguments: stores)
    func relationshipsSetAfterInsertAreSaved(store: String) throws {
        let directory = try TemporaryDirectory()
        let container = try container(url(store, in: directory))
        let context = ModelContext(container)
        let trip = Trip(name: "Ski", start: .now)
        context.insert(trip)
        try context.save()
        let skis = Item("Skis", quantity: 2)
        skis.trip = trip
        trip.destination = Destination("Chamonix")
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Trip>())
        #expect(fetched.first?.items.map(\.title) == ["Skis"])
        #expect(fetched.first?.destination?.trips.map(\.name) == ["Ski"])
    }

    @Test(arguments: stores)
    func localizedStandardContainsFindsTextIgnoringCaseAndDiacritics(store: String) throws {
        let directory = try TemporaryDirectory()
        let container = try container(url(store, in: directory))
        let context = ModelContext(container)
        context.insert(Trip(name: "Musée d'Orsay", start: .now, budget: 50))
        context.insert(Trip(name: "MUSEUM night", start: .now, budget: 500))
        context.insert(Trip(name: "Beach", start: .now, budget: 500))
        try context.save()
        func names(containing text: String) throws -> [String] {
            try ModelContext(container).fetch(
                FetchDescriptor<Trip>(
                    predicate: #Predicate { $0.name.localizedStandardContains(text) }, sortBy: [SortDescriptor(\.name)])
            ).map(\.name)
        }
        #expect(try names(containing: "musee") == ["Musée d'Orsay"])
        #expect(try names(containing: "muse") == ["MUSEUM night", "Musée d'Orsay"])
        #expect(try names(containing: "Orsay") == ["Musée d'Orsay"])
        let expensiveOnes = FetchDescriptor<Trip>(
            predicate: #Predicate { $0.budget > 100 && $0.name.localizedStandardContains("MUSE") })
        let expensive = try ModelContext(container).fetch(expensiveOnes)
        let plan = try ModelContext(container).explain(expensiveOnes).description
        #expect(plan.contains("[store] $0.budget > 100.0"), "the budget test runs in the store: \(plan)")
        #expect(plan.contains("[models] <StringLocalizedStandardContains>"), "the search runs in memory: \(plan)")
        #expect(expensive.map(\.name) == ["MUSEUM night"])
    }
}
