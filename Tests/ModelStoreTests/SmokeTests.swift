import Foundation
import ModelStore
import ModelStoreInMemory
import Testing

struct SmokeTests {
    @Test func insertSaveFetchRoundTrip() throws {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let context = ModelContext(container)
        let rome = Destination("Rome")
        let trip = Trip(
            name: "Spring", budget: 1200, destination: rome, items: [Item("Passport"), Item("Shoes", quantity: 2)])
        #expect(trip.items.first?.trip === trip)
        #expect(rome.trips.first === trip)
        context.insert(trip)
        #expect(context.insertedModelsArray.count == 4)
        try context.save()
        #expect(!trip.persistentModelID.isTemporary)

        let other = ModelContext(container)
        let trips = try other.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.budget > 100 }))
        #expect(trips.count == 1)
        let fetched = try #require(trips.first)
        #expect(fetched !== trip)
        #expect(fetched.name == "Spring")
        #expect(Set(fetched.items.map(\.title)) == ["Passport", "Shoes"])
        #expect(fetched.destination?.city == "Rome")
        #expect(fetched.items.allSatisfy { $0.trip === fetched })
    }
}
