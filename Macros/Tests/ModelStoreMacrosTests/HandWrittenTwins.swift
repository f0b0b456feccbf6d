import Foundation
import ModelStore

// The hand-written form of TripModels.swift's models, as the main package documents it: the
// schema a `@Model` class gets must be the one its hand-written twin gets.

final class HandTrip: PersistentModel {
    @ModelStore.Attribute(.unique) var name: String = ""
    @ModelStore.Attribute var start: Date = Date(timeIntervalSinceReferenceDate: 0)
    @ModelStore.Attribute var budget: Double = 0
    @ModelStore.Attribute var isDone: Bool = false
    @ModelStore.Attribute var kind: TripKind = .leisure
    @ModelStore.Attribute var notes: [String] = []
    @ModelStore.Attribute(.externalStorage) var photo: Data?
    @ModelStore.Relationship(deleteRule: .cascade, inverse: \HandItem.trip) var items: [HandItem] = []
    @ModelStore.Relationship(deleteRule: .nullify, inverse: \HandDestination.trips) var destination: HandDestination?
    @ModelStore.Transient var isExpanded = false

    static var constraints: [ModelConstraint<HandTrip>] {
        [.unique(\.name, \.start), .index(\.start), .index(\.budget, \.name)]
    }

    let persistentBackingData = BackingData()
    init() {}
}

final class HandItem: PersistentModel {
    @ModelStore.Attribute var title: String = ""
    @ModelStore.Attribute var quantity: Int = 1
    @ModelStore.Relationship var trip: HandTrip?

    let persistentBackingData = BackingData()
    init() {}
}

final class HandDestination: PersistentModel {
    @ModelStore.Attribute(.unique) var city: String = ""
    @ModelStore.Relationship var trips: [HandTrip] = []
    @ModelStore.Attribute var location = Coordinate(latitude: 0, longitude: 0)

    let persistentBackingData = BackingData()
    init() {}
}
