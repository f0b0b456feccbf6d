import Foundation
import ModelStore

final class Trip: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var start: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var budget: Double = 0
    @Attribute var isDone: Bool = false
    @Relationship(deleteRule: .cascade, inverse: \Item.trip) var items: [Item] = []
    @Relationship(deleteRule: .nullify, inverse: \Destination.trips) var destination: Destination?
    var scratch = 0

    let persistentBackingData = BackingData()
    init() {}
    convenience init(name: String, budget: Double = 0, destination: Destination? = nil, items: [Item] = []) {
        self.init()
        self.name = name
        self.budget = budget
        self.destination = destination
        self.items = items
    }
}

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

final class Destination: PersistentModel {
    @Attribute var city: String = ""
    @Relationship var trips: [Trip] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ city: String) {
        self.init()
        self.city = city
    }
}
