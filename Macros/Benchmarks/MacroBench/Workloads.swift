import Foundation
import ModelStoreAdapters
import ModelStoreMacros

/// A workload's result doesn't match the data it was given.
struct WrongResult: Error, CustomStringConvertible {
    let description: String
}

/// The two workloads of the main benchmarks' `inmemory` row, over any user model, each repetition timed alone.
struct Workloads<User: BenchUser> {
    let rows: [UserRow]
    /// The sum of every row's age, which a fetch of every user must give back.
    let ageSum: Int

    init(rows: [UserRow]) {
        self.rows = rows
        ageSum = rows.reduce(0) { $0 + $1.age }
    }

    private func container() throws -> ModelContainer {
        try ModelContainer(for: User.self, configurations: .inMemory())
    }

    /// `insert`: makes a model of each row, inserts each into a new context on an empty in-memory
    /// store and saves once. Returns the seconds the models, inserts and save took.
    func insert() throws -> Double {
        let container = try container()
        let context = ModelContext(container)
        let start = ContinuousClock.now
        for row in rows { context.insert(User(row)) }
        try context.save()
        let seconds = (ContinuousClock.now - start).seconds
        let stored = try ModelContext(container).fetchCount(FetchDescriptor<User>())
        guard stored == rows.count else {
            throw WrongResult(description: "insert of '\(User.self)': \(stored) stored, not \(rows.count)")
        }
        return seconds
    }

    /// A container whose in-memory store holds every row, for `fetch-all`.
    func filledContainer() throws -> ModelContainer {
        let container = try container()
        let context = ModelContext(container)
        for row in rows { context.insert(User(row)) }
        try context.save()
        return container
    }

    /// `fetch-all`: fetches every user into a new context (no model registered yet). Returns the seconds the fetch
    /// took.
    func fetchAll(from container: ModelContainer) throws -> Double {
        let context = ModelContext(container)
        let start = ContinuousClock.now
        let users = try context.fetch(FetchDescriptor<User>())
        let seconds = (ContinuousClock.now - start).seconds
        let ageSum = users.reduce(0) { $0 + $1.age }
        guard users.count == rows.count, ageSum == self.ageSum else {
            throw WrongResult(
                description: "fetch-all of '\(User.self)': \(users.count) users with ages summing to \(ageSum), "
                    + "not \(rows.count) summing to \(self.ageSum)")
        }
        return seconds
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
