import Foundation
import ModelStoreMacros

// The Trips sample's models (Samples/Trips/App/Models.swift), written as a SwiftData app writes
// them; the sample's other files are links to the hand-written sample's, unchanged.

/// A trip: a unique name, a start date, a budget, the items to pack, and where it goes.
@Model
final class Trip {
    @Attribute(.unique) var name: String
    /// The name folded for search (no case, diacritics or width), which `trips list --search` matches
    /// in the store. Set where the name is (in `init`, and by the planner on a rename): SwiftData's
    /// `@Model` takes no `didSet` on a stored property.
    var nameKey: String = ""
    var start: Date
    var budget: Double
    var isDone: Bool = false
    /// Deleting a trip deletes its items.
    @Relationship(deleteRule: .cascade, inverse: \Item.trip) var items: [Item] = []
    /// Deleting a trip leaves its destination, without the trip.
    @Relationship(deleteRule: .nullify, inverse: \Destination.trips) var destination: Destination?

    init(name: String, start: Date, budget: Double, destination: Destination?, items: [Item] = []) {
        self.name = name
        self.nameKey = name.foldedForSearch
        self.start = start
        self.budget = budget
        self.destination = destination
        self.items = items
    }
}

/// Something to pack for a trip.
@Model
final class Item {
    var title: String
    var quantity: Int = 1
    var trip: Trip?

    init(_ title: String, quantity: Int = 1) {
        self.title = title
        self.quantity = quantity
    }
}

/// A city trips go to; several trips may share one.
@Model
final class Destination {
    @Attribute(.unique) var city: String
    var trips: [Trip] = []

    init(_ city: String) {
        self.city = city
    }
}
