import Foundation
import ModelStoreAdapters
import ModelStoreMacros
import Testing

/// A model whose stored properties have `willSet` and `didSet`, as SwiftData apps write them.
@Model
final class Thermostat {
    var room: String {
        // Keeps a search key the store can filter on, the usual use of `didSet` in a model.
        didSet { roomKey = room.lowercased() }
    }
    var roomKey = ""
    var target: Double = 20 {
        willSet { events.append("will set \(target) to \(newValue)") }
        didSet { events.append("did set \(oldValue) to \(target)") }
    }
    var mode: String = "heat" {
        willSet(next) {
            guard next != mode else { return }
            events.append("mode \(mode) to \(next)")
        }
        didSet(previous) { changes += previous == mode ? 0 : 1 }
    }
    var changes = 0
    var label: String = "" {
        // Sets its own property: stored without calling the observer again, as for a stored property.
        didSet {
            label = label.trimmingCharacters(in: .whitespaces)
            events.append("label '\(label)'")
        }
    }
    var limit: Int = 0 {
        didSet { if limit > 100 { self.limit = 100 } }
    }
    var zone: Zone? {
        didSet { events.append("zone \(zone?.name ?? "none")") }
    }
    @Transient var events: [String] = []
    @Transient var isOpen = false {
        didSet { events.append(isOpen ? "opened" : "closed") }
    }

    init(room: String) {
        self.room = room
    }
}

@Model
final class Zone {
    var name: String
    @Relationship(inverse: \Thermostat.zone) var thermostats: [Thermostat] = []

    init(name: String) {
        self.name = name
    }
}

/// `willSet` and `didSet` on `@Model` properties: called with the old and new value around the
/// store, and the value is still stored.
struct ObserverTests {
    @Test func observersRunAroundTheStoreWithTheOldAndNewValue() {
        let thermostat = Thermostat(room: "Hall")
        #expect(thermostat.events.isEmpty && thermostat.roomKey == "", "an initializer's assignment calls no observer")
        thermostat.target = 22.5
        #expect(thermostat.events == ["will set 20.0 to 22.5", "did set 20.0 to 22.5"])
        #expect(thermostat.target == 22.5)
        thermostat.room = "Kitchen"
        #expect(thermostat.roomKey == "kitchen" && thermostat.room == "Kitchen")
        thermostat.isOpen = true
        #expect(thermostat.isOpen && thermostat.events.last == "opened", "a transient property's observer runs too")
    }

    @Test func observersWithTheirOwnParameterNamesAndAnEarlyReturn() {
        let thermostat = Thermostat(room: "Hall")
        thermostat.mode = "heat"
        #expect(thermostat.events.isEmpty, "the willSet returned early")
        #expect(thermostat.changes == 0 && thermostat.mode == "heat")
        thermostat.mode = "cool"
        #expect(thermostat.events == ["mode heat to cool"])
        #expect(thermostat.changes == 1 && thermostat.mode == "cool", "a return in willSet does not skip the store")
    }

    @Test func anObserverThatSetsItsOwnPropertyStoresWithoutCallingItselfAgain() {
        let thermostat = Thermostat(room: "Hall")
        thermostat.label = "  Upstairs hall "
        #expect(thermostat.label == "Upstairs hall")
        #expect(thermostat.events == ["label 'Upstairs hall'"], "the observer ran once")
        thermostat.limit = 500
        #expect(thermostat.limit == 100)
        thermostat.limit = 50
        #expect(thermostat.limit == 50)
    }

    @Test func aRelationshipsObserverRunsAndTheInverseIsKept() {
        let thermostat = Thermostat(room: "Hall")
        let upstairs = Zone(name: "Upstairs")
        thermostat.zone = upstairs
        #expect(thermostat.events == ["zone Upstairs"])
        #expect(upstairs.thermostats.map(\.room) == ["Hall"])
        thermostat.zone = nil
        #expect(thermostat.events == ["zone Upstairs", "zone none"] && upstairs.thermostats.isEmpty)
    }

    @Test(arguments: 0..<4)
    func observedValuesAreStoredAndReadBackThroughTheStore(store: Int) throws {
        try TemporaryDirectory().writeThenReopen(store: store, schema: Schema([Thermostat.self, Zone.self])) {
            container in
            let context = ModelContext(container)
            context.insert(Thermostat(room: "Hall"))
            try context.save()
            let writer = ModelContext(container)
            let fetched = try #require(try writer.fetch(FetchDescriptor<Thermostat>()).first)
            #expect(fetched.events.isEmpty, "loading stored values calls no observer")
            fetched.room = "Attic"
            fetched.target = 18
            fetched.mode = "cool"
            fetched.zone = Zone(name: "Top")
            fetched.label = " Attic "
            fetched.limit = 120
            #expect(
                fetched.events == [
                    "will set 20.0 to 18.0", "did set 20.0 to 18.0", "mode heat to cool", "zone Top", "label 'Attic'",
                ])
            try writer.save()
        } read: { context in
            let found = try context.fetch(FetchDescriptor<Thermostat>(predicate: #Predicate { $0.roomKey == "attic" }))
            let thermostat = try #require(found.first)
            #expect(found.count == 1 && thermostat.room == "Attic" && thermostat.target == 18)
            #expect(thermostat.mode == "cool" && thermostat.changes == 1 && thermostat.zone?.name == "Top")
            #expect(thermostat.label == "Attic" && thermostat.limit == 100, "what the observers set is stored")
            #expect(thermostat.events.isEmpty)
        }
    }
}
