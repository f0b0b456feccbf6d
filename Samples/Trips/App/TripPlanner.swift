import Foundation
import ModelStore

/// A failure `trips` reports in plain words, with status 1.
struct TripsError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) { self.description = description }
}

/// The commands of `trips`, on one context. Each returns the text to print.
struct TripPlanner {
    let context: ModelContext

    init(container: ModelContainer) {
        context = ModelContext(container)
        // A new trip must not silently update an old one of the same name: refuse, don't upsert.
        context.duplicateInsertPolicy = .error
    }

    // MARK: Reading

    /// The trips a query selects, as a table.
    func list(_ query: TripQuery) throws -> String {
        if query.search != nil { try foldNamesForSearch() }
        if query.explains { return try context.explain(query.descriptor).description }
        let trips = try context.fetch(query.descriptor)
        guard !trips.isEmpty else {
            let total = try context.fetchCount(FetchDescriptor<Trip>())
            return total == 0 ? "No trips yet. Plan one with: trips add NAME --to CITY" : "No trips match."
        }
        return Self.table(of: trips)
    }

    /// The trips as the table `list` prints.
    static func table(of trips: [Trip]) -> String {
        let rows = trips.map { trip in
            [
                trip.name, trip.destination?.city ?? "-", TripFormat.string(from: trip.start),
                TripFormat.string(amount: trip.budget), String(trip.items.count), trip.isDone ? "yes" : "",
            ]
        }
        return TripFormat.table(
            header: ["NAME", "DESTINATION", "START", "BUDGET", "ITEMS", "DONE"], rows: rows, rightAligned: [3, 4])
    }

    /// Counts, budgets, the first open trip, and trips per destination.
    func stats() throws -> String {
        let total = try context.fetchCount(FetchDescriptor<Trip>())
        let done = try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0.isDone }))
        let items = try context.fetch(FetchDescriptor<Item>())
        let trips = try context.fetch(FetchDescriptor<Trip>())
        var open = FetchDescriptor<Trip>(
            predicate: #Predicate { !$0.isDone }, sortBy: [SortDescriptor(\.start), SortDescriptor(\.name)])
        open.fetchLimit = 1
        let first = try context.fetch(open).first
        let destinations = try context.fetch(FetchDescriptor<Destination>(sortBy: [SortDescriptor(\.city)]))

        var lines = [
            "Trips: \(total) (\(total - done) open, \(done) done)",
            "Items to pack: \(items.reduce(0) { $0 + $1.quantity }) (\(items.count) kinds)",
            "Budget: \(TripFormat.string(amount: trips.reduce(0) { $0 + $1.budget })) in total, "
                + "\(TripFormat.string(amount: trips.filter { !$0.isDone }.reduce(0) { $0 + $1.budget })) still open",
            "First open trip: " + (first.map { "\($0.name) on \(TripFormat.string(from: $0.start))" } ?? "none"),
            "Destinations: \(destinations.count)",
        ]
        if !destinations.isEmpty {
            let rows = destinations.map { destination in
                [
                    destination.city, String(destination.trips.count),
                    TripFormat.string(amount: destination.trips.reduce(0) { $0 + $1.budget }),
                ]
            }
            lines.append("")
            lines.append(
                TripFormat.table(header: ["DESTINATION", "TRIPS", "BUDGET"], rows: rows, rightAligned: [1, 2]))
        }
        return lines.joined(separator: "\n")
    }

    // MARK: Changing

    /// Adds the demo trips when the store has no trips and no destinations; returns whether it did.
    func addDemoTripsIfEmpty() throws -> Bool {
        guard try context.fetchCount(FetchDescriptor<Trip>()) == 0,
            try context.fetchCount(FetchDescriptor<Destination>()) == 0
        else { return false }
        let lisbon = Destination("Lisbon")
        let kyoto = Destination("Kyoto")
        let chamonix = Destination("Chamonix")
        let rome = Destination("Rome")
        func day(_ text: String) -> Date { TripFormat.parseDate(text)! }
        let trips = [
            Trip(
                name: "Lisbon weekend", start: day("2025-05-02"), budget: 450, destination: lisbon,
                items: [Item("Passport"), Item("Sunscreen"), Item("Walking shoes")]),
            Trip(
                name: "Kyoto in autumn", start: day("2025-11-08"), budget: 2400, destination: kyoto,
                items: [Item("Rail pass"), Item("Camera"), Item("Umbrella")]),
            Trip(
                name: "Alps hiking", start: day("2025-07-14"), budget: 1100, destination: chamonix,
                items: [Item("Boots"), Item("Map"), Item("Water bottle", quantity: 2)]),
            Trip(
                name: "Lisbon food tour", start: day("2026-03-20"), budget: 600, destination: lisbon,
                items: [Item("Appetite")]),
            Trip(
                name: "Rome spring break", start: day("2024-04-10"), budget: 900, destination: rome,
                items: [Item("Guidebook")]),
        ]
        trips.last?.isDone = true
        for trip in trips { context.insert(trip) }
        try context.save()
        return true
    }

    /// Plans a trip, reusing the destination if a trip already goes there.
    func add(_ new: Invocation.NewTrip) throws -> String {
        let trip = Trip(
            name: new.name, start: new.start, budget: new.budget, destination: try new.city.map(destination),
            items: new.items.map { Item($0) })
        context.insert(trip)
        try saveNaming(new.name)
        let details = [
            trip.destination.map { "to \($0.city)" }, TripFormat.string(from: trip.start),
            "budget \(TripFormat.string(amount: trip.budget))", "\(trip.items.count) items",
        ].compactMap { $0 }.joined(separator: ", ")
        return "Added '\(trip.name)' (\(details))."
    }

    /// Adds an item to pack to a trip.
    func pack(trip name: String, item title: String, quantity: Int) throws -> String {
        let trip = try trip(named: name)
        trip.items.append(Item(title, quantity: quantity))
        try context.save()
        return "Packed \(quantity) × '\(title)' for '\(trip.name)'."
    }

    /// Marks a trip as done, with a batch update that needs no model.
    func complete(_ name: String) throws -> String {
        let updated = try context.update(
            Trip.self, where: #Predicate { $0.name == name }, set: [.set(\.isDone, to: true)])
        guard updated > 0 else { throw notFound(name) }
        return "Completed '\(name)'."
    }

    /// Renames a trip; names are unique.
    func rename(from old: String, to new: String) throws -> String {
        let trip = try trip(named: old)
        trip.name = new
        // The key follows the name (the hand-written model's didSet does it too; a @Model one has none).
        trip.nameKey = new.foldedForSearch
        try saveNaming(new)
        return "Renamed '\(old)' to '\(new)'."
    }

    /// Deletes a trip and, by the cascade rule, its items; its destination stays.
    func delete(_ name: String) throws -> String {
        let trip = try trip(named: name)
        let items = trip.items.count
        context.delete(trip)
        try context.save()
        return "Deleted '\(name)' and its \(items) item\(items == 1 ? "" : "s")."
    }

    /// Gives the trips of a store written before `Trip.nameKey` existed their folded names, so a
    /// search finds them: the store adds the new attribute empty, and only a name set since fills it.
    private func foldNamesForSearch() throws {
        let unfolded = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.nameKey == "" }))
        guard !unfolded.isEmpty else { return }
        for trip in unfolded { trip.nameKey = trip.name.foldedForSearch }
        try context.save()
    }

    // MARK: Helpers

    private func trip(named name: String) throws -> Trip {
        var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name })
        descriptor.fetchLimit = 1
        guard let trip = try context.fetch(descriptor).first else { throw notFound(name) }
        return trip
    }

    private func destination(_ city: String) throws -> Destination {
        var descriptor = FetchDescriptor<Destination>(predicate: #Predicate { $0.city == city })
        descriptor.fetchLimit = 1
        return try context.fetch(descriptor).first ?? Destination(city)
    }

    private func notFound(_ name: String) -> TripsError {
        TripsError("there is no trip named '\(name)'. Run 'trips list' to see the names")
    }

    /// Saves, turning a clash of trip names into a plain message.
    private func saveNaming(_ name: String) throws {
        do {
            try context.save()
        } catch DataStoreError.uniqueConstraintViolation {
            context.rollback()
            throw TripsError("a trip named '\(name)' already exists. Choose another name")
        }
    }
}
