import ModelStore
import PostgreSQLTestModels

extension ModelContainer {
    /// Inserts `count` counters; with `gaps`, deletes a tenth of them again (the names ending in 3),
    /// so that the keys are several runs rather than one. Returns the identifiers of the counters
    /// left, in key order.
    func insertCounters(count: Int, gaps: Bool) throws -> [PersistentIdentifier] {
        let context = ModelContext(self)
        for index in 0..<count { context.insert(Counter(name: "c\(index)")) }
        try context.save()
        for counter in try context.fetch(FetchDescriptor<Counter>()) where gaps && counter.name.hasSuffix("3") {
            context.delete(counter)
        }
        try context.save()
        return try context.fetchIdentifiers(FetchDescriptor<Counter>())
    }
}
