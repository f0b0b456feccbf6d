import Foundation
import ModelStore

/// A person: a unique name, an indexed age, an optional email, and the city they live in.
final class Person: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var age: Int = 0
    @Attribute var email: String? = nil
    @Attribute var joined: Date = Date(timeIntervalSince1970: 0)
    @Attribute var score: Double = 0
    @Relationship(deleteRule: .nullify, inverse: \City.people) var city: City?
    @Relationship(deleteRule: .cascade, inverse: \Visit.person) var visits: [Visit] = []

    let persistentBackingData = BackingData()
    init() {}

    static var constraints: [ModelConstraint<Person>] { [.index(\.age)] }
}

/// A city people live in.
final class City: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var country: String = ""
    @Relationship var people: [Person] = []

    let persistentBackingData = BackingData()
    init() {}
}

/// A visit a person made, with a rating.
final class Visit: PersistentModel {
    @Attribute var place: String = ""
    @Attribute var rating: Int = 0
    @Relationship var person: Person?

    let persistentBackingData = BackingData()
    init() {}
}

/// The root of a class hierarchy: every vehicle has a unique plate, its wheels and maybe an owner.
class Vehicle: PersistentModel {
    @Attribute(.unique) var plate: String = ""
    @Attribute var wheels: Int = 4
    @Relationship var owner: Person?

    let persistentBackingData = BackingData()
    required init() {}
}

/// A vehicle with seats.
final class Car: Vehicle {
    @Attribute var seats: Int = 5
}

/// A vehicle that carries freight.
class Truck: Vehicle {
    @Attribute var payload: Double = 0
}

/// A truck with a hook.
final class TowTruck: Truck {
    @Attribute var hookRating: Int = 0
}
