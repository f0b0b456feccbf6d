import Foundation
import ModelStore

/// An owner of pets; deleting an owner deletes its pets.
final class Owner: PersistentModel {
    @Attribute var key: Int = 0
    @Attribute var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Pet.owner) var pets: [Pet] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ name: String) {
        self.init()
        self.name = name
    }
}

/// A pet: to-one to its owner, many-to-many with toys.
final class Pet: PersistentModel {
    @Attribute var key: Int = 0
    @Attribute var name: String = ""
    @Attribute var weight: Double = 0
    @Relationship var owner: Owner?
    @Relationship(inverse: \Toy.pets) var toys: [Toy] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ name: String, weight: Double = 0, owner: Owner? = nil) {
        self.init()
        self.name = name
        self.weight = weight
        self.owner = owner
    }
}

/// A toy shared by any number of pets.
final class Toy: PersistentModel {
    @Attribute var key: Int = 0
    @Attribute var label: String = ""
    @Relationship var pets: [Pet] = []

    let persistentBackingData = BackingData()
    init() {}
    convenience init(_ label: String) {
        self.init()
        self.label = label
    }
}

/// A `Codable` value whose encoding can be made to fail, as a buggy `encode(to:)` would.
struct Fragile: Codable, Sendable {
    var text: String
    var failsToEncode = false

    init(_ text: String, failsToEncode: Bool = false) {
        self.text = text
        self.failsToEncode = failsToEncode
    }

    func encode(to encoder: any Encoder) throws {
        if failsToEncode {
            throw EncodingError.invalidValue(text, .init(codingPath: encoder.codingPath, debugDescription: "refused"))
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(text, forKey: .text)
        try container.encode(failsToEncode, forKey: .failsToEncode)
    }
}

/// A model with a composite attribute.
final class Note: PersistentModel {
    @Attribute var title: String = ""
    @Attribute var body: Fragile = Fragile("")

    let persistentBackingData = BackingData()
    init() {}
}
