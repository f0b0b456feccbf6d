import Foundation

/// A store's settings, and the factory of the store: SwiftData's `DataStoreConfiguration`.
///
/// A container creates one store per configuration, after injecting its ``schema``.
public protocol DataStoreConfiguration: Hashable, Sendable {
    /// The store type this configuration creates.
    associatedtype Store: DataStore where Store.Configuration == Self

    /// A name for the configuration, unique within a container.
    var name: String { get }

    /// The schema the store holds. The container sets it before creating the store; a
    /// configuration may also name a subset of the container's types to own only those entities.
    var schema: Schema? { get set }

    /// Checks the configuration before any store is created; throws ``DataStoreError/invalidConfiguration``.
    func validate() throws

    /// Whether the store accepts changes: SwiftData's `allowsSave`.
    ///
    /// When it is `false`, the store opens read-only: it writes nothing at all, not when it opens
    /// (no file is created, repaired, migrated or locked for writing) and not later, and every
    /// save, batch operation, erase or history deletion through a container throws
    /// ``DataStoreError/Code/readOnly`` before any store is touched. A configuration type that
    /// does not declare this property is always writable.
    var allowsSave: Bool { get }
}

extension DataStoreConfiguration {
    /// No checks.
    public func validate() throws {}

    /// Always `true`: a configuration that does not declare `allowsSave` opens a writable store.
    public var allowsSave: Bool { true }
}

/// A context's session with a store: SwiftData's `EditingState`.
public struct EditingState: Sendable, Hashable {
    /// Identifies the context.
    public let id: UUID
    /// The author the context records its transactions under, if any.
    public let author: String?

    /// Creates an editing state.
    public init(id: UUID = UUID(), author: String? = nil) {
        self.id = id
        self.author = author
    }
}

/// A place where models are stored: the protocol every adapter implements.
///
/// The contract mirrors SwiftData's custom data stores. Implementation requirements:
///
/// 1. `fetch`, `save` and every other requirement MUST be safe to call from any thread: a
///    container is `Sendable` and its contexts may live on different actors. Guard state with a
///    `Mutex` or a lock.
/// 2. `save` MUST be atomic: either every insert, update and delete of the request is stored,
///    or none is and the store is exactly as before.
/// 3. `save` MUST mint a permanent identifier for every inserted snapshot first, then rewrite
///    references to temporary identifiers in every inserted and updated snapshot
///    (``DataStoreSnapshot/copy(persistentIdentifier:remappedIdentifiers:)``), and return the mapping.
/// 4. `fetch` MUST return only snapshots of the requested entity, and either honour the
///    request's predicate, sort, offset and limit, or throw
///    ``DataStoreError/preferInMemoryFilter`` / ``DataStoreError/preferInMemorySort`` so the
///    context does it. A store that conforms to ``DataStoreQuerying`` reads
///    ``DataStoreFetchRequest/query`` instead of the descriptor (see there).
/// 5. A store MUST NOT keep references to models or contexts; it deals in snapshots and identifiers.
///
/// Run the conformance suite (`ModelStoreConformance`) to check an adapter against all of these.
public protocol DataStore: AnyObject, Sendable {
    /// The configuration type that creates this store.
    associatedtype Configuration: DataStoreConfiguration where Configuration.Store == Self
    /// The store's snapshot type (``DefaultSnapshot`` unless the store needs its own).
    associatedtype Snapshot: DataStoreSnapshot

    /// A string that identifies this store; it goes into every identifier the store mints.
    var identifier: String { get }
    /// The schema the store holds.
    var schema: Schema { get }
    /// The configuration the store was created with.
    var configuration: Configuration { get }

    /// Opens or creates the store.
    ///
    /// MUST NOT modify existing data when it throws: a failed open never overwrites a file. A store
    /// that records a schema version MUST run `migrationPlan`'s stages from that version, custom ones
    /// included (`SchemaMigrationRunner` does it through the store's `SchemaMigrationStorage`), or
    /// refuse a plan it cannot run with ``DataStoreError/Code/unsupportedFeature``; it MUST NOT skip
    /// a stage.
    init(_ configuration: Configuration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws

    /// Returns the snapshots the request asks for.
    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<T, Snapshot>

    /// Returns how many models the request matches, ignoring offset and limit is NOT allowed: the
    /// count MUST equal the number of snapshots `fetch` would return.
    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int

    /// Returns the identifiers of the models `fetch` would return, in the same order.
    func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier]

    /// Stores inserts, updates and deletes atomically; see rules 2 and 3.
    func save(_ request: DataStoreSaveChangesRequest<Snapshot>) throws -> DataStoreSaveChangesResult<Snapshot>

    /// Deletes every model in the store.
    func erase() throws

    /// The current snapshots of these models, for refreshing and rolling back; missing models are left out.
    func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: Snapshot]

    /// A context starts using the store.
    func initializeState(for editingState: EditingState)

    /// A context stops using the store.
    func invalidateState(for editingState: EditingState)

    /// Whether ``save(_:)`` compares ``DataStoreSaveChangesRequest/expectedValues`` with the stored
    /// models under its write's lock and throws ``DataStoreError/Code/conflict`` on a difference
    /// (`false` unless the store says so).
    ///
    /// With `true`, a context whose ``ModelContext/mergePolicy`` is `.error` does not read the
    /// models before saving: it sends the values it last read as the expected ones, and the store's
    /// check is the conflict check. The other policies need the stored values, so they still read.
    var checksExpectedValues: Bool { get }
}

extension DataStore {
    /// Counts the snapshots `fetch` returns.
    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try fetch(request).fetchedSnapshots.count
    }

    /// The identifiers of the snapshots `fetch` returns.
    public func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws
        -> [PersistentIdentifier]
    {
        try fetch(request).fetchedSnapshots.map(\.persistentIdentifier)
    }

    /// Not supported unless the store implements it.
    public func erase() throws { throw DataStoreError.unsupportedFeature }

    /// No cache: returns nothing.
    public func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: Snapshot] { [:] }

    /// Does nothing.
    public func initializeState(for editingState: EditingState) {}

    /// Does nothing.
    public func invalidateState(for editingState: EditingState) {}

    /// `false`: the context checks for conflicts itself before it saves.
    public var checksExpectedValues: Bool { false }
}
