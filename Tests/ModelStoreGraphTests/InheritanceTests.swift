import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreAppendLog
import ModelStoreInMemory
import ModelStoreJSONFile
import Testing

/// The root of a three-level class hierarchy: every vehicle has a name and a garage.
class Vehicle: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var wheels: Int = 4
    @Relationship var garage: Garage?

    /// Not stored: computed from a stored property.
    var loudName: String { name.uppercased() }

    let persistentBackingData = BackingData()
    required init() {}
}

/// A vehicle with seats.
final class Car: Vehicle {
    @Attribute var seats: Int = 5

    convenience init(_ name: String, seats: Int) {
        self.init()
        self.name = name
        self.seats = seats
    }
}

/// A vehicle that carries freight; tow trucks are trucks.
class Truck: Vehicle {
    @Attribute var payload: Double = 0
    @Attribute var cargo: [String] = []

    convenience init(_ name: String, payload: Double) {
        self.init()
        self.name = name
        self.wheels = 6
        self.payload = payload
    }
}

/// A truck with a hook.
final class TowTruck: Truck {
    @Attribute var hookRating: Int = 0
}

/// A garage whose vehicles are of any class of the hierarchy.
final class Garage: PersistentModel {
    @Attribute var city: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Vehicle.garage) var vehicles: [Vehicle] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ city: String) {
        self.init()
        self.city = city
    }
}

/// Model inheritance (one entity per hierarchy, a class attribute per model) in every built-in store.
@Suite struct InheritanceTests {
    static let types: [any PersistentModel.Type] = [Vehicle.self, Car.self, Truck.self, TowTruck.self, Garage.self]

    /// Inserts one model of each class in a garage.
    func seed(_ context: ModelContext) throws {
        let garage = Garage("Oslo")
        context.insert(garage)
        let plain = Vehicle()
        plain.name = "cart"
        plain.wheels = 2
        let tow = TowTruck()
        tow.name = "hook"
        tow.payload = 2.5
        tow.hookRating = 9
        tow.cargo = ["chains"]
        garage.vehicles = [plain, Car("mini", seats: 4), Truck("lorry", payload: 12), tow]
        try context.save()
    }

    @Test func theSchemaStoresTheHierarchyInTheRootsEntity() throws {
        let schema = Schema(Self.types)
        try schema.validate()
        #expect(schema.entities.map(\.name) == ["Vehicle", "Garage"])
        let entity = try #require(schema.entity(for: TowTruck.self))
        #expect(entity.name == "Vehicle")
        #expect(entity.classes.map(\.name) == ["Vehicle", "Car", "Truck", "TowTruck"])
        #expect(entity.classes.map(\.superclassName) == [nil, "Vehicle", "Vehicle", "Truck"])
        #expect(
            entity.classes.map(\.ownPropertyNames) == [
                ["name", "wheels", "garage"], ["seats"], ["payload", "cargo"], ["hookRating"],
            ])
        #expect(entity.classAttribute?.name == Schema.Entity.classAttributeName)
        // Properties only subclasses declare are optional in the shared entity.
        #expect(entity.attribute(named: "seats")?.valueType == .optional(.integer(bits: 64, signed: true)))
        #expect(entity.attribute(named: "wheels")?.isOptional == false)
        #expect(entity.classNames(inheritingFrom: "Truck") == ["Truck", "TowTruck"])
        #expect(entity.indices.contains([Schema.Entity.classAttributeName]))
        // The stored description records the classes, and a schema read back from it keeps them.
        let description = schema.storedDescription
        let reread = try Schema(description)
        #expect(reread.entity(named: "Vehicle")?.classes.map(\.name) == ["Vehicle", "Car", "Truck", "TowTruck"])
        #expect(reread.entity(named: "Vehicle")?.classAttribute != nil)
    }

    /// As in SwiftData, registering a subclass registers its superclasses; a class's subclasses are
    /// registered by listing them (Swift cannot enumerate a class's subclasses).
    @Test func registeringASubclassRegistersItsSuperclasses() throws {
        let schema = Schema([TowTruck.self, Garage.self])
        try schema.validate()
        let entity = try #require(schema.entity(named: "Vehicle"))
        #expect(entity.classes.map(\.name) == ["Vehicle", "Truck", "TowTruck"])
        #expect(
            entity.classes.map(\.ownPropertyNames) == [
                ["name", "wheels", "garage"], ["payload", "cargo"], ["hookRating"],
            ])
        #expect(
            Schema([Car.self]).entity(named: "Vehicle")?.classes.map(\.name) == ["Vehicle", "Car"])
    }

    @Test(arguments: StoreKind.allCases)
    func historyNamesTheClassOfADeletedModel(_ kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: Self.types)
        try seed(ModelContext(store.container))
        let context = ModelContext(store.container)
        let tow = try #require(try context.fetch(FetchDescriptor<TowTruck>()).first)
        context.delete(tow)
        try context.save()
        let transactions = try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        func recordedClass<Deletion: HistoryDelete>(_ deletion: Deletion) -> StoreValue? {
            deletion.tombstone[Schema.Entity.classAttributeName]
        }
        let tombstones = transactions.flatMap(\.changes).compactMap { change -> String? in
            guard case .delete(let deletion) = change, case .string(let name)? = recordedClass(deletion) else {
                return nil
            }
            return name
        }
        #expect(tombstones == ["TowTruck"])
    }

    @Test func theJSONFileRecordsTheClassesInItsHeader() throws {
        let store = try StoreUnderTest(.json, types: Self.types)
        try seed(ModelContext(store.container))
        let recorded = try JSONFileStore.storedSchema(at: store.directory.appendingPathComponent("store.json"))
        #expect(recorded == Schema(Self.types).storedDescription)
        #expect(recorded.entities.first?.classes?.map(\.name) == ["Vehicle", "Car", "Truck", "TowTruck"])
    }

    @Test func aSubclassTheSchemaDoesNotListIsRefusedByName() throws {
        let container = try ModelContainer(
            for: Schema([Vehicle.self, Car.self, Garage.self]), configurations: [InMemoryStoreConfiguration.inMemory()])
        let context = ModelContext(container)
        let truck = Truck("lorry", payload: 1)
        context.insert(truck)
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.message.contains("Truck'") && error.message.contains("that the container's schema does not list"))
        #expect(error.remedy?.contains("Truck.self") == true)
    }

    @Test(arguments: StoreKind.allCases)
    func aFetchOfTheRootReturnsEveryClassAsItself(_ kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: Self.types)
        try seed(ModelContext(store.container))
        let context = ModelContext(try store.reopen())
        let all = try context.fetch(FetchDescriptor<Vehicle>(sortBy: [SortDescriptor(\.name)]))
        #expect(all.map(\.name) == ["cart", "hook", "lorry", "mini"])
        #expect(all.map { String(describing: type(of: $0)) } == ["Vehicle", "TowTruck", "Truck", "Car"])
        let tow = try #require(all[1] as? TowTruck)
        #expect(tow.hookRating == 9 && tow.payload == 2.5 && tow.cargo == ["chains"] && tow.wheels == 4)
        #expect((all[3] as? Car)?.seats == 4)
        #expect(all.allSatisfy { $0.garage?.city == "Oslo" })
        let garage = try #require(try context.fetch(FetchDescriptor<Garage>()).first)
        #expect(garage.vehicles.count == 4)
        #expect(garage.vehicles.contains { $0 is TowTruck })
        #expect(try context.fetchCount(FetchDescriptor<Vehicle>()) == 4)
    }

    @Test(arguments: StoreKind.allCases)
    func aFetchOfASubclassReturnsItAndItsSubclassesOnly(_ kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: Self.types)
        try seed(ModelContext(store.container))
        let context = ModelContext(try store.reopen())
        let trucks = try context.fetch(FetchDescriptor<Truck>(sortBy: [SortDescriptor(\.payload, order: .reverse)]))
        #expect(trucks.map(\.name) == ["lorry", "hook"])
        #expect(try context.fetchCount(FetchDescriptor<Truck>()) == 2)
        #expect(try context.fetch(FetchDescriptor<TowTruck>()).map(\.hookRating) == [9])
        #expect(try context.fetch(FetchDescriptor<Car>()).map(\.seats) == [4])
        var limited = FetchDescriptor<Truck>(sortBy: [SortDescriptor(\.name)])
        limited.fetchLimit = 1
        #expect(try context.fetch(limited).map(\.name) == ["hook"])
        let heavy = try context.fetch(FetchDescriptor<Truck>(predicate: #Predicate { $0.payload > 5 }))
        #expect(heavy.map(\.name) == ["lorry"])
        // A subclass's key path to an inherited property filters by it; one to a computed property
        // that reads it is not taken for it.
        #expect(try context.fetch(FetchDescriptor<Car>(predicate: #Predicate { $0.name == "mini" })).count == 1)
        let computed = #Predicate<Car> { $0.loudName == "MINI" }
        let error = try #require(throws: DataStoreError.self) {
            try context.fetch(FetchDescriptor(predicate: computed))
        }
        #expect(error.code == .invalidPredicate)
    }

    @Test(arguments: StoreKind.allCases)
    func aTypeTestInAPredicateRunsInTheStore(_ kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: Self.types)
        try seed(ModelContext(store.container))
        let context = ModelContext(try store.reopen())
        let predicate = #Predicate<Vehicle> { $0 is Truck }
        let trucks = try context.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.name)]))
        #expect(trucks.map(\.name) == ["hook", "lorry"])
        let explanation = try context.explain(FetchDescriptor(predicate: predicate))
        #expect("\(explanation)".contains(Schema.Entity.classAttributeName))
        let notTrucks = try context.fetch(
            FetchDescriptor<Vehicle>(predicate: #Predicate { !($0 is Truck) && $0.wheels > 0 }))
        #expect(Set(notTrucks.map(\.name)) == ["cart", "mini"])
    }

    @Test(arguments: StoreKind.allCases)
    func castsInPredicatesReadASubclasssProperties(_ kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: Self.types)
        try seed(ModelContext(store.container))
        let context = ModelContext(try store.reopen())
        func names(_ predicate: Predicate<Vehicle>) throws -> [String] {
            try context.fetch(FetchDescriptor(predicate: predicate, sortBy: [SortDescriptor(\.name)])).map(\.name)
        }
        func runsInTheStore(_ predicate: Predicate<Vehicle>) throws -> Bool {
            !(try context.explain(FetchDescriptor(predicate: predicate))).evaluatesPredicateOnModels
        }
        // A subclass's own attribute through a cast: in the store, `nil` for every other class.
        let heavy = #Predicate<Vehicle> { ($0 as? Truck)?.payload == 12 }
        #expect(try names(heavy) == ["lorry"])
        #expect(try runsInTheStore(heavy))
        let hooked = #Predicate<Vehicle> { ($0 as? TowTruck)?.hookRating == 9 }
        #expect(try names(hooked) == ["hook"])
        #expect(try runsInTheStore(hooked))
        let notTrucks = #Predicate<Vehicle> { ($0 as? Truck)?.payload == nil }
        #expect(try names(notTrucks) == ["cart", "mini"])
        #expect(try runsInTheStore(notTrucks))
        // An array attribute of the subclass through a cast, and its negation (true for other classes).
        let chains = #Predicate<Vehicle> { ($0 as? Truck)?.cargo.contains("chains") == true }
        #expect(try names(chains) == ["hook"])
        #expect(try runsInTheStore(chains))
        let noChains = #Predicate<Vehicle> { ($0 as? Truck)?.cargo.contains("chains") != true }
        #expect(try names(noChains) == ["cart", "lorry", "mini"])
        #expect(try runsInTheStore(noChains))
        // Wherever it runs, the result is Swift's: the root's property through a cast (stored for
        // every class, so it runs on models).
        let rootThroughCast = #Predicate<Vehicle> { ($0 as? Car)?.name == "mini" }
        #expect(try names(rootThroughCast) == ["mini"])
        #expect(try !runsInTheStore(rootThroughCast))
    }

    @Test(arguments: StoreKind.allCases)
    func editsAndDeletesOfSubclassModelsPersist(_ kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: Self.types)
        try seed(ModelContext(store.container))
        let context = ModelContext(try store.reopen())
        let tow = try #require(try context.fetch(FetchDescriptor<TowTruck>()).first)
        tow.hookRating = 11
        tow.name = "hook2"
        let car = try #require(try context.fetch(FetchDescriptor<Car>()).first)
        context.delete(car)
        try context.save()
        let again = ModelContext(try store.reopen())
        let names = try again.fetch(FetchDescriptor<Vehicle>(sortBy: [SortDescriptor(\.name)])).map(\.name)
        #expect(names == ["cart", "hook2", "lorry"])
        #expect(try again.fetch(FetchDescriptor<TowTruck>()).first?.hookRating == 11)
        // Uniqueness declared on the root holds across classes: as in SwiftData, inserting a model
        // with a taken value updates the stored one (here a truck) with the root's attributes.
        let clash = Car("lorry", seats: 2)
        clash.wheels = 3
        again.insert(clash)
        try again.save()
        let checked = ModelContext(try store.reopen())
        let lorries = try checked.fetch(FetchDescriptor<Vehicle>(predicate: #Predicate { $0.name == "lorry" }))
        #expect(lorries.count == 1)
        #expect(lorries.first is Truck)
        #expect(lorries.first?.wheels == 3)
        // Deleting the garage cascades to vehicles of every class.
        let garage = try #require(try checked.fetch(FetchDescriptor<Garage>()).first)
        checked.delete(garage)
        try checked.save()
        #expect(try ModelContext(try store.reopen()).fetchCount(FetchDescriptor<Vehicle>()) == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func batchDeletesAndInsertsKeepToTheirClass(_ kind: StoreKind) throws {
        let store = try StoreUnderTest(kind, types: Self.types)
        try seed(ModelContext(store.container))
        let context = ModelContext(try store.reopen())
        // Without subclasses: the plain truck goes, the tow truck stays.
        try context.delete(model: Truck.self, includeSubclasses: false)
        #expect(try context.fetch(FetchDescriptor<Truck>()).map(\.name) == ["hook"])
        // With them (the default), a delete of a subclass leaves its siblings and its superclass.
        try context.delete(model: Truck.self, where: #Predicate { $0.payload >= 0 })
        #expect(
            try context.fetch(FetchDescriptor<Vehicle>(sortBy: [SortDescriptor(\.name)])).map(\.name) == [
                "cart", "mini",
            ])
        // A batch insert of a subclass records its class and its own initial values.
        try context.insert(
            Car.self, rows: [[.set(\.name, to: "van")], [.set(\.name, to: "cab"), .set(\.seats, to: 7)]])
        let again = ModelContext(try store.reopen())
        let cars = try again.fetch(FetchDescriptor<Car>(sortBy: [SortDescriptor(\.name)]))
        #expect(cars.map(\.name) == ["cab", "mini", "van"])
        #expect(cars.map(\.seats) == [7, 4, 5])
    }

    @Test(arguments: StoreKind.allCases.filter(\.isDurable))
    func addingSubclassesToAStoredEntityIsALightweightMigration(_ kind: StoreKind) throws {
        // A store written when the schema had the root class alone.
        let flat = try StoreUnderTest(kind, types: [Vehicle.self, Garage.self])
        let context = ModelContext(flat.container)
        let old = Vehicle()
        old.name = "old"
        context.insert(old)
        try context.save()
        // Opened with the subclasses: the old models read as the root class, new ones keep theirs.
        for store in flat.container.stores { (store as? AppendLogStore)?.close() }
        let configuration = kind.configuration(in: flat.directory)
        let migrated = ModelContext(try ModelContainer(for: Schema(Self.types), configurations: [configuration]))
        migrated.insert(Car("new", seats: 3))
        try migrated.save()
        for store in migrated.container.stores { (store as? AppendLogStore)?.close() }
        let reread = ModelContext(try ModelContainer(for: Schema(Self.types), configurations: [configuration]))
        let all = try reread.fetch(FetchDescriptor<Vehicle>(sortBy: [SortDescriptor(\.name)]))
        #expect(all.map(\.name) == ["new", "old"])
        #expect(all.map { String(describing: type(of: $0)) } == ["Car", "Vehicle"])
    }

    @Test(arguments: StoreKind.allCases.filter(\.isDurable))
    func aStoreOfOtherEntitiesTakesAHierarchyAsANewEntity(_ kind: StoreKind) throws {
        let first = try StoreUnderTest(kind, types: [Appliance.self, Kettle.self])
        let kettle = Kettle()
        kettle.watts = 1
        let context = ModelContext(first.container)
        context.insert(kettle)
        try context.save()
        for store in first.container.stores { (store as? AppendLogStore)?.close() }
        let configuration = kind.configuration(in: first.directory)
        let widened = ModelContext(
            try ModelContainer(
                for: Schema(Self.types + [Appliance.self, Kettle.self]), configurations: [configuration]))
        try seed(widened)
        #expect(try widened.fetchCount(FetchDescriptor<Vehicle>()) == 4)
        #expect(try widened.fetch(FetchDescriptor<Kettle>()).map(\.watts) == [1])
    }

    @MainActor @Test func aLiveQueryOfASubclassFollowsOnlyItsClasses() async throws {
        let container = try ModelContainer(
            for: Schema(Self.types), configurations: [InMemoryStoreConfiguration.inMemory()])
        let query = LiveQuery(FetchDescriptor<Truck>(sortBy: [SortDescriptor(\.name)]), in: container.mainContext)
        let writer = ModelContext(container)
        try seed(writer)
        for _ in 0..<2_000 where query.fetchCount < 2 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(query.results.map(\.name) == ["hook", "lorry"])
        // Incremental updates: a new car stays out, a new tow truck comes in as itself.
        let count = query.fetchCount
        writer.insert(Car("zoe", seats: 2))
        let winch = TowTruck()
        winch.name = "winch"
        writer.insert(winch)
        try writer.save()
        for _ in 0..<2_000 where query.fetchCount == count && query.results.count < 3 {
            try await Task.sleep(for: .milliseconds(1))
        }
        for _ in 0..<20 { await Task.yield() }
        query.applyPendingChanges()
        #expect(query.results.map(\.name) == ["hook", "lorry", "winch"])
        #expect(query.results.last is TowTruck)
        #expect(query.error == nil)
    }

    @Test func anAbstractClassIsRecordedAndAModelOfItIsRefused() throws {
        let schema = Schema([Appliance.self, Kettle.self])
        let entity = try #require(schema.entity(for: Appliance.self))
        #expect(entity.classes.map(\.isAbstract) == [true, false])
        #expect(schema.storedDescription.entities[0].classes?.map(\.isAbstract) == [true, nil])
        let context = ModelContext(
            try ModelContainer(for: schema, configurations: [InMemoryStoreConfiguration.inMemory()]))
        context.insert(Appliance())
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.message.contains("'Appliance' is an abstract model class"))
        #expect(error.remedy?.contains("'Kettle'") == true)
        context.rollback()
        let kettle = Kettle()
        kettle.watts = 2_000
        context.insert(kettle)
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Appliance>()).map { ($0 as? Kettle)?.watts } == [2_000])
    }
}

/// An abstract root class: only its subclasses' models are saved.
class Appliance: PersistentModel {
    static var abstractClasses: [any PersistentModel.Type] { [Appliance.self] }
    @Attribute var brand: String = ""

    let persistentBackingData = BackingData()
    required init() {}
}

/// A concrete appliance.
final class Kettle: Appliance {
    @Attribute var watts: Int = 0
}

/// Two versions of a small hierarchy, for migrations: the second adds an attribute to a subclass.
enum FleetV1 {
    class Boat: PersistentModel {
        @Attribute var name: String = ""

        let persistentBackingData = BackingData()
        required init() {}
    }

    final class Yacht: Boat {
        @Attribute var berths: Int = 2
    }
}

/// The second version of the fleet.
enum FleetV2 {
    class Boat: PersistentModel {
        @Attribute var name: String = ""

        let persistentBackingData = BackingData()
        required init() {}
    }

    final class Yacht: Boat {
        @Attribute var berths: Int = 2
        @Attribute var flag: String = "none"
    }
}

/// Lightweight migrations of a hierarchy's entity.
@Suite struct InheritanceMigrationTests {
    @Test(arguments: StoreKind.allCases.filter(\.isDurable))
    func addingAnAttributeToASubclassKeepsItsModels(_ kind: StoreKind) throws {
        let old = try StoreUnderTest(kind, types: [FleetV1.Boat.self, FleetV1.Yacht.self])
        let context = ModelContext(old.container)
        let yacht = FleetV1.Yacht()
        yacht.name = "Wind"
        yacht.berths = 6
        context.insert(yacht)
        let dinghy = FleetV1.Boat()
        dinghy.name = "Dot"
        context.insert(dinghy)
        try context.save()
        for store in old.container.stores { (store as? AppendLogStore)?.close() }

        let configuration = kind.configuration(in: old.directory)
        let container = try ModelContainer(
            for: Schema([FleetV2.Boat.self, FleetV2.Yacht.self]), configurations: [configuration])
        let migrated = ModelContext(container)
        let boats = try migrated.fetch(FetchDescriptor<FleetV2.Boat>(sortBy: [SortDescriptor(\.name)]))
        #expect(boats.map(\.name) == ["Dot", "Wind"])
        let wind = try #require(boats.last as? FleetV2.Yacht)
        #expect(wind.berths == 6)
        // The new attribute reads as the class's initial value until it is set.
        #expect(wind.flag == "none")
        wind.flag = "NO"
        try migrated.save()
        #expect(try ModelContext(container).fetch(FetchDescriptor<FleetV2.Yacht>()).map(\.flag) == ["NO"])
    }
}
