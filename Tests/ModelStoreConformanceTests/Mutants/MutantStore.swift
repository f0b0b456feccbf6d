import Foundation
import ModelStore
import Synchronization

/// The settings of a ``MutantStore``: which bug it has (none for the baseline) and, for a durable
/// store, the file it keeps its data in.
struct MutantStoreConfiguration: DataStoreConfiguration {
    typealias Store = MutantStore
    var mutation: Mutation?
    var file: URL?
    /// Whether other stores (standing in for other processes) may write the same file: the store then
    /// takes their saves in before every operation, under a lock.
    var shared = false
    var name = "mutant"
    var schema: Schema?

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.mutation == rhs.mutation && lhs.file == rhs.file && lhs.name == rhs.name
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(mutation)
        hasher.combine(file)
    }
}

/// The test target's own small store, independent of the adapters: the core's `SnapshotTable` in
/// memory, optionally written whole to one JSON file after every change (and read back on open), with
/// at most one seeded ``Mutation``. Without a mutation it passes the whole conformance suite.
final class MutantStore: DataStoreQuerying, DataStoreBatching {
    typealias Snapshot = DefaultSnapshot

    /// What the file holds.
    struct Image: Codable {
        var identifier: String
        var nextKey: Int64
        var snapshots: [DefaultSnapshot]
    }

    struct State {
        var table: SnapshotTable
        /// Snapshots as they were before the last save changed them (for the stale-cache mutant).
        var previous: [PersistentIdentifier: DefaultSnapshot] = [:]
        /// Snapshots deleted so far (for the cache-returns-deleted mutant).
        var graveyard: [PersistentIdentifier: DefaultSnapshot] = [:]
        /// The table as of the previous write (for the last-save-lost mutant).
        var lagging: SnapshotTable?
        /// The file's contents as this store last read or wrote them (shared files only).
        var lastData: Data?
    }

    /// One lock for every shared file: two stores of one process stand in for two processes.
    private static let sharedFiles = Mutex<Void>(())

    let configuration: MutantStoreConfiguration
    let identifier: String
    let schema: Schema
    private let state: Mutex<State>
    var mutation: Mutation? { configuration.mutation }
    func has(_ mutation: Mutation) -> Bool { configuration.mutation == mutation }

    init(_ configuration: MutantStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the mutant store has no schema", remedy: "Open it in a container")
        }
        self.configuration = configuration
        self.schema = schema
        var table = SnapshotTable(schema: schema)
        var identifier = "mutant-" + UUID().uuidString.prefix(8).lowercased()
        if configuration.shared, let file = configuration.file {
            // Stores sharing a file share an identifier, even before the file exists.
            identifier = "mutant-" + String(file.path.utf8.reduce(UInt64(5381)) { $0 &* 33 &+ UInt64($1) }, radix: 36)
        }
        var lastData: Data?
        if let file = configuration.file, FileManager.default.fileExists(atPath: file.path) {
            var image = Image(identifier: identifier, nextKey: 1, snapshots: [])
            do {
                let decoder = JSONDecoder()
                decoder.userInfo[.modelStoreSchema] = schema
                let data = try Data(contentsOf: file)
                lastData = data
                image = try decoder.decode(Image.self, from: data)
                try table.load(image.snapshots)
            } catch {
                if configuration.mutation == .corruptionNotDetected {
                    image = Image(identifier: identifier, nextKey: 1, snapshots: [])
                    table = SnapshotTable(schema: schema)
                } else {
                    if configuration.mutation == .failedOpenOverwritesFile {
                        try? Data("{}".utf8).write(to: file)
                    }
                    throw DataStoreError(
                        .corrupted, "the mutant store's file '\(file.lastPathComponent)' cannot be read",
                        remedy: "Restore the file from a backup", underlyingError: ErrorText(error))
                }
            }
            if configuration.mutation != .storeIdentifierNotPersisted { identifier = image.identifier }
            if configuration.mutation != .keyCounterNotPersisted { table.reserveKeys(below: image.nextKey) }
        }
        self.identifier = identifier
        self.state = Mutex(State(table: table, lastData: lastData))
    }

    var queryCapabilities: QueryCapabilities {
        switch mutation {
        case .inexactOrderingReturnsSubset:
            QueryCapabilities(
                filters: StoreFilter.Kinds.all.subtracting([.ordering, .range]), inexactFilters: [.ordering, .range],
                enforcesUniqueness: true)
        default: .all
        }
    }

    // MARK: Writing the file

    enum Change {
        case save(inserts: Bool, updates: Bool, deletes: Bool, equalUpdatesOnly: Bool)
        case batchDelete, batchUpdate, batchInsert, erase
    }

    private func persist(_ table: SnapshotTable, _ change: Change, _ state: inout State) throws {
        guard let file = configuration.file else { return }
        switch (mutation, change) {
        case (.batchDeleteNotPersisted, .batchDelete), (.batchUpdateNotPersisted, .batchUpdate),
            (.batchInsertNotPersisted, .batchInsert), (.eraseNotPersisted, .erase):
            return
        case (.updatesPersistedOnlyWithInserts, .save(let inserts, _, _, _)) where !inserts: return
        case (.deletesPersistedOnlyWithInserts, .save(let inserts, let updates, _, _)) where !inserts && !updates:
            return
        case (.skipsWritingEqualUpdates, .save(_, _, _, let equalUpdatesOnly)) where equalUpdatesOnly: return
        default: break
        }
        var written = table
        if has(.lastSaveLost) {
            written = state.lagging ?? SnapshotTable(schema: schema)
            state.lagging = table
        }
        let image = Image(identifier: identifier, nextKey: written.nextPrimaryKey, snapshots: written.allSnapshots)
        do {
            let data = try JSONEncoder().encode(image)
            try data.write(to: file, options: .atomic)
            state.lastData = data
        } catch {
            throw DataStoreError(
                .io, "the mutant store could not write '\(file.lastPathComponent)'", underlyingError: ErrorText(error))
        }
    }

    // MARK: Sharing the file

    /// Runs `body` on the state; for a shared file, under the files' lock and after taking in what other
    /// stores wrote (unless the mutant forgets to).
    private func locked<Result: Sendable>(writing: Bool, _ body: (inout State) throws -> Result) throws -> Result {
        guard configuration.shared else { return try state.withLock { try body(&$0) } }
        return try Self.sharedFiles.withLock { _ in
            try state.withLock { state in
                if !has(.readsOtherStoresOnlyOnOpen) && !(writing && has(.savesOverOtherStores)) {
                    try takeInOtherWrites(&state)
                }
                return try body(&state)
            }
        }
    }

    private func takeInOtherWrites(_ state: inout State) throws {
        guard let file = configuration.file, let data = try? Data(contentsOf: file), data != state.lastData else {
            return
        }
        do {
            let decoder = JSONDecoder()
            decoder.userInfo[.modelStoreSchema] = schema
            let image = try decoder.decode(Image.self, from: data)
            var table = SnapshotTable(schema: schema)
            try table.load(image.snapshots)
            table.reserveKeys(below: image.nextKey)
            state.table = table
            state.lastData = data
        } catch {
            throw DataStoreError(
                .corrupted, "the mutant store's shared file '\(file.lastPathComponent)' cannot be read",
                underlyingError: ErrorText(error))
        }
    }

    // MARK: Saving

    func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var request = request
        switch mutation {
        case .dropsUpdates: request.updated = []
        case .dropsDeletes: request.deleted = []
        default: break
        }
        request.inserted = request.inserted.map(transformValues)
        request.updated = request.updated.map(transformValues)
        return try locked(writing: true) { state in
            request.updated = request.updated.map { keepStoredValues(of: $0, in: state.table) }
            if has(.skipsUpdatesEqualToStored) {
                let table = state.table
                request.updated.removeAll { table.snapshot(for: $0.persistentIdentifier)?.values == $0.values }
            }
            if has(.uniquenessCaseInsensitive) { try refuseCaseInsensitiveDuplicates(request, state.table) }
            if has(.cascadesEveryRule) { cascadeEverything(&request, state.table) }
            var next = state.table
            var result: DataStoreSaveChangesResult<DefaultSnapshot>
            do {
                if has(.uniquenessCheckedOnInsertOnly) {
                    result = try saveUpdatesUnchecked(request, &next)
                } else {
                    result = try next.save(request, storeIdentifier: identifier)
                }
            } catch let error as DataStoreError where error.code == .uniqueConstraintViolation {
                if has(.notAtomicOnUniqueViolation), !request.inserted.isEmpty {
                    var partial = request
                    partial.inserted = Array(request.inserted.prefix(1))
                    if (try? next.save(partial, storeIdentifier: identifier)) != nil { state.table = next }
                }
                guard has(.acceptsUniqueViolations) else { throw error }
                result = try saveReplacingConflicts(request, &next)
            }
            try corruptAfterSave(request, result.remappedIdentifiers, &next)
            let equalUpdatesOnly =
                request.inserted.isEmpty && request.deleted.isEmpty
                && request.updated.allSatisfy {
                    state.table.snapshot(for: $0.persistentIdentifier)?.values == $0.values
                }
            let change = Change.save(
                inserts: !request.inserted.isEmpty, updates: !request.updated.isEmpty,
                deletes: !request.deleted.isEmpty,
                equalUpdatesOnly: equalUpdatesOnly)
            try persist(next, change, &state)
            state.previous = [:]
            for snapshot in request.updated {
                state.previous[snapshot.persistentIdentifier] = state.table.snapshot(for: snapshot.persistentIdentifier)
            }
            for snapshot in request.deleted {
                state.graveyard[snapshot.persistentIdentifier] = state.table.snapshot(
                    for: snapshot.persistentIdentifier)
            }
            state.table = next
            return mintingMutated(result, request)
        }
    }

    /// Saves inserts and deletes through the table's checks, and stores the updates without checking
    /// uniqueness (the bug of a store that checks unique values only when models are inserted).
    private func saveUpdatesUnchecked(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, _ table: inout SnapshotTable
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var checked = request
        checked.updated = []
        let result = try table.save(checked, storeIdentifier: identifier)
        table.applyUpdate(
            request.updated.map {
                $0.copy(persistentIdentifier: $0.persistentIdentifier, remappedIdentifiers: result.remappedIdentifiers)
            })
        return result
    }

    /// The result the context receives, for the minting mutants.
    private func mintingMutated(
        _ result: DataStoreSaveChangesResult<DefaultSnapshot>, _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var map = result.remappedIdentifiers
        switch mutation {
        case .mintsTemporaryIdentifiers:
            for key in map.keys { map[key] = key }
        case .mintsSameIdentifierTwice:
            let byEntity = Dictionary(grouping: request.inserted.map(\.persistentIdentifier), by: \.entityName)
            for ids in byEntity.values where ids.count > 1 { map[ids[1]] = map[ids[0]] }
        case .mintsForAnotherStore:
            for (key, value) in map {
                guard case .int(let primaryKey) = value.primaryKey else { continue }
                map[key] = PersistentIdentifier.identifier(
                    for: "another-store", entityName: value.entityName, primaryKey: primaryKey)
            }
        default:
            return result
        }
        return DataStoreSaveChangesResult(for: identifier, remappedIdentifiers: map)
    }

    /// Applies the save mutants that corrupt what was just stored.
    private func corruptAfterSave(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, _ map: [PersistentIdentifier: PersistentIdentifier],
        _ table: inout SnapshotTable
    ) throws {
        switch mutation {
        case .remapsNothingInInserted, .remapsToOneOnly:
            let toManyOnly = has(.remapsToOneOnly)
            let restored = request.inserted.compactMap { original -> DefaultSnapshot? in
                guard let id = map[original.persistentIdentifier], var stored = table.snapshot(for: id) else {
                    return nil
                }
                for relationship in original.entity.relationships where !toManyOnly || !relationship.isToOne {
                    stored.values[relationship.slot] = original.values[relationship.slot]
                }
                return stored
            }
            table.applyUpdate(restored)
        case .remapsNothingInUpdated:
            let restored = request.updated.compactMap { original -> DefaultSnapshot? in
                guard var stored = table.snapshot(for: original.persistentIdentifier) else { return nil }
                for relationship in original.entity.relationships {
                    stored.values[relationship.slot] = original.values[relationship.slot]
                }
                return stored
            }
            table.applyUpdate(restored)
        case .dropsInsertsAfterFirst:
            table.delete(request.inserted.dropFirst().compactMap { map[$0.persistentIdentifier] })
        case .shiftsUpdates, .swapsInsertedRows:
            let ids =
                has(.shiftsUpdates)
                ? request.updated.map(\.persistentIdentifier)
                : request.inserted.compactMap { map[$0.persistentIdentifier] }
            for group in Dictionary(grouping: ids, by: \.entityName).values where group.count > 1 {
                let stored = group.compactMap { table.snapshot(for: $0) }
                guard stored.count == group.count else { continue }
                table.applyUpdate(
                    stored.indices.map { index in
                        DefaultSnapshot(
                            persistentIdentifier: group[(index + 1) % group.count], entity: stored[index].entity,
                            values: stored[index].values)
                    })
            }
        default:
            break
        }
    }

    /// For the mutants that ignore some kinds of change: the update with the stored values kept.
    private func keepStoredValues(of snapshot: DefaultSnapshot, in table: SnapshotTable) -> DefaultSnapshot {
        guard
            [.dropsNilUpdates, .dropsRelationshipUpdates, .dropsToManyUpdates, .dropsClearedReferences].contains(
                mutation),
            let stored = table.snapshot(for: snapshot.persistentIdentifier)
        else { return snapshot }
        var kept = snapshot
        switch mutation {
        case .dropsNilUpdates:
            for attribute in snapshot.entity.attributes where snapshot.values[attribute.slot] == .null {
                kept.values[attribute.slot] = stored.values[attribute.slot]
            }
        case .dropsClearedReferences:
            for relationship in snapshot.entity.relationships
            where snapshot.values[relationship.slot] == .null || snapshot.values[relationship.slot] == .references([]) {
                kept.values[relationship.slot] = stored.values[relationship.slot]
            }
        default:
            for relationship in snapshot.entity.relationships
            where has(.dropsRelationshipUpdates) || !relationship.isToOne {
                kept.values[relationship.slot] = stored.values[relationship.slot]
            }
        }
        return kept
    }

    /// For the value mutants: the snapshot with its values changed the way the bug changes them.
    private func transformValues(_ snapshot: DefaultSnapshot) -> DefaultSnapshot {
        guard mutation?.requirement == "DataStore.save (values)" else { return snapshot }
        var changed = snapshot
        changed.values = snapshot.values.map(transform)
        return changed
    }

    private func transform(_ value: StoreValue) -> StoreValue {
        switch (mutation, value) {
        case (.normalizesStrings, .string(let string)): .string(string.precomposedStringWithCanonicalMapping)
        case (.dropsSignOfZero, .double(let number)) where number == 0: .double(0)
        case (.truncatesDates, .date(let date)):
            .date(
                Date(timeIntervalSinceReferenceDate: (date.timeIntervalSinceReferenceDate * 1000).rounded(.down) / 1000)
            )
        case (.decimalsThroughDouble, .decimal(let decimal)):
            .decimal(Decimal(NSDecimalNumber(decimal: decimal).doubleValue))
        case (.clampsLargeUnsigned, .uint(let number)): .uint(min(number, UInt64(Int64.max)))
        case (_, .array(let items)): .array(items.map(transform))
        case (_, .dictionary(let items)): .dictionary(items.mapValues(transform))
        default: value
        }
    }

    /// Adds to the deletes every stored model that refers to a deleted one, as if every rule were `.cascade`.
    private func cascadeEverything(
        _ request: inout DataStoreSaveChangesRequest<DefaultSnapshot>, _ table: SnapshotTable
    ) {
        let deleted = Set(request.deleted.map(\.persistentIdentifier))
        guard !deleted.isEmpty else { return }
        for snapshot in table.allSnapshots where !deleted.contains(snapshot.persistentIdentifier) {
            let refersToDeleted = snapshot.entity.relationships.contains { relationship in
                snapshot.values[relationship.slot].referencedIdentifiers.contains { deleted.contains($0) }
            }
            if refersToDeleted {
                request.deleted.append(snapshot)
                request.updated.removeAll { $0.persistentIdentifier == snapshot.persistentIdentifier }
            }
        }
    }

    private func refuseCaseInsensitiveDuplicates(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, _ table: SnapshotTable
    ) throws {
        var seen: Set<String> = []
        for snapshot in table.allSnapshots + request.inserted {
            for attribute in snapshot.entity.attributes where attribute.isUnique {
                guard case .string(let string) = snapshot.values[attribute.slot] else { continue }
                let key = "\(snapshot.entity.name).\(attribute.name)=\(string.lowercased())"
                if !seen.insert(key).inserted {
                    throw DataStoreError(
                        .uniqueConstraintViolation, "a unique value is taken", entityName: snapshot.entity.name,
                        propertyNames: [attribute.name])
                }
            }
        }
    }

    /// On a unique conflict with a stored model, deletes that model and tries again.
    private func saveReplacingConflicts(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, _ table: inout SnapshotTable
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        var request = request
        while true {
            do {
                return try table.save(request, storeIdentifier: identifier)
            } catch let error as DataStoreError where error.code == .uniqueConstraintViolation {
                guard let entity = error.entityName.flatMap(schema.entity(named:)),
                    error.propertyNames.count == error.conflictingValues.count,
                    let holder = table.snapshots(of: entity.name).first(where: { snapshot in
                        zip(error.propertyNames, error.conflictingValues).allSatisfy { snapshot[$0] == $1 }
                    }),
                    !request.deleted.contains(where: { $0.persistentIdentifier == holder.persistentIdentifier })
                else { throw error }
                request.deleted.append(holder)
                request.updated.removeAll { $0.persistentIdentifier == holder.persistentIdentifier }
            }
        }
    }

    // MARK: Fetching

    enum Purpose { case fetch, count, identifiers }

    func fetch<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> DataStoreFetchResult<
        T, DefaultSnapshot
    > {
        DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: try rows(request, for: .fetch))
    }

    func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        let count = try rows(request, for: .count).count
        return has(.countOffByOne) && count > 0 ? count + 1 : count
    }

    func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> [PersistentIdentifier] {
        let ids = try rows(request, for: .identifiers).map(\.persistentIdentifier)
        return has(.identifiersReversed) ? ids.reversed() : ids
    }

    private func rows<T: PersistentModel>(_ request: DataStoreFetchRequest<T>, for purpose: Purpose) throws
        -> [DefaultSnapshot]
    {
        let entityName = Schema.entityName(for: T.self)
        var query = request.query ?? StoreQuery(entityName: entityName)
        if has(.refusesDeclaredTextFilters), let kinds = query.filter?.kinds,
            !kinds.isDisjoint(with: [.textContains, .textPrefix])
        {
            throw DataStoreError.preferInMemoryFilter
        }
        let exactFilter = query.filter
        if has(.ignoresFilter) || (has(.countIgnoresFilter) && purpose == .count) { query.filter = nil }
        query.filter = query.filter.map(mutatedFilter)
        switch mutation {
        case .ignoresSort: query.sort = []
        case .identifiersIgnoreSort where purpose == .identifiers: query.sort = []
        case .ignoresSortDirection:
            query.sort = query.sort.map { StoreSortKey(property: $0.property, comparison: $0.comparison) }
        case .sortsOnlyByFirstKey: query.sort = Array(query.sort.prefix(1))
        case .caseInsensitiveSort:
            query.sort = query.sort.map {
                StoreSortKey(property: $0.property, ascending: $0.ascending, comparison: .caseInsensitive)
            }
        default: break
        }
        var offset = query.offset
        var limit = query.limit
        query.offset = 0
        query.limit = nil
        var rows = try locked(writing: false) { try $0.table.fetch(query) }
        if has(.fetchServesValuesBeforeLastSave) {
            let previous = try locked(writing: false) { $0.previous }
            rows = rows.map { previous[$0.persistentIdentifier] ?? $0 }
        }
        if has(.inexactOrderingReturnsSubset), let kinds = exactFilter?.kinds,
            !kinds.isDisjoint(with: [.ordering, .range]),
            !rows.isEmpty
        {
            rows.removeLast()
        }
        if let first = query.sort.first {
            if has(.nilsSortLast) && first.ascending {
                rows = rows.filter { $0[first.property] != .null } + rows.filter { $0[first.property] == .null }
            }
            if has(.reversesTies) { rows = Self.reversingTies(rows, by: query.sort.map(\.property)) }
        }
        if has(.mixesInOtherEntity), let other = schema.entities.first(where: { $0.name != entityName }) {
            rows += state.withLock { $0.table.snapshots(of: other.name) }
        }
        if has(.returnsFirstTwice), purpose == .fetch, let first = rows.first { rows.append(first) }
        switch mutation {
        case .ignoresOffset: offset = 0
        case .ignoresLimit: limit = nil
        case .limitOffByOne: limit = limit.map { $0 + 1 }
        case .countIgnoresWindow where purpose == .count: (offset, limit) = (0, nil)
        case .identifiersIgnoreWindow where purpose == .identifiers: (offset, limit) = (0, nil)
        default: break
        }
        return Array(rows.dropFirst(offset).prefix(limit ?? .max))
    }

    /// The filter as the mutant runs it.
    private func mutatedFilter(_ filter: StoreFilter) -> StoreFilter {
        func insensitive(_ pattern: String) -> StoreTextOperation {
            .matchesRegex("(?i)" + pattern)
        }
        switch (mutation, filter) {
        case (.caseInsensitiveEquality, .compare(let path, .equal, .string(let string))):
            return .text(path, insensitive("^" + NSRegularExpression.escapedPattern(for: string) + "$"))
        case (.containsCaseInsensitive, .text(let path, .contains(let string))) where !string.isEmpty:
            return .text(path, insensitive(NSRegularExpression.escapedPattern(for: string)))
        case (.prefixCaseInsensitive, .text(let path, .hasPrefix(let string))) where !string.isEmpty:
            return .text(path, insensitive("^" + NSRegularExpression.escapedPattern(for: string)))
        case (.sqlNullNotEqual, .compare(let path, .notEqual, let value)) where value != .null:
            return .and([filter, .not(.compare(path, .equal, .null))])
        case (.rangeAlwaysIncludesUpper, .range(let path, var range)):
            range.includesUpper = true
            return .range(path, range)
        case (.membershipIgnored, .isIn): return .constant(true)
        case (.identifierFilterIgnored, .identifiers): return .constant(true)
        case (.nilRelationshipMatchesEverything, .compare(let path, let op, let value)) where !path.isDirect:
            let first = StorePath([path.components[0]])
            return .or([.compare(path, op, value), .compare(first, .equal, .null)])
        case (.negationDropped, .not(let inner)): return mutatedFilter(inner)
        case (.disjunctionAsConjunction, .or(let items)): return .and(items.map(mutatedFilter))
        case (_, .and(let items)): return .and(items.map(mutatedFilter))
        case (_, .or(let items)): return .or(items.map(mutatedFilter))
        case (_, .not(let inner)): return .not(mutatedFilter(inner))
        default: return filter
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

    // MARK: Cache and erase

    func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        try locked(writing: false) { state in
            var found: [PersistentIdentifier: DefaultSnapshot] = [:]
            for id in identifiers {
                found[id] = state.table.snapshot(for: id)
                if has(.cacheReturnsStale), let stale = state.previous[id] { found[id] = stale }
                if has(.cacheReturnsDeleted), found[id] == nil { found[id] = state.graveyard[id] }
            }
            return found
        }
    }

    func erase() throws {
        try locked(writing: true) { state in
            var next = state.table
            let kept = has(.eraseKeepsLogEntries) ? next.snapshots(of: "LogEntry") : []
            next.removeAll()
            try next.load(kept)
            try persist(next, .erase, &state)
            state.table = next
        }
    }

    // MARK: Batching

    func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        guard !has(.batchDeleteIgnored) else { return }
        try locked(writing: true) { state in
            var next = state.table
            let ids =
                has(.batchDeleteTooBroad)
                ? next.snapshots(of: Schema.entityName(for: T.self)).map(\.persistentIdentifier) : request.identifiers
            for id in ids { state.graveyard[id] = next.snapshot(for: id) }
            next.delete(ids)
            try persist(next, .batchDelete, &state)
            state.table = next
        }
    }

    func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        guard !has(.batchUpdateIgnored) else { return }
        try locked(writing: true) { state in
            var next = state.table
            let ids =
                has(.batchUpdateAllOfEntity)
                ? next.snapshots(of: Schema.entityName(for: T.self)).map(\.persistentIdentifier) : request.identifiers
            if has(.batchUpdateNotAtomic) {
                for id in ids {
                    let updated = try next.prepareUpdate([id], values: request.values)
                    next.applyUpdate(updated)
                    state.table = next
                }
            } else if has(.batchUpdateUnchecked) {
                next.applyUpdate(
                    ids.compactMap { id in
                        guard var snapshot = next.snapshot(for: id) else { return nil }
                        for (slot, value) in request.values { snapshot.values[slot] = value }
                        return snapshot
                    })
            } else {
                next.applyUpdate(try next.prepareUpdate(ids, values: request.values))
            }
            try persist(next, .batchUpdate, &state)
            state.table = next
        }
    }

    func insert(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> [PersistentIdentifier] {
        try locked(writing: true) { state in
            var next = state.table
            var ids: [PersistentIdentifier] = []
            let chunks = has(.batchInsertNotAtomic) ? request.snapshots.map { [$0] } : [request.snapshots]
            for chunk in chunks {
                let saved = try next.save(
                    DataStoreSaveChangesRequest(
                        editingState: request.editingState, inserted: chunk, updated: [], deleted: []),
                    storeIdentifier: identifier)
                ids += chunk.map { saved.remappedIdentifiers[$0.persistentIdentifier] ?? $0.persistentIdentifier }
                if has(.batchInsertNotAtomic) { state.table = next }
            }
            if !has(.batchInsertStoresNothing) {
                try persist(next, .batchInsert, &state)
                state.table = next
            }
            switch mutation {
            case .batchInsertIdentifiersReversed: return ids.reversed()
            case .batchInsertTemporaryIdentifiers: return request.snapshots.map(\.persistentIdentifier)
            default: return ids
            }
        }
    }
}

/// Any error, kept as a Sendable description.
struct ErrorText: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ error: any Error) { description = "\(error)" }
}
