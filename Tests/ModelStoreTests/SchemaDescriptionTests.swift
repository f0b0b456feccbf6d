import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

struct SchemaDescriptionTests {
    @Test func descriptionRoundTripsThroughJSONAndRebuildsTheSchema() throws {
        let schema = Schema([Trip.self, Author.self, Kitchen.self])
        let description = schema.storedDescription
        let data = try JSONEncoder().encode(description)
        let decoded = try JSONDecoder().decode(Schema.Description.self, from: data)
        #expect(decoded == description)
        let rebuilt = try Schema(decoded)
        #expect(rebuilt.storedDescription == description)
        let trip = try #require(rebuilt.entity(named: "Trip"))
        #expect(ObjectIdentifier(trip.modelType) == ObjectIdentifier(SchemaOnlyModel.self))
        #expect(trip.relationship(named: "items")?.inverseName == "trip")
        #expect(trip.attribute(named: "name")?.isUnique == true)
        #expect(rebuilt.entity(named: "Kitchen")?.attribute(named: "optionalString")?.defaultValue == .null)
        #expect(schema.differences(from: decoded).isEmpty)
    }

    @Test func storesWorkWithADescriptionOnlySchema() throws {
        let schema = try Schema(Schema([Trip.self]).storedDescription)
        let store = try InMemoryStore(InMemoryStoreConfiguration(schema: schema), migrationPlan: nil)
        let entity = try #require(schema.entity(named: "Destination"))
        let snapshot = try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Destination"), entity: entity,
            namedValues: ["city": .string("Rome")])
        let result = try store.save(
            DataStoreSaveChangesRequest(editingState: EditingState(), inserted: [snapshot], updated: [], deleted: []))
        #expect(result.remappedIdentifiers.count == 1)
        let fetched = try store.fetch(
            DataStoreFetchRequest<SchemaOnlyModel>(
                descriptor: FetchDescriptor(), editingState: EditingState(),
                query: StoreQuery(entityName: "Destination")))
        #expect(fetched.fetchedSnapshots.map { $0["city"] } == [.string("Rome")])
    }

    @Test func differencesNameWhatChanged() throws {
        var stored = Schema([Trip.self]).storedDescription
        stored.entities[0].properties.removeLast()
        stored.entities.append(Schema.EntityDescription(name: "Gone", properties: []))
        let lines = Schema([Trip.self]).differences(from: stored)
        #expect(lines.contains("'Trip.destination' is new"))
        #expect(lines.contains("entity 'Gone' was removed"))
    }

    @Test func inconsistentDescriptionsAreRejected() throws {
        let description = Schema.Description(
            version: Schema.Version(1, 0, 0),
            entities: [
                Schema.EntityDescription(name: "A", properties: [.relationship("b", to: "Missing", isToOne: true)])
            ])
        expectError(.invalidSchema) { try Schema(description) }
    }
}
