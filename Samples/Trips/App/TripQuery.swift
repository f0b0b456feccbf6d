import Foundation
import ModelStore

/// The filters, order and limit of `trips list`, turned into a `FetchDescriptor` whose predicate
/// is composed at run time from one `#Predicate` per filter.
struct TripQuery {
    enum Status: String { case open, done }
    enum Order: String, CaseIterable { case name, start, budget }

    var city: String?
    var status: Status?
    var search: String?
    var minimumBudget: Double?
    var maximumBudget: Double?
    var order: Order = .start
    var limit: Int?
    /// Print how the fetch runs (what the store runs, what the context evaluates) instead of trips.
    var explains = false

    init() {}

    /// Reads the options of `trips list`.
    init(_ reader: inout ArgumentReader) throws {
        city = try reader.option("--city")
        let isOpen = try reader.flag("--open")
        let isDone = try reader.flag("--done")
        if isOpen && isDone { throw UsageError("'list' takes '--open' or '--done', not both") }
        status = isOpen ? .open : isDone ? .done : nil
        search = try reader.option("--search")
        minimumBudget = try reader.option("--min-budget", expecting: "an amount like 500", Invocation.parseAmount)
        maximumBudget = try reader.option("--max-budget", expecting: "an amount like 500", Invocation.parseAmount)
        let orders = Order.allCases.map(\.rawValue).joined(separator: ", ")
        order = try reader.option("--sort", expecting: "one of \(orders)", Order.init(rawValue:)) ?? .start
        limit = try reader.option("--limit", expecting: "a whole number from 0") { text in
            Int(text).flatMap { $0 >= 0 ? $0 : nil }
        }
        explains = try reader.flag("--explain")
        _ = try reader.finish()
    }

    /// The filters as one `#Predicate`; `nil` when no filter is set.
    ///
    /// Each filter that is not set is switched off by a constant (`!byCity || …`), so one predicate
    /// covers every combination. A store that pushes predicates down folds those constants away.
    /// (Foundation on Linux has no `Predicate.evaluate` inside `#Predicate`, which would let
    /// separate predicates be combined.)
    var predicate: Predicate<Trip>? {
        guard city != nil || status != nil || search != nil || minimumBudget != nil || maximumBudget != nil else {
            return nil
        }
        let byCity = city != nil
        let city = self.city ?? ""
        let byStatus = status != nil
        let isDone = status == .done
        let bySearch = search != nil
        let search = (self.search ?? "").foldedForSearch
        let byMinimum = minimumBudget != nil
        let minimum = minimumBudget ?? 0
        let byMaximum = maximumBudget != nil
        let maximum = maximumBudget ?? 0
        return #Predicate<Trip> { trip in
            (!byCity || trip.destination?.city == city)
                && (!byStatus || trip.isDone == isDone)
                && (!bySearch || trip.nameKey.contains(search))
                && (!byMinimum || trip.budget >= minimum)
                && (!byMaximum || trip.budget <= maximum)
        }
    }

    /// The descriptor `list` fetches with: the predicate, the order (then by name), the limit, and
    /// the items prefetched because the listing counts them.
    var descriptor: FetchDescriptor<Trip> {
        let sort: [SortDescriptor<Trip>] =
            switch order {
            case .name: [SortDescriptor(\.name)]
            case .start: [SortDescriptor(\.start), SortDescriptor(\.name)]
            case .budget: [SortDescriptor(\.budget, order: .reverse), SortDescriptor(\.name)]
            }
        var descriptor = FetchDescriptor(predicate: predicate, sortBy: sort)
        descriptor.fetchLimit = limit
        descriptor.relationshipKeyPathsForPrefetching = [\.items]
        return descriptor
    }
}
