import Foundation
import ModelStoreMacros
import Testing

/// The schema of `@Model` classes: the same entities, properties, options, delete rules, inverses
/// and constraints as their hand-written twins.
struct ModelSchemaTests {
    let macro = Schema([Trip.self, Item.self, Destination.self])
    let hand = Schema([HandTrip.self, HandItem.self, HandDestination.self])

    /// The entity's properties as text that leaves the entity names out.
    private func summary(_ entity: Schema.Entity) -> [String] {
        let attributes = entity.attributes.map {
            "\($0.slot) \($0.name): \($0.valueType) options \($0.options.rawValue) default \($0.defaultValue)"
        }
        let relationships = entity.relationships.map {
            "\($0.slot) \($0.name) -> \($0.destination.replacingOccurrences(of: "Hand", with: "")) "
                + "toOne \($0.isToOne) inverse \($0.inverseName ?? "-") rule \($0.deleteRule)"
        }
        return attributes + relationships + ["ephemeral \(entity.ephemeralAttributeNames)"]
            + ["unique \(entity.uniquenessConstraints)", "indices \(entity.indices)"]
    }

    @Test(arguments: [("Trip", "HandTrip"), ("Item", "HandItem"), ("Destination", "HandDestination")])
    func eachEntityMatchesItsHandWrittenTwin(names: (String, String)) throws {
        let macroEntity = try #require(macro.entity(named: names.0))
        let handEntity = try #require(hand.entity(named: names.1))
        #expect(summary(macroEntity) == summary(handEntity))
    }

    @Test func everyStoredPropertyIsPersistedAndTheTransientOneIsNot() throws {
        let trip = try #require(macro.entity(named: "Trip"))
        #expect(
            trip.properties.map(\.name) == [
                "name", "start", "budget", "isDone", "kind", "notes", "photo", "items", "destination",
            ])
        #expect(trip.attribute(named: "name")?.isUnique == true)
        #expect(trip.attribute(named: "photo")?.options.contains(.externalStorage) == true)
        #expect(trip.relationship(named: "items")?.deleteRule == .cascade)
        #expect(trip.relationship(named: "items")?.inverseName == "trip")
        #expect(trip.relationship(named: "destination")?.inverseName == "trips")
        #expect(trip.uniquenessConstraints.contains(["name", "start"]))
        #expect(trip.indices == [["start"], ["budget", "name"]])
        #expect(trip.property(named: "isExpanded") == nil)
    }
}
