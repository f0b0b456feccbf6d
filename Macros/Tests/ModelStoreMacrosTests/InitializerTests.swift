import Foundation
import ModelStoreAdapters
import ModelStoreMacros
import Observation
import Testing

/// A model whose properties have no initial values and types with no obvious zero, which the
/// framework's `init()` still makes.
@Model
final class Voyage {
    var title: String
    var leg: Leg
    var rating: Rating
    var route: Route
    var stops: [String: Int]

    init(title: String, leg: Leg, rating: Rating, route: Route) {
        self.title = title
        self.leg = leg
        self.rating = rating
        self.route = route
        self.stops = [:]
    }
}

/// Not `CaseIterable`; its raw value `0` is a case.
enum Leg: Int, Codable {
    case outbound, inbound
}

/// Not `CaseIterable`, no case for `""`: its placeholder is its first case, by its tag.
enum Rating: String, Codable {
    case good, bad
}

struct Route: Codable, Equatable {
    var from: String
    var to: String
    var distance: Double
    var via: [String]
    var rating: Rating?
}

/// A model that declares its own `init()`, which the framework then uses.
@Model
final class Counter {
    var value: Int
    var created: Date

    init() {
        value = 7
        created = Date(timeIntervalSince1970: 42)
    }
}

/// The class's own initializers, the framework's `init()`, and relationships set in an initializer.
struct InitializerTests {
    @Test func theFrameworksInitializerMakesPlaceholdersThatAFetchOverwrites() throws {
        let placeholder = Voyage()
        #expect(placeholder.title == "" && placeholder.leg == .outbound && placeholder.stops.isEmpty)
        #expect(placeholder.route == Route(from: "", to: "", distance: 0, via: [], rating: nil))

        let container = try ModelContainer(for: Voyage.self, url: "memory:")
        let context = ModelContext(container)
        let route = Route(from: "Oslo", to: "Bergen", distance: 463, via: ["Finse"], rating: .good)
        context.insert(Voyage(title: "Rail", leg: .inbound, rating: .bad, route: route))
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Voyage>())
        #expect(fetched.map(\.title) == ["Rail"])
        #expect(fetched.first?.leg == .inbound && fetched.first?.rating == .bad && fetched.first?.route == route)
    }

    @Test func aModelsOwnInitWithoutArgumentsIsTheOneTheFrameworkUses() throws {
        let container = try ModelContainer(for: Counter.self, url: "memory:")
        let context = ModelContext(container)
        let counter = Counter()
        counter.value = 9
        context.insert(counter)
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<Counter>())
        #expect(fetched.map(\.value) == [9])
        #expect(container.schema.entity(named: "Counter")?.attribute(named: "value")?.defaultValue == .int(7))
    }

    @Test func relationshipsAnInitializerSetReachTheirInversesAsItReturns() {
        let passport = Item("Passport")
        let lisbon = Destination("Lisbon")
        let trip = Trip(name: "Spring", start: .now, destination: lisbon, items: [passport])
        // The related models see the trip before anything reads the trip itself.
        #expect(passport.trip === trip)
        #expect(lisbon.trips.count == 1 && lisbon.trips.first === trip)
        #expect(trip.items.map(\.title) == ["Passport"])
    }

    @Test func aToOneSetInAnInitializerIsInTheInverseToManyAtOnce() {
        // SwiftData's School and Student, whose inverse neither side names.
        let school = School(name: "Hilltop")
        let student = Student(name: "Ada", school: school)
        #expect(school.students.contains(student))
        let pupils = [Student(name: "Bo"), Student(name: "Cy")]
        let other = School(name: "Riverside", students: pupils)
        #expect(pupils.map { $0.school === other } == [true, true])
    }

    @Test func anInitializerThatThrowsLinksOnTheModelsFirstUse() throws {
        let club = Club(name: "Chess")
        let pass = try Pass(number: 7, club: club)
        // A throwing initializer cannot read `self` on every way out, so it leaves the link to the
        // model's first use.
        #expect(club.passes.isEmpty)
        #expect(pass.number == 7)
        #expect(club.passes.count == 1 && club.passes.first === pass)
        #expect(throws: PassError.self) { try Pass(number: -1, club: club) }
        #expect(club.passes.count == 1)
    }

    @Test func insertingTheModelAnInitializerFilledLinksAndSavesBothSides() throws {
        let container = try ModelContainer(for: Trip.self, Item.self, Destination.self, url: "memory:")
        let context = ModelContext(container)
        let socks = Item("Socks")
        context.insert(Trip(name: "Autumn", start: .now, items: [socks]))
        try context.save()
        let items = try ModelContext(container).fetch(FetchDescriptor<Item>())
        #expect(items.map { $0.trip?.name } == ["Autumn"])
    }

    @Test func settingARelationshipAfterInitKeepsTheInverseInStep() {
        let trip = Trip(name: "Winter", start: .now)
        let boots = Item("Boots")
        boots.trip = trip
        #expect(trip.items.map(\.title) == ["Boots"])
        trip.items = []
        #expect(boots.trip == nil)
    }

    @Test func propertiesAreObservable() {
        let trip = Trip(name: "Summer", start: .now)
        let changed = Locked(false)
        withObservationTracking {
            _ = trip.budget
        } onChange: {
            changed.set(true)
        }
        trip.budget = 1200
        #expect(changed.value)
        let transientChanged = Locked(false)
        withObservationTracking {
            _ = trip.isExpanded
        } onChange: {
            transientChanged.set(true)
        }
        trip.isExpanded = true
        #expect(transientChanged.value)
    }
}

/// A model whose initializer throws, and which sets a relationship before it can throw.
@Model
final class Pass {
    var number: Int
    var club: Club?

    init(number: Int, club: Club) throws {
        self.club = club
        guard number >= 0 else { throw PassError() }
        self.number = number
    }
}

@Model
final class Club {
    var name: String
    var passes: [Pass] = []

    init(name: String) { self.name = name }
}

struct PassError: Error {}

/// A flag an observation's `onChange` sets from any thread.
final class Locked<Value: Sendable>: @unchecked Sendable {
    // Safety: every access holds the lock.
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value { lock.withLock { stored } }
    func set(_ value: Value) { lock.withLock { stored = value } }
}

/// A model with a property of a type no placeholder can be made for: an enum with payloads.
@Model
final class Sketch {
    var shape: Shape

    init(shape: Shape) { self.shape = shape }
}

enum Shape: Codable {
    case circle(radius: Double)
    case square(side: Double)
}

/// What a property without an initial value and without a placeholder does.
struct PlaceholderFailureTests {
    @Test func aTypeWithoutAPlaceholderStopsTheProgramNamingThePropertyAndTheFix() async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Sketch()
        }
        let message = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(message.contains("'Sketch.shape' has no initial value"))
        #expect(message.contains("give 'shape' an initial value in its declaration"))
    }

    @Test func theClassesOwnInitializerNeedsNoPlaceholder() {
        #expect(Sketch(shape: .square(side: 2)).shape.isSquare)
    }
}

extension Shape {
    var isSquare: Bool {
        if case .square = self { return true }
        return false
    }
}
