import Foundation
import ModelStore
import ModelStoreInMemory

/// Foundation's `Predicate.evaluate` over materialised `User` models (the same models the
/// ModelStore systems return), with `SortDescriptor` for the sort: the baseline for the scan.
/// The models are fetched once, untimed; only evaluation (and sorting) is timed.
struct FoundationPredicateSystem: BenchSystem {
    func notApplicable(_ workload: Workload) -> String? {
        switch workload {
        case .updateLive: "live queries are ModelStore's (LiveQuery)"
        case .insert, .updateOne, .open, .openPage, .deleteAll:
            "Predicate.evaluate filters objects already in memory; it stores nothing"
        case .fetchAll: "with no predicate there is nothing for Predicate.evaluate to do"
        case .hierarchyBase, .hierarchyFlat, .hierarchySubclass: Workload.hierarchyNotApplicable
        case .fetchIndexed, .fetchUnique, .fetchScan: nil
        }
    }

    /// Every user as a model registered in a context, plus what keeps them alive.
    private struct Materialised {
        let container: ModelContainer
        let context: ModelContext
        let users: [User]
    }

    private func materialise(_ data: Dataset) throws -> Materialised {
        let container = try ModelContainer(for: User.self, configurations: .inMemory())
        let context = ModelContext(container)
        try context.insert(User.self, rows: data.rows.lazy.map(UserQueries.assignments))
        let users = try context.fetch(FetchDescriptor<User>())
        try Expect.count(users.count, data.count, "materialising the models")
        return Materialised(container: container, context: context, users: users)
    }

    func fetchIndexed(_ data: Dataset, _ directory: URL) throws -> Trial {
        let models = try materialise(data)
        let descriptor = UserQueries.indexed()
        let predicate = descriptor.predicate!
        return Trial(
            path: "users.filter { predicate.evaluate($0) }.sorted(using: SortDescriptor(\\.age))",
            run: { _ in try models.users.filter { try predicate.evaluate($0) }.sorted(using: descriptor.sortBy) },
            check: { found, _ in
                try Expect.count(found.count, data.indexedNameCount, "fetch-indexed")
                try Expect.sortedByAge(found.map(\.age))
            })
    }

    func fetchUnique(_ data: Dataset, _ directory: URL) throws -> Trial {
        let models = try materialise(data)
        return Trial(
            path: "users.first { predicate.evaluate($0) } (no index: a linear search)",
            run: { repetition in
                let predicate = UserQueries.unique(email: data.rows[data.lookupTarget(repetition)].email).predicate!
                return try models.users.first { try predicate.evaluate($0) }
            },
            check: { user, repetition in
                if user?.email != data.rows[data.lookupTarget(repetition)].email {
                    throw WrongResult("fetch-unique: wrong user")
                }
            })
    }

    func fetchScan(_ data: Dataset, _ directory: URL) throws -> Trial {
        let models = try materialise(data)
        let predicate = UserQueries.scanPredicate()
        return Trial(
            path: "users.filter { predicate.evaluate($0) }",
            run: { _ in try models.users.filter { try predicate.evaluate($0) } },
            check: { found, _ in try Expect.count(found.count, data.scanMatchCount, "fetch-scan") })
    }
}
