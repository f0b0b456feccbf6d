import Foundation
import ModelStore
import ModelStoreAdapterKit

/// The settings of a ``MutantStore``: which bug it has (none for the baseline) and, for a durable
/// store, the file it keeps its data in.
struct MutantStoreConfiguration: DataStoreConfiguration {
    typealias Store = MutantStore
    var mutation: Mutation?
    var file: URL?
    /// Whether other stores (standing in for other processes) may write the same file: the store then
    /// takes their saves in before every operation, under a lock.
    var shared = false
    /// What the store's `queryCapabilities` declare, when not its own (every filter, exactly, or what its
    /// mutation declares): a store that runs less, declared honestly, or a mutant that overstates.
    var queryCapabilities: QueryCapabilities?
    var name = "mutant"
    var schema: Schema?

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.mutation == rhs.mutation && lhs.file == rhs.file && lhs.name == rhs.name
            && lhs.queryCapabilities == rhs.queryCapabilities
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(mutation)
        hasher.combine(file)
        hasher.combine(queryCapabilities)
    }
}

/// The test target's own small store, independent of the adapters: the core's `SnapshotTable` in
/// memory, optionally written whole to one JSON file after every change (and read back on open), with
/// at most one seeded ``Mutation``. Without a mutation it passes the whole conformance suite.
///
/// It keeps history through the adapter kit's `StoreHistory` (in the same file, written with the change
/// it records) and migrates through `SchemaMigrationRunner` over its own `SchemaMigrationStorage`.
final class MutantStore: DataStoreQuerying, DataStoreBatching {
    typealias Snapshot = DefaultSnapshot

    /// What the file holds.
    struct Image: Codable {
        var identifier: String
        var nextKey: Int64
        var snapshots: [DefaultSnapshot]
        /// The schema version the snapshots were written at (`nil` in files of no version: 1.0.0).
        var schemaVersion: Schema.Version?
        /// The history's records, the newest transaction number ever given, and how far history was deleted.
        var history: [StoreHistoryRecord]?
        var lastTransaction: Int64?
        var expiredThrough: Int64?
    }

    struct State {
        var table: SnapshotTable
        var history = StoreHistory()
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
    private static let sharedFiles = LockedValue<Void>(())

    let configuration: MutantStoreConfiguration
    let identifier: String
    let schema: Schema
    let state: LockedValue<State>
    /// Held by a save, and by a prepared two-phase save from its prepare to its finish or abort.
    let writeLock = NSLock()
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
        var history = StoreHistory()
        var identifier = "mutant-" + UUID().uuidString.prefix(8).lowercased()
        if configuration.shared, let file = configuration.file {
            // Stores sharing a file share an identifier, even before the file exists.
            identifier = "mutant-" + String(file.path.utf8.reduce(UInt64(5381)) { $0 &* 33 &+ UInt64($1) }, radix: 36)
        }
        var lastData: Data?
        if let file = configuration.file, FileManager.default.fileExists(atPath: file.path) {
            if migrationPlan != nil { try Self.migrate(configuration, schema: schema, plan: migrationPlan) }
            var image = Image(identifier: identifier, nextKey: 1, snapshots: [])
            do {
                let data = try Data(contentsOf: file)
                lastData = data
                image = try Self.decode(data, schema: schema)
                image.snapshots = try Self.readingExternalValuesIn(image.snapshots, from: configuration)
                try table.load(image.snapshots)
                history = Self.history(in: image, mutation: configuration.mutation)
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
        self.state = LockedValue(State(table: table, history: history, lastData: lastData))
    }

    /// Reads the file's image, its snapshots as models of `schema`.
    static func decode(_ data: Data, schema: Schema) throws -> Image {
        let decoder = JSONDecoder()
        decoder.userInfo[.modelStoreSchema] = schema
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return try decoder.decode(Image.self, from: data)
    }

    var queryCapabilities: QueryCapabilities {
        if let declared = configuration.queryCapabilities { return declared }
        return switch mutation {
        case .inexactOrderingReturnsSubset:
            QueryCapabilities(
                filters: StoreFilter.Kinds.all.subtracting([.ordering, .range]), inexactFilters: [.ordering, .range],
                enforcesUniqueness: true)
        case .approximatesUnasked:
            QueryCapabilities(
                filters: StoreFilter.Kinds.all.subtracting([.textContains, .textPrefix]),
                inexactFilters: [.textContains, .textPrefix], enforcesUniqueness: true)
        default: .all
        }
    }

    // MARK: Writing the file

    enum Change {
        case save(inserts: Bool, updates: Bool, deletes: Bool, equalUpdatesOnly: Bool)
        case batchDelete, batchUpdate, batchInsert, erase, deleteHistory
    }

    /// Writes the table and the history to the file (for a durable store), unless the mutant skips
    /// this kind of change.
    func persist(_ table: SnapshotTable, _ history: StoreHistory, _ change: Change, _ state: inout State) throws {
        guard let file = configuration.file else { return }
        switch (mutation, change) {
        case (.batchDeleteNotPersisted, .batchDelete), (.batchUpdateNotPersisted, .batchUpdate),
            (.batchInsertNotPersisted, .batchInsert), (.eraseNotPersisted, .erase),
            (.historyDeleteNotPersisted, .deleteHistory):
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
        var history = history
        switch (mutation, change) {
        case (.historyOfBatchesNotPersisted, .batchDelete), (.historyOfBatchesNotPersisted, .batchUpdate),
            (.historyOfBatchesNotPersisted, .batchInsert):
            history = state.history
        default: break
        }
        do {
            let image = Image(
                identifier: identifier, nextKey: written.nextPrimaryKey,
                snapshots: try Self.movingExternalValuesOut(written.allSnapshots, configuration: configuration),
                schemaVersion: schema.version, history: has(.historyLostOnReopen) ? [] : history.records,
                lastTransaction: history.lastNumber, expiredThrough: history.expiredThrough)
            // NaN and the infinities, which JSON numbers cannot hold, as strings.
            let encoder = JSONEncoder()
            encoder.nonConformingFloatEncodingStrategy = .convertToString(
                positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
            let data = try encoder.encode(image)
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
    func locked<Result: Sendable>(writing: Bool, _ body: (inout State) throws -> Result) throws -> Result {
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
            let image = try Self.decode(data, schema: schema)
            var table = SnapshotTable(schema: schema)
            try table.load(try Self.readingExternalValuesIn(image.snapshots, from: configuration))
            table.reserveKeys(below: image.nextKey)
            if has(.takesInOnlyInsertsFromOthers) {
                // As a store that tails another's inserts: rows it already has keep its own values.
                let others = table.allSnapshots.filter { state.table.snapshot(for: $0.persistentIdentifier) == nil }
                table = state.table
                try table.load(others)
                table.reserveKeys(below: image.nextKey)
            }
            state.table = table
            state.history = Self.history(in: image, mutation: mutation)
            state.lastData = data
        } catch {
            throw DataStoreError(
                .corrupted, "the mutant store's shared file '\(file.lastPathComponent)' cannot be read",
                underlyingError: ErrorText(error))
        }
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
            if has(.eraseResetsKeys) { next = SnapshotTable(schema: schema) }
            try next.load(kept)
            var history = state.history
            if !has(.historyKeptOnErase) { history.delete(throughNumber: history.lastNumber) }
            try persist(next, history, .erase, &state)
            state.table = next
            state.history = history
        }
    }
}

/// Any error, kept as a Sendable description.
struct ErrorText: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ error: any Error) { description = "\(error)" }
}
