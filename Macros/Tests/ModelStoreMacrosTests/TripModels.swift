import Foundation
import ModelStoreMacros

// The Trips sample's models (Samples/Trips/App/Models.swift) as a SwiftData app writes them.

@Model
final class Trip {
    #Unique<Trip>([\.name, \.start])
    #Index<Trip>([\.start], [\.budget, \.name])

    @Attribute(.unique) var name: String
    var start: Date
    var budget: Double
    var isDone: Bool = false
    var kind: TripKind
    var notes: [String] = []
    @Attribute(.externalStorage) var photo: Data?
    /// Deleting a trip deletes its items.
    @Relationship(deleteRule: .cascade, inverse: \Item.trip) var items: [Item] = []
    /// Deleting a trip leaves its destination, without the trip.
    @Relationship(deleteRule: .nullify, inverse: \Destination.trips) var destination: Destination?
    @Transient var isExpanded = false

    init(
        name: String, start: Date, budget: Double = 0, kind: TripKind = .leisure, destination: Destination? = nil,
        items: [Item] = []
    ) {
        self.name = name
        self.start = start
        self.budget = budget
        self.kind = kind
        self.destination = destination
        self.items = items
    }
}

enum TripKind: String, Codable, CaseIterable {
    case leisure, business
}

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

@Model
final class Destination {
    @Attribute(.unique) var city: String
    var trips: [Trip] = []
    var location: Coordinate

    init(_ city: String, location: Coordinate = Coordinate(latitude: 0, longitude: 0)) {
        self.city = city
        self.location = location
    }
}

struct Coordinate: Codable, Hashable {
    var latitude: Double
    var longitude: Double
}
