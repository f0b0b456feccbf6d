import ModelStore
import ModelStoreConformance

/// What a ``SaveHookStore`` runs before a save reaches the wrapped store, set by the test.
public final class SaveHook: Sendable {
    private struct State {
        var body: (@Sendable () throws -> Void)?
        var once = false
        var runs = 0
    }

    private let state = LockedValue(State())

    /// A hook that runs nothing until told to.
    public init() {}

    /// Runs `body` once, before the next save; a throw fails that save with the thrown error.
    public func beforeNextSave(_ body: @escaping @Sendable () throws -> Void) {
        state.withLock { $0 = State(body: body, once: true, runs: $0.runs) }
    }

    /// Runs `body` before every save until ``clear()``; a throw fails the save with the thrown error.
    public func beforeEverySave(_ body: @escaping @Sendable () throws -> Void) {
        state.withLock { $0 = State(body: body, once: false, runs: $0.runs) }
    }

    /// Runs nothing before the saves that follow.
    public func clear() { state.withLock { $0.body = nil } }

    /// How many times a body has run.
    public var runs: Int { state.withLock { $0.runs } }

    /// Runs the body that is set, if any; called by the store before it saves.
    func run() throws {
        let body = state.withLock { state -> (@Sendable () throws -> Void)? in
            guard let body = state.body else { return nil }
            if state.once { state.body = nil }
            state.runs += 1
            return body
        }
        try body?()
    }
}

/// Wraps a configuration so that its store runs a ``SaveHook`` before each save.
public struct SaveHookConfiguration<Inner: DataStoreConfiguration>: DataStoreConfiguration {
    /// The store it opens.
    public typealias Store = SaveHookStore<Inner>
    /// The wrapped configuration.
    public var inner: Inner
    /// What runs before each save.
    public let hook: SaveHook

    /// `inner`, with `hook` run before each save.
    public init(inner: Inner, hook: SaveHook) {
        self.inner = inner
        self.hook = hook
    }

    /// The wrapped configuration's name.
    public var name: String { inner.name }
    /// The wrapped configuration's schema.
    public var schema: Schema? {
        get { inner.schema }
        set { inner.schema = newValue }
    }

    /// Equal when the wrapped configurations are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.inner == rhs.inner }
    /// The wrapped configuration's hash.
    public func hash(into hasher: inout Hasher) { hasher.combine(inner) }
}

/// A test double built on `ForwardingStore`: the wrapped store, with the configuration's
/// ``SaveHook`` run before each save (to fail it, or to let another writer in before it).
public final class SaveHookStore<Inner: DataStoreConfiguration>: ForwardingStore {
    /// The wrapped store's snapshot type.
    public typealias Snapshot = Inner.Store.Snapshot
    /// The wrapped store.
    public let inner: Inner.Store
    /// The configuration it was opened with.
    public let configuration: SaveHookConfiguration<Inner>

    /// Opens the wrapped store.
    public init(_ configuration: SaveHookConfiguration<Inner>, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        inner = try Inner.Store(configuration.inner, migrationPlan: migrationPlan)
        self.configuration = configuration
    }

    /// Runs the hook, then saves in the wrapped store.
    public func save(_ request: DataStoreSaveChangesRequest<Snapshot>) throws -> DataStoreSaveChangesResult<Snapshot> {
        try configuration.hook.run()
        return try inner.save(request)
    }

    /// Forwards the fetch.
    public func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws
        -> DataStoreFetchResult<T, Snapshot>
    {
        try inner.fetch(request)
    }

    /// Forwards the count.
    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try inner.fetchCount(request)
    }

    /// Forwards the identifiers' fetch.
    public func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws
        -> [PersistentIdentifier]
    {
        try inner.fetchIdentifiers(request)
    }
}

/// Querying exactly when the wrapped store is: a double that is not `DataStoreQuerying` receives
/// descriptors, which a querying store does not read.
extension SaveHookStore: DataStoreQuerying where Inner.Store: DataStoreQuerying {
    /// The wrapped store's capabilities.
    public var queryCapabilities: QueryCapabilities { inner.queryCapabilities }
}
