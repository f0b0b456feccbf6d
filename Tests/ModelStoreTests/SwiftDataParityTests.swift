import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// The pattern "Defining models" gives for defaults: the properties hold them, and the convenience
/// initializer's default arguments name the same constants.
private final class PlannedStop: PersistentModel {
    static let defaultPriority = 2
    @Attribute var name: String = ""
    @Attribute var priority: Int = PlannedStop.defaultPriority

    let persistentBackingData = BackingData()
    init() {}

    convenience init(name: String, priority: Int = PlannedStop.defaultPriority) {
        self.init()
        self.name = name
        self.priority = priority
    }
}

struct ModelDefaultsTests {
    @Test func bothInitializersAndAFetchedModelHaveTheOneDefault() throws {
        #expect(PlannedStop().priority == 2)
        #expect(PlannedStop(name: "Rome").priority == 2)
        #expect(PlannedStop(name: "Oslo", priority: 5).priority == 5)

        let container = try ModelContainer(for: PlannedStop.self, configurations: .inMemory())
        let context = ModelContext(container)
        context.insert(PlannedStop())
        context.insert(PlannedStop(name: "Rome"))
        try context.save()
        let fetched = try ModelContext(container).fetch(FetchDescriptor<PlannedStop>(sortBy: [SortDescriptor(\.name)]))
        #expect(fetched.map(\.priority) == [2, 2])
    }
}

/// A relationship declared with every argument in SwiftData's order (the inverse last).
private final class Itinerary: PersistentModel {
    @Attribute var title: String = ""
    @Relationship(
        deleteRule: .cascade, minimumModelCount: 0, maximumModelCount: 2, originalName: "legs", inverse: \Leg.itinerary)
    var stops: [Leg] = []

    let persistentBackingData = BackingData()
    init() {}
}

private final class Leg: PersistentModel {
    @Attribute var city: String = ""
    @Relationship var itinerary: Itinerary?

    let persistentBackingData = BackingData()
    init() {}
}

struct RelationshipArgumentOrderTests {
    @Test func swiftDatasArgumentOrderDeclaresTheSameRelationship() throws {
        let schema = Schema([Itinerary.self])
        let stops = try #require(schema.entity(named: "Itinerary")?.relationships.first { $0.name == "stops" })
        #expect(stops.deleteRule == .cascade)
        #expect(stops.maximumModelCount == 2)
        #expect(stops.originalName == "legs")
        #expect(stops.inverseName == "itinerary")

        let container = try ModelContainer(for: schema, configurations: [.inMemory()])
        let context = ModelContext(container)
        let trip = Itinerary()
        context.insert(trip)
        trip.stops = [Leg(), Leg(), Leg()]
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .relationshipCountViolation)
    }
}

/// SwiftData's untyped `model(for:)`, beside the typed form.
struct UntypedModelLookupTests {
    @Test func theUntypedLookupReturnsTheModelOfTheIdentifiersEntity() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let writer = ModelContext(container)
        let trip = Trip(name: "Lisbon", items: [Item("Passport")])
        writer.insert(trip)
        try writer.save()
        let item = try #require(trip.items.first)
        #expect(try writer.model(for: trip.persistentModelID) === trip, "a registered model comes from the context")

        let reader = ModelContext(container)
        let found = try #require(try reader.model(for: item.persistentModelID))
        #expect((found as? Item)?.title == "Passport")
        #expect(reader.registeredModel(for: item.persistentModelID, as: Item.self) === found as? Item)

        writer.delete(trip)
        try writer.save()
        #expect(try ModelContext(container).model(for: trip.persistentModelID) == nil)
    }
}

/// Another version's model type with the entity name `Trip`, as a migration plan's schemas have.
private enum TripsV0 {
    final class Trip: PersistentModel {
        @Attribute var title: String = ""
        let persistentBackingData = BackingData()
        init() {}
    }
}

/// A model type the container's schema does not have for an entity of the same name is refused
/// with an error, never read or written in the wrong places.
struct ModelTypeOfAnotherVersionTests {
    @Test func fetchingSavingAndBatchesWithAnotherTypeOfTheSameNameThrow() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let context = ModelContext(container)
        context.insert(Trip(name: "Lisbon"))
        try context.save()
        let error = expectError(.notFound) { _ = try context.fetch(FetchDescriptor<TripsV0.Trip>()) }
        #expect(error?.message.contains("two model types share the entity name") == true)
        expectError(.notFound) { try context.delete(model: TripsV0.Trip.self) }
        // `Trip.name` is unique, so the save's upsert step looks at inserted models first: it must
        // refuse the other type before reading it with `Trip`'s layout (which read past the end
        // of the smaller object; found by the address sanitizer).
        #expect(context.duplicateInsertPolicy == .upsert)
        context.insert(TripsV0.Trip())
        let saveError = expectError(.notFound) { try context.save() }
        #expect(saveError?.message.contains("two model types share the entity name") == true)
        context.rollback()
        #expect(try ModelContext(container).fetch(FetchDescriptor<Trip>()).map(\.name) == ["Lisbon"])
    }
}
