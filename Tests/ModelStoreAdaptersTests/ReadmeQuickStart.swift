// The Quick Start of README.md, compiled as part of the tests. ReadmeTests checks that the text
// between the two marker lines is exactly the README's Swift block: change both together.

// README quick start: begin
import Foundation
import ModelStore
import ModelStoreAdapters

final class Trip: PersistentModel {
    @Attribute(.unique) var name: String = ""
    @Attribute var start: Date = .now
    @Relationship(deleteRule: .cascade, inverse: \Item.trip) var items: [Item] = []

    let persistentBackingData = BackingData()
    init() {}

    convenience init(name: String, start: Date, items: [Item] = []) {
        self.init()
        self.name = name
        self.start = start
        self.items = items
    }
}

final class Item: PersistentModel {
    @Attribute var title: String = ""
    @Relationship var trip: Trip?

    let persistentBackingData = BackingData()
    init() {}
}

/// Opens (or creates) the store, plans a trip, and returns the names of the upcoming trips.
func planTrip(named name: String, store: String = "json:trips.json") throws -> [String] {
    let container = try ModelContainer(for: Trip.self, url: store, environmentOverride: "MODELSTORE_URL")
    let context = ModelContext(container)

    let passport = Item()
    passport.title = "Passport"
    context.insert(Trip(name: name, start: .now, items: [passport]))
    try context.save()  // a second trip with the same name updates the first, as in SwiftData

    let cutoff = Date.now.addingTimeInterval(-86_400)
    let upcoming = FetchDescriptor<Trip>(
        predicate: #Predicate { $0.start > cutoff },
        sortBy: [SortDescriptor(\.name)])
    return try context.fetch(upcoming).map(\.name)
}
// README quick start: end
