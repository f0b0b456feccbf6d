import BenchHarness
import Foundation
import ModelStore

/// A ModelStore adapter driven through the public API: a container, contexts, models and saves.
///
/// `insert` creates models, inserts them and saves once; the `-batch` variant inserts rows with
/// `ModelContext.insert(_:rows:)` instead. Stores are filled for the other workloads with the
/// batch API, untimed.
struct ModelStoreSystem: BenchSystem {
    /// Makes the configuration of a store at a path (ignored by stores that keep nothing on disk).
    let configuration: (URL) -> any DataStoreConfiguration
    /// Whether the store lives on disk, so it can be reopened.
    let isDurable: Bool
    /// Whether `insert` takes the batch path.
    let batchInsert: Bool

    func notApplicable(_ workload: Workload) -> String? {
        if (workload == .open || workload == .openPage) && !isDurable {
            return "an in-memory store has nothing on disk to open"
        }
        if batchInsert && workload != .insert { return "the batch variant is measured for insert only" }
        return nil  // update-live too: every ModelStore store has live queries
    }

    // MARK: Stores

    /// The store location of a repetition: `rep-<n>/store`, after removing the previous repetition's folder.
    private func freshLocation(_ directory: URL, _ repetition: Int) throws -> URL {
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("rep-\(repetition - 1)"))
        let folder = directory.appendingPathComponent("rep-\(repetition)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent("store")
    }

    /// A container whose store holds every user, inserted with the batch API; returns the identifiers in row order.
    private func filledContainer(_ data: Dataset, at url: URL) throws -> (ModelContainer, PersistentIdentifiers) {
        let container = try ModelContainer(for: User.self, configurations: configuration(url))
        let ids = try ModelContext(container).insert(User.self, rows: data.rows.lazy.map(UserQueries.assignments))
        try Expect.count(ids.count, data.count, "filling the store")
        return (container, ids)
    }

    /// The location of a store filled with every user, its container closed again.
    private func closedFilledStore(_ data: Dataset, _ directory: URL) throws -> URL {
        let url = directory.appendingPathComponent("store")
        _ = try filledContainer(data, at: url)
        return url
    }

    private func storedCount(_ container: ModelContainer) throws -> Int {
        try ModelContext(container).fetchCount(FetchDescriptor<User>())
    }

    // MARK: Workloads

    func insert(_ data: Dataset, _ directory: URL) throws -> Trial {
        var container: ModelContainer?
        var context: ModelContext?
        let prepare: (Int) throws -> Void = { repetition in
            context = nil
            container = nil
            container = try ModelContainer(
                for: User.self, configurations: configuration(freshLocation(directory, repetition)))
            context = ModelContext(container!)
        }
        let check: (Int, Int) throws -> Void = { inserted, repetition in
            try Expect.count(inserted, data.count, "insert")
            if repetition == 0 { try Expect.count(try storedCount(container!), data.count, "insert, counted back") }
        }
        if batchInsert {
            return Trial(
                path: "ModelContext.insert(User.self, rows:) (batch, one atomic store write)", prepare: prepare,
                run: { _ in try context!.insert(User.self, rows: data.rows.lazy.map(UserQueries.assignments)).count },
                check: check)
        }
        var trial = Trial(
            path: "User models, context.insert each, one save()", prepare: prepare,
            run: { _ in
                let context = context!
                for row in data.rows { context.insert(User(row)) }
                try context.save()
                return data.count
            },
            check: check)
        if !isDurable {
            trial.memoryProbe = {
                context = nil
                container = nil
                return try heldMemory(data, directory)
            }
        }
        return trial
    }

    /// The resident growth of making N `User` models without a store, then, from the same start, of
    /// inserting N models made the same way and saving them: the peak, and once the save returned
    /// with the models still referenced.
    private func heldMemory(_ data: Dataset, _ directory: URL) throws -> HeldMemory {
        ProcessMemory.resetPeak()
        guard let start = ProcessMemory.currentResidentBytes() else {
            throw WrongResult("the resident size cannot be read (Linux's /proc/self/status)")
        }
        var objects: [User]? = data.rows.map(User.init)
        let objectsGrowth = (ProcessMemory.currentResidentBytes() ?? start) - start
        try Expect.count(objects?.count ?? 0, data.count, "the models made without a store")
        objects = nil
        ProcessMemory.resetPeak()
        guard let before = ProcessMemory.currentResidentBytes() else { throw WrongResult("no resident size") }
        let container = try ModelContainer(for: User.self, configurations: configuration(directory))
        let context = ModelContext(container)
        var models: [User] = []
        models.reserveCapacity(data.count)
        for row in data.rows {
            let user = User(row)
            context.insert(user)
            models.append(user)
        }
        try context.save()
        let peak = ProcessMemory.peakResidentBytes() - before
        // What the save freed goes back to the kernel first, so the growth left is what stays.
        ProcessMemory.resetPeak()
        let afterwards = (ProcessMemory.currentResidentBytes() ?? before) - before
        try Expect.count(try storedCount(container), data.count, "insert for the memory probe, counted back")
        withExtendedLifetime((container, context, models)) {}
        return HeldMemory(objects: objectsGrowth, peak: peak, afterwards: afterwards)
    }

    /// A fetch from a store holding every user, each repetition in a fresh context (so no model is registered yet).
    private func fetchTrial(
        _ data: Dataset, _ directory: URL, path: String, run: @escaping (ModelContext, Int) throws -> [User],
        check: @escaping ([User], Int) throws -> Void
    ) throws -> Trial {
        let (container, _) = try filledContainer(data, at: directory.appendingPathComponent("store"))
        var context: ModelContext?
        return Trial(
            path: path + ", fresh context", prepare: { _ in context = ModelContext(container) },
            run: { repetition in try run(context!, repetition) }, check: check)
    }

    func fetchIndexed(_ data: Dataset, _ directory: URL) throws -> Trial {
        try fetchTrial(
            data, directory, path: "context.fetch(#Predicate name == \"Jane\", sortBy: age)",
            run: { context, _ in try context.fetch(UserQueries.indexed()) },
            check: { users, _ in
                try Expect.count(users.count, data.indexedNameCount, "fetch-indexed")
                if users.contains(where: { $0.name != Dataset.indexedName }) {
                    throw WrongResult("fetch-indexed: wrong name")
                }
                try Expect.sortedByAge(users.map(\.age))
            })
    }

    func fetchUnique(_ data: Dataset, _ directory: URL) throws -> Trial {
        try fetchTrial(
            data, directory, path: "context.fetch(#Predicate email == x, fetchLimit 1)",
            run: { context, repetition in
                try context.fetch(UserQueries.unique(email: data.rows[data.lookupTarget(repetition)].email))
            },
            check: { users, repetition in try Expect.uniqueUser(users.map(\.email), repetition: repetition, of: data) })
    }

    func fetchScan(_ data: Dataset, _ directory: URL) throws -> Trial {
        try fetchTrial(
            data, directory, path: "context.fetch(#Predicate age >= 65 && score >= 900 && joined < t)",
            run: { context, _ in try context.fetch(UserQueries.scan()) },
            check: { users, _ in
                try Expect.count(users.count, data.scanMatchCount, "fetch-scan")
                if users.contains(where: { !($0.age >= Dataset.scanMinimumAge && $0.score >= Dataset.scanMinimumScore) }
                ) {
                    throw WrongResult("fetch-scan: a result does not match")
                }
            })
    }

    func fetchAll(_ data: Dataset, _ directory: URL) throws -> Trial {
        try fetchTrial(
            data, directory, path: "context.fetch(FetchDescriptor<User>()) of every model",
            run: { context, _ in try context.fetch(FetchDescriptor<User>()) },
            check: { users, repetition in
                try Expect.everyUser(users, email: \.email, age: \.age, repetition: repetition, of: data)
            })
    }

    func updateOne(_ data: Dataset, _ directory: URL) throws -> Trial {
        let (container, ids) = try filledContainer(data, at: directory.appendingPathComponent("store"))
        let context = ModelContext(container)
        var user: User?
        return Trial(
            path: "change one fetched model, context.save()",
            prepare: { repetition in
                user = try context.model(for: ids[data.lookupTarget(repetition)], as: User.self)
                if user == nil { throw WrongResult("update-one: the user to change is missing") }
            },
            run: { repetition in
                user!.score = Double(repetition) + 0.5
                try context.save()
                return user!.persistentModelID
            },
            check: { id, repetition in
                guard repetition == 0 else { return }
                let stored = try ModelContext(container).model(for: id, as: User.self)
                if stored?.score != 0.5 { throw WrongResult("update-one: the change was not stored") }
            })
    }

    func updateLive(_ data: Dataset, _ directory: URL) throws -> Trial {
        let (container, ids) = try filledContainer(data, at: directory.appendingPathComponent("store"))
        let context = ModelContext(container)
        // The child runs on the main thread, where the main actor's work runs.
        let query = MainActor.assumeIsolated {
            LiveQuery(FetchDescriptor<User>(sortBy: [SortDescriptor(\.score)]), in: container.mainContext)
        }
        try MainActor.assumeIsolated { try Expect.count(query.results.count, data.count, "update-live's query") }
        var user: User?
        return Trial(
            path: "change one fetched model, context.save(), then the LiveQuery over all N (sorted) updates",
            prepare: { repetition in
                user = try context.model(for: ids[data.lookupTarget(repetition)], as: User.self)
                if user == nil { throw WrongResult("update-live: the user to change is missing") }
            },
            run: { repetition in
                user!.score = Double(repetition) + 0.5
                try context.save()
                MainActor.assumeIsolated { query.applyPendingChanges() }
                return user!.persistentModelID
            },
            check: { id, _ in
                try MainActor.assumeIsolated {
                    let results = query.results
                    try Expect.count(results.count, data.count, "update-live's query")
                    guard let index = results.firstIndex(where: { $0.persistentModelID == id }) else {
                        throw WrongResult("update-live: the changed user left the query")
                    }
                    let score = results[index].score
                    if (index > 0 && results[index - 1].score > score)
                        || (index + 1 < results.count && results[index + 1].score < score)
                    {
                        throw WrongResult("update-live: the changed user is out of order")
                    }
                }
            })
    }

    func open(_ data: Dataset, _ directory: URL) throws -> Trial {
        let url = try closedFilledStore(data, directory)
        return Trial(
            path: "ModelContainer(for:configurations:) + fetch(FetchDescriptor<User>()) of every model",
            run: { _ in
                let container = try ModelContainer(for: User.self, configurations: configuration(url))
                let context = ModelContext(container)
                let users = try context.fetch(FetchDescriptor<User>())
                return (container, context, users)
            },
            check: { opened, _ in try Expect.count(opened.2.count, data.count, "open") })
    }

    func openPage(_ data: Dataset, _ directory: URL) throws -> Trial {
        let url = try closedFilledStore(data, directory)
        return Trial(
            path: "ModelContainer(for:configurations:) + fetch(sortBy: name, fetchLimit: 20)",
            run: { _ in
                let container = try ModelContainer(for: User.self, configurations: configuration(url))
                let context = ModelContext(container)
                var descriptor = FetchDescriptor<User>(sortBy: [SortDescriptor(\.name)])
                descriptor.fetchLimit = Dataset.pageSize
                return (container, context, try context.fetch(descriptor))
            },
            check: { opened, repetition in
                if repetition == 0 { try Expect.firstPage(opened.2.map(\.name), of: data) }
            })
    }

    func deleteAll(_ data: Dataset, _ directory: URL) throws -> Trial {
        var container: ModelContainer?
        var context: ModelContext?
        return Trial(
            path: "context.delete(model: User.self) (batch delete) + save()",
            prepare: { repetition in
                context = nil
                container = nil
                container = try filledContainer(data, at: freshLocation(directory, repetition)).0
                context = ModelContext(container!)
            },
            run: { _ in
                try context!.delete(model: User.self)
                try context!.save()
                return 0
            },
            check: { _, _ in try Expect.count(try storedCount(container!), 0, "delete-all, counted back") })
    }
}
