/// The systems of this benchmark, in report order.
enum Systems {
    /// One system: its name, whether it is ModelStore, and a summary for `--list`.
    struct Entry: Sendable {
        let name: String
        let isModelStore: Bool
        let summary: String
        let make: @Sendable () -> any BenchSystem
    }

    static let all: [Entry] = [
        Entry(
            name: "postgres", isModelStore: true,
            summary: "ModelStore's PostgreSQL store, asynchronous API (fetchAsync, saveAsync)",
            make: { ModelStoreSystem(asynchronous: true, batchInsert: false) }),
        Entry(
            name: "postgres-sync", isModelStore: true,
            summary: "ModelStore's PostgreSQL store, synchronous API (fetch, save): fetches and update-one",
            make: { ModelStoreSystem(asynchronous: false, batchInsert: false) }),
        Entry(
            name: "postgres-batch", isModelStore: true,
            summary: "ModelStore's PostgreSQL store, ModelContext.insert(_:rows:): insert only",
            make: { ModelStoreSystem(asynchronous: true, batchInsert: true) }),
        Entry(
            name: "fluent-postgres", isModelStore: false,
            summary: "Fluent 4 (fluent-kit 1.57) with fluent-postgres-driver 2.14, through its models",
            make: { FluentSystem() }),
        Entry(
            name: "postgres-nio-same-work", isModelStore: false,
            summary: "raw PostgresNIO sending the adapter's own statements, prepared: its limit (3 workloads)",
            make: { PostgresNIOSameWorkSystem() }),
        Entry(
            name: "postgres-nio", isModelStore: false,
            summary: "raw PostgresNIO 1.33, one connection, prepared statements: the floor",
            make: { PostgresNIOSystem() }),
    ]

    static func named(_ name: String) -> (any BenchSystem)? { all.first { $0.name == name }?.make() }

    /// The peers every ModelStore time is divided by.
    static let fluent = "fluent-postgres"
    static let floor = "postgres-nio"
    /// The system that does exactly the adapter's statements' work: the goals' limit.
    static let sameWork = "postgres-nio-same-work"
}
