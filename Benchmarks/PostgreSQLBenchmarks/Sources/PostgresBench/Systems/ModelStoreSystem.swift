import Foundation
import ModelStore
import ModelStorePostgreSQL

/// ModelStore's PostgreSQL store through the public API: a container, contexts, models and saves.
///
/// With `asynchronous` (the `postgres` system) fetches and saves are `fetchAsync` and `saveAsync`;
/// without it (`postgres-sync`) they are the synchronous `fetch` and `save` a SwiftData user writes.
/// `batchInsert` (`postgres-batch`) inserts with `ModelContext.insert(_:rows:)` instead of models.
struct ModelStoreSystem: BenchSystem {
    let asynchronous: Bool
    let batchInsert: Bool

    func notApplicable(_ workload: Workload) -> String? {
        if batchInsert && workload != .insert { return "the batch variant is measured for insert only" }
        if !asynchronous && [.insert, .open, .deleteAll].contains(workload) {
            return "the synchronous variant is measured for fetches and update-one only"
        }
        return nil
    }

    private func configuration(_ namespace: String) throws -> PostgreSQLStoreConfiguration {
        try .postgreSQL(Server.storeURL(), namespace: namespace)
    }

    /// A container over an empty namespace (dropped first).
    private func emptyContainer(_ namespace: String) async throws -> ModelContainer {
        try await Server.dropNamespace(namespace)
        return try ModelContainer(for: User.self, configurations: configuration(namespace))
    }

    /// A container whose store holds every user, inserted with the batch API; the identifiers in row order.
    private func filledContainer(_ data: Dataset, _ namespace: String) async throws -> (
        ModelContainer, PersistentIdentifiers
    ) {
        let container = try await emptyContainer(namespace)
        let ids = try ModelContext(container).insert(User.self, rows: data.rows.map(UserQueries.assignments))
        try Expect.count(ids.count, data.count, "filling the store")
        return (container, ids)
    }

    private func fetch<T: PersistentModel>(_ context: ModelContext, _ descriptor: FetchDescriptor<T>) async throws
        -> [T]
    {
        asynchronous ? try await context.fetchAsync(descriptor) : try context.fetch(descriptor)
    }

    private func save(_ context: ModelContext) async throws {
        if asynchronous { try await context.saveAsync() } else { try context.save() }
    }

    private var api: String { asynchronous ? "fetchAsync" : "fetch" }
    private var saveAPI: String { asynchronous ? "saveAsync()" : "save()" }

    func trial(_ workload: Workload, data: Dataset, namespace: String) async throws -> Trial {
        switch workload {
        case .insert: return try await insert(data, namespace)
        case .fetchIndexed:
            return try await fetchTrial(
                data, namespace, path: "context.\(api)(#Predicate name == \"Jane\", sortBy: age)",
                run: { context, _ in try await fetch(context, UserQueries.indexed()) },
                check: { users, _ in try Expect.indexed(names: users.map(\.name), ages: users.map(\.age), of: data) })
        case .fetchUnique:
            return try await fetchTrial(
                data, namespace, path: "context.\(api)(#Predicate email == x, fetchLimit 1)",
                run: { context, repetition in
                    try await fetch(context, UserQueries.unique(email: data.rows[data.lookupTarget(repetition)].email))
                },
                check: { users, repetition in
                    try Expect.unique(emails: users.map(\.email), repetition: repetition, of: data)
                })
        case .fetchScan:
            return try await fetchTrial(
                data, namespace, path: "context.\(api)(#Predicate age >= 65 && score >= 900 && joined < t)",
                run: { context, _ in try await fetch(context, UserQueries.scan()) },
                check: { users, _ in
                    try Expect.scan(
                        users.map {
                            UserRow(name: $0.name, age: $0.age, email: $0.email, joined: $0.joined, score: $0.score)
                        }, of: data)
                })
        case .updateOne: return try await updateOne(data, namespace)
        case .open: return try await open(data, namespace)
        case .deleteAll: return try await deleteAll(data, namespace)
        }
    }

    private func insert(_ data: Dataset, _ namespace: String) async throws -> Trial {
        var container: ModelContainer?
        var context: ModelContext?
        let prepare: (Int) async throws -> Void = { _ in
            context = nil
            container = nil
            container = try await emptyContainer(namespace)
            context = ModelContext(container!)
        }
        let check: (Int, Int) async throws -> Void = { inserted, _ in
            try Expect.count(inserted, data.count, "insert")
            try Expect.count(
                try ModelContext(container!).fetchCount(FetchDescriptor<User>()), data.count, "insert, counted back")
        }
        if batchInsert {
            return Trial(
                path: "ModelContext.insert(User.self, rows:) (batch, one transaction)", prepare: prepare,
                run: { _ in try context!.insert(User.self, rows: data.rows.map(UserQueries.assignments)).count },
                check: check)
        }
        return Trial(
            path: "User models, context.insert each, one \(saveAPI)", prepare: prepare,
            run: { _ in
                let context = context!
                for row in data.rows { context.insert(User(row)) }
                try await save(context)
                return data.count
            },
            check: check)
    }

    /// A fetch from a store of N, each repetition in a fresh context (no model registered yet).
    private func fetchTrial(
        _ data: Dataset, _ namespace: String, path: String,
        run: @escaping (ModelContext, Int) async throws -> [User], check: @escaping ([User], Int) throws -> Void
    ) async throws -> Trial {
        let (container, _) = try await filledContainer(data, namespace)
        var context: ModelContext?
        return Trial(
            path: path + ", fresh context", prepare: { _ in context = ModelContext(container) },
            run: { repetition in try await run(context!, repetition) }, check: check)
    }

    private func updateOne(_ data: Dataset, _ namespace: String) async throws -> Trial {
        let (container, ids) = try await filledContainer(data, namespace)
        let context = ModelContext(container)
        var user: User?
        return Trial(
            path: "change one fetched model, context.\(saveAPI) (one statement: versioned UPDATE + history row)",
            prepare: { repetition in
                user = try context.model(for: ids[data.lookupTarget(repetition)], as: User.self)
                if user == nil { throw WrongResult("update-one: the user to change is missing") }
            },
            run: { repetition in
                user!.score = Double(repetition) + 0.5
                try await save(context)
                return user!.persistentModelID
            },
            check: { id, repetition in
                let stored = try ModelContext(container).model(for: id, as: User.self)
                if stored?.score != Double(repetition) + 0.5 {
                    throw WrongResult("update-one: the change was not stored")
                }
            })
    }

    private func open(_ data: Dataset, _ namespace: String) async throws -> Trial {
        _ = try await filledContainer(data, namespace)
        let configuration = try configuration(namespace)
        return Trial(
            path: "ModelContainer(for:configurations:) (connect, check schema) + fetchAsync of every model",
            run: { _ in
                let container = try ModelContainer(for: User.self, configurations: configuration)
                let context = ModelContext(container)
                return (container, context, try await context.fetchAsync(FetchDescriptor<User>()))
            },
            check: { opened, _ in try Expect.count(opened.2.count, data.count, "open") })
    }

    /// One container for every repetition, as an app keeps one (and as the peers keep their pool or
    /// connection): each repetition refills the table untimed, with the batch API, after a `VACUUM`
    /// of the table (not of the store's history), so the `DELETE` finds the N rows on N rows' pages,
    /// as after Fluent's `TRUNCATE`, not behind the dead rows of earlier repetitions.
    private func deleteAll(_ data: Dataset, _ namespace: String) async throws -> Trial {
        let container = try await emptyContainer(namespace)
        var context: ModelContext?
        return Trial(
            path: "context.delete(model: User.self) (batch delete) + saveAsync(), one container",
            prepare: { _ in
                context = nil
                try await Server.vacuum("\"User\"", in: namespace)
                let ids = try ModelContext(container).insert(User.self, rows: data.rows.map(UserQueries.assignments))
                try Expect.count(ids.count, data.count, "filling the store")
                context = ModelContext(container)
            },
            run: { _ in
                try context!.delete(model: User.self)
                try await context!.saveAsync()
                return 0
            },
            check: { _, _ in
                try Expect.count(try ModelContext(container).fetchCount(FetchDescriptor<User>()), 0, "delete-all")
            })
    }
}
