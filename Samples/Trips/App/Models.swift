import Foundation
import ModelStore

/// A trip: a unique name, a start date, a budget, the items to pack, and where it goes.
final class Trip: PersistentModel {
    @Attribute(.unique) var name: String = "" {
        didSet { nameKey = name.foldedForSearch }
    }
    /// The name folded for search (no case, diacritics or width), which `trips list --search`
    /// matches in the store: Linux has no `localizedStandardContains`.
    @Attribute var nameKey: String = ""
    @Attribute var start: Date = Date(timeIntervalSince1970: 0)
    @Attribute var budget: Double = 0
    @Attribute var isDone: Bool = false
    /// Deleting a trip deletes its items.
    @Relationship(deleteRule: .cascade, inverse: \Item.trip) var items: [Item] = []
    /// Deleting a trip leaves its destination, without the trip.
    @Relationship(deleteRule: .nullify, inverse: \Destination.trips) var destination: Destination?

    let persistentBackingData = BackingData()
    init() {}

    convenience init(name: String, start: Date, budget: Double, destination: Destination?, items: [Item] = []) {
        self.init()
        self.name = name
        self.start = start
        self.budget = budget
        self.destination = destination
        self.items = items
    }
}

/// Something to pack for a trip.
final class Item: PersistentModel {
    @Attribute var title: String = ""
    @Attribute var quantity: Int = 1
    @Relationship var trip: Trip?

    let persistentBackingData = BackingData()
    init() {}

    convenience init(_ title: String, quantity: Int = 1) {
        self.init()
        self.title = title
        self.quantity = quantity
    }
}

/// A city trips go to; several trips may share one.
final class Destination: PersistentModel {
    @Attribute(.unique) var city: String = ""
    @Relationship var trips: [Trip] = []

    let persistentBackingData = BackingData()
    init() {}

    convenience init(_ city: String) {
        self.init()
        self.city = city
    }
}
