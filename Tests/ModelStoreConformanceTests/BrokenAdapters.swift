import Foundation
import ModelStore
import ModelStoreConformance
import ModelStoreInMemory

/// One deliberate bug of ``BrokenStore``: each is a mistake real adapters make.
enum Bug: String, CaseIterable, Sendable, CustomStringConvertible {
    /// fetch ignores the query's offset.
    case ignoresOffset
    /// fetch returns models that tie on every sort key in reverse identifier order.
    case sortsUnstably
    /// save drops the updated snapshots.
    case dropsUpdates
    /// fetchCount counts before applying offset and limit.
    case countsDifferently
    /// save mints permanent identifiers but leaves references to temporary ones (Apple's sample's bug).
    case forgetsToRemapReferences
    /// The adapter claims durability but keeps everything in memory.
    case losesDataOnReopen
    /// save ignores the deleted snapshots.
    case ignoresDeletes
    /// fetch mixes in snapshots of every other entity.
    case returnsWrongEntity
    /// save deletes every model that refers to a deleted one, as if every rule were `.cascade`.
    case cascadesNullifyRule
    /// The store claims to enforce uniqueness, but on a conflict replaces the stored model instead.
    case acceptsUniqueViolations
    /// The store runs `!=` with SQL's three-valued logic, leaving out `nil`s it declares it runs exactly.
    case appliesSQLNullSemantics

    var description: String { rawValue }

    /// Words the suite's failure message must contain for this bug.
    var symptom: String {
        switch self {
        case .ignoresOffset: "offset ignored"
        case .sortsUnstably: "unstable sort"
        case .dropsUpdates: "update dropped"
        case .countsDifferently: "count disagrees with fetch"
        case .forgetsToRemapReferences: "were not remapped"
        case .losesDataOnReopen: "lost on reopen"
        case .ignoresDeletes: "delete ignored"
        case .returnsWrongEntity: "wrong entity"
        case .cascadesNullifyRule: "delete rule applied wrongly"
        case .acceptsUniqueViolations: "unique constraint not enforced"
        case .appliesSQLNullSemantics: "applied exactly"
        }
    }

    /// The adapter declaration of a store with this bug: what a correct in-memory store declares,
    /// plus durability for the one that claims it.
    var adapter: ConformanceAdapter {
        ConformanceAdapter(
            name: "BrokenStore(\(rawValue))",
            capabilities: self == .losesDataOnReopen ? [.batching, .erase, .durability] : [.batching, .erase],
            nativeFilters: Set(ConformanceFilterKind.allCases)
        ) { _ in
            BrokenStoreConfiguration(bug: self)
        }
    }
}

/// The settings of a ``BrokenStore``.
struct BrokenStoreConfiguration: DataStoreConfiguration {
    typealias Store = BrokenStore
    var bug: Bug
    var name = "broken"
    var schema: Schema?

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.bug == rhs.bug && lhs.name == rhs.name }
    func hash(into hasher: inout Hasher) { hasher.combine(bug) }
}

/// `InMemoryStore` with exactly one bug.
final class BrokenStore: DataStoreQuerying, DataStoreBatching {
    typealias Snapshot = DefaultSnapshot

    let configuration: BrokenStoreConfiguration
    let inner: InMemoryStore
    private let nextKey = LockedValue<Int64>(1_000_000)

    var identifier: String { inner.identifier }
    var schema: Schema { inner.schema }
    var bug: Bug { configuration.bug }
    var queryCapabilities: QueryCapabilities { inner.queryCapabilities }

    init(_ configuration: BrokenStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        var innerConfiguration = InMemoryStoreConfiguration(name: configuration.name)
        innerConfiguration.schema = configuration.schema
        self.inner = try InMemoryStore(innerConfiguration, migrationPlan: migrationPlan)
        self.configuration = configuration
    }

    // MARK: Fetching

    func fetch<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        var request = request
        switch bug {
        case .ignoresOffset:
            request.query?.offset = 0
        case .appliesSQLNullSemantics:
            let filter = request.query?.filter
            request.query?.filter = filter.map(Self.excludingNulls)
        case .returnsWrongEntity:
            var result = try inner.fetch(request)
            for other in schema.entities where other.name != Schema.entityName(for: T.self) {
                var stray = request
                stray.query = StoreQuery(entityName: other.name)
                result.fetchedSnapshots += try inner.fetch(stray).fetchedSnapshots
            }
            return result
        case .sortsUnstably:
            var result = try inner.fetch(request)
            if let sort = request.query?.sort, !sort.isEmpty {
                result.fetchedSnapshots = Self.reversingTies(result.fetchedSnapshots, by: sort.map(\.property))
            }
            return result
        default:
            break
        }
        return try inner.fetch(request)
    }

    /// `a != b` as SQL runs it: false when `a` is null.
    static func excludingNulls(_ filter: StoreFilter) -> StoreFilter {
        switch filter {
        case .compare(let path, .notEqual, let value) where value != .null:
            .and([filter, .not(.compare(path, .equal, .null))])
        case .and(let items): .and(items.map(excludingNulls))
        case .or(let items): .or(items.map(excludingNulls))
        case .not(let item): .not(excludingNulls(item))
        default: filter
        }
    }

    /// Reverses each run of snapshots whose sort keys are all equal.
    static func reversingTies(_ snapshots: [DefaultSnapshot], by properties: [String]) -> [DefaultSnapshot] {
        var result: [DefaultSnapshot] = []
        var run: [DefaultSnapshot] = []
        for snapshot in snapshots {
            if let last = run.last, properties.contains(where: { last[$0] != snapshot[$0] }) {
                result += run.reversed()
                run = []
            }
            run.append(snapshot)
        }
        return result + run.reversed()
    }

    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        guard bug == .countsDifferently else { return try fetch(request).fetchedSnapshots.count }
        var unwindowed = request
        unwindowed.query?.offset = 0
        unwindowed.query?.limit = nil
        return try inner.fetch(unwindowed).fetchedSnapshots.count
    }

    // MARK: Saving

    func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var request = request
        switch bug {
        case .dropsUpdates:
            request.updated = []
        case .ignoresDeletes:
            request.deleted = []
        case .forgetsToRemapReferences:
            return try saveWithoutRemappingReferences(request)
        case .cascadesNullifyRule:
            try cascadeEverything(&request)
        case .acceptsUniqueViolations:
            return try saveReplacingConflicts(request)
        default:
            break
        }
        return try inner.save(request)
    }

    /// Mints permanent identifiers itself and stores the snapshots without rewriting their references.
    private func saveWithoutRemappingReferences(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var remapped: [PersistentIdentifier: PersistentIdentifier] = [:]
        var forwarded = request
        forwarded.inserted = request.inserted.map { snapshot in
            let key = nextKey.withLock { key in
                key += 1
                return key
            }
            let id = PersistentIdentifier.identifier(
                for: inner.identifier, entityName: snapshot.persistentIdentifier.entityName, primaryKey: key)
            remapped[snapshot.persistentIdentifier] = id
            return snapshot.copy(persistentIdentifier: id, remappedIdentifiers: nil)
        }
        _ = try inner.save(forwarded)
        return DataStoreSaveChangesResult(for: identifier, remappedIdentifiers: remapped)
    }

    /// Adds to the deletes every stored model that refers to a deleted one.
    private func cascadeEverything(_ request: inout DataStoreSaveChangesRequest<DefaultSnapshot>) throws {
        let deleted = Set(request.deleted.map(\.persistentIdentifier))
        guard !deleted.isEmpty else { return }
        for entity in schema.entities {
            for snapshot in try allSnapshots(of: entity) where !deleted.contains(snapshot.persistentIdentifier) {
                let refersToDeleted = entity.relationships.contains { relationship in
                    snapshot.values[relationship.slot].referencedIdentifiers.contains { deleted.contains($0) }
                }
                if refersToDeleted {
                    request.deleted.append(snapshot)
                    request.updated.removeAll { $0.persistentIdentifier == snapshot.persistentIdentifier }
                }
            }
        }
    }

    /// On a unique conflict with a stored model, deletes that model and tries again.
    private func saveReplacingConflicts(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var request = request
        while true {
            do {
                return try inner.save(request)
            } catch let error as DataStoreError where error.code == .uniqueConstraintViolation {
                guard let entity = error.entityName.flatMap(schema.entity(named:)),
                    error.propertyNames.count == error.conflictingValues.count,
                    let holder = try allSnapshots(of: entity).first(where: { snapshot in
                        zip(error.propertyNames, error.conflictingValues).allSatisfy { snapshot[$0] == $1 }
                    }),
                    !request.deleted.contains(where: { $0.persistentIdentifier == holder.persistentIdentifier })
                else { throw error }
                request.deleted.append(holder)
                request.updated.removeAll { $0.persistentIdentifier == holder.persistentIdentifier }
            }
        }
    }

    private func allSnapshots(of entity: Schema.Entity) throws -> [DefaultSnapshot] {
        func fetchAll<M: PersistentModel>(_ type: M.Type) throws -> [DefaultSnapshot] {
            try inner.fetch(
                DataStoreFetchRequest(
                    descriptor: FetchDescriptor<M>(), editingState: EditingState(),
                    query: StoreQuery(entityName: entity.name))
            ).fetchedSnapshots
        }
        return try fetchAll(entity.modelType)
    }

    // MARK: Everything else, unchanged

    func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        try inner.cachedSnapshots(for: identifiers, editingState: editingState)
    }

    func erase() throws { try inner.erase() }
    func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws { try inner.delete(request) }
    func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws { try inner.update(request) }
    func insert(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> [PersistentIdentifier] {
        try inner.insert(request)
    }
}
