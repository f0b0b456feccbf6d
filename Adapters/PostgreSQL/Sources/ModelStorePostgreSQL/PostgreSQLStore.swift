import Foundation
import ModelStore
import PostgresNIO

/// A store in a PostgreSQL database, shared by any number of processes on any number of machines:
/// one table per entity in the configuration's namespace, queries run in SQL where SQL gives
/// Swift's results, and optimistic concurrency per row.
///
/// ## Storage
/// Each entity is a table with a `bigint` primary key, a `_version` column, and one typed column per
/// attribute and per to-one relationship (a foreign key); each to-many relationship is a join table
/// that keeps the related models' order. Unique constraints are unique indexes; declared indexes
/// are indexes. `modelstore_meta` records the schema and its version; opening a store of an older
/// schema version migrates it in one transaction (see `StoreOpener`).
///
/// ## Many writers: optimistic concurrency
/// Every write raises the row's `_version`. The store remembers, per context (per
/// ``EditingState``, from ``initializeState(for:)`` to ``invalidateState(for:)``), the version of
/// each row the context first read by a fetch, or last read by ``cachedSnapshots(for:editingState:)``
/// (which is what a context's `rollback()` and refresh use), or wrote. A save updates or deletes a
/// row only at that version (`WHERE _version = read`); if another context or process changed it
/// since, the save fails with ``DataStoreError/Code/conflict`` naming the models, and nothing of it
/// is stored. A row the context never read is written without a check. A fetch does not replace a
/// version already remembered, because the context may hold unsaved changes based on it: a context
/// that refetched a model another process changed, and then changes it, gets a conflict, never a
/// lost update. After a conflict the rows of the failed save are marked stale, so saving them
/// again fails too, until the context rolls back and fetches them again (the fetch refreshes the
/// unchanged models and remembers the current versions); then apply the change again.
///
/// ## Threads
/// Every call is asynchronous underneath (PostgresNIO's `PostgresClient` pool, on NIO's event
/// loops). The ``DataStoreAsynchronous`` requirements suspend; the synchronous ``DataStore`` calls
/// block only their calling thread, and refuse to run on an event-loop thread.
public final class PostgreSQLStore: DataStoreQuerying, DataStoreBatching, DataStoreAsynchronous {
    /// The store's snapshot type.
    public typealias Snapshot = DefaultSnapshot

    /// The store's identifier, kept in the database so identifiers stay valid across opens.
    public let identifier: String
    /// The schema.
    public let schema: Schema
    /// The configuration.
    public let configuration: PostgreSQLStoreConfiguration

    let layouts: [String: TableLayout]
    let database: Database
    let opener: StoreOpener
    /// The namespace's history (``StoreOpener/history``, made once).
    let history: HistoryLog
    /// The row versions each context read, by editing-state identifier.
    let versions = LockedValue<[UUID: [PersistentIdentifier: Int64]]>([:])
    /// The text of the one statement that saves a model of an entity (``OneStatementUpdate``), by
    /// entity name, for the entities without relationships: built once, not at every save.
    let oneStatementTexts: [String: String]
    /// Whether the namespace has the function that deletes every row of a table in one call
    /// (``HistoryLog/everyRowFunctionSQL()``): created at the open when missing; turned off when a
    /// call finds it gone.
    let hasEveryRowFunction = LockedValue(false)
    /// The plans kept per query shape and the push-down answers per condition shape.
    let queryCache = LockedValue(PostgreSQLQueryCache())
    /// Whether the namespace has the function that records a save's history in one call
    /// (``HistoryLog/recordFunctionSQL()``): created at the open when missing; turned off when a
    /// call finds it gone.
    let hasRecordFunction = LockedValue(false)
    /// The saves waiting to be committed together, and the counts of commits (see ``groupsCommits``).
    let commitGroups: CommitGroups

    /// Connects, then creates or migrates the store's tables in one transaction: through the
    /// plan's stages when it has some from the stored version (custom stages' closures run on the
    /// calling thread), else by a lightweight `ALTER`.
    ///
    /// Throws ``DataStoreError/Code/io`` when the server cannot be reached (the message names the
    /// URL without the password), ``DataStoreError/Code/invalidConfiguration`` when it refuses
    /// the credentials, ``DataStoreError/Code/corrupted`` for a namespace that holds another
    /// program's tables, ``DataStoreError/Code/invalidSchema`` for a newer schema or a change a
    /// lightweight migration cannot make, and a failing migration stage's error, which names the
    /// stage. A failed open changes nothing.
    public init(_ configuration: PostgreSQLStoreConfiguration, migrationPlan: (any SchemaMigrationPlan.Type)?) throws {
        guard let schema = configuration.schema else {
            throw DataStoreError(
                .invalidConfiguration, "the PostgreSQL store '\(configuration.redactedURL)' has no schema",
                remedy: "Create it through a ModelContainer, or set the configuration's schema")
        }
        try configuration.validate()
        self.configuration = configuration
        self.schema = schema
        commitGroups = CommitGroups(enabled: configuration.groupCommit)
        let layouts = TableLayout.layouts(
            of: schema, namespace: configuration.namespace, fillFactor: configuration.fillFactor)
        self.layouts = layouts
        let database = Database(configuration)
        self.database = database
        let opener = StoreOpener(
            schema: schema, layouts: layouts, namespace: configuration.namespace, url: configuration.redactedURL)
        self.opener = opener
        let history = opener.history
        self.history = history
        oneStatementTexts = layouts.compactMapValues { OneStatementUpdate.sql(for: $0, history: history) }
        let plan = migrationPlan.map { SendablePlan(type: $0) }
        do {
            try database.wait { try await database.connectFirst(configuration) }
            let opened = try database.wait { thread in
                try await database.transaction("opening") { session in
                    let identifier = try await opener.open(session, migrationPlan: plan?.type, stagesOn: thread)
                    // Under the namespace's lock, which the open took.
                    return (
                        identifier, try await history.createEveryRowFunctionIfMissing(session),
                        try await history.createRecordFunctionIfMissing(session)
                    )
                }
            }
            identifier = opened.0
            hasEveryRowFunction.withLock { $0 = opened.1 }
            hasRecordFunction.withLock { $0 = opened.2 }
        } catch {
            database.close()
            throw error
        }
    }

    /// Closes the store's connections; the store must not be used afterwards.
    public func close() { database.close() }

    /// Every filter kind, paths through relationships and quantifiers included (run in SQL where
    /// SQL gives Swift's results, else by the store on the rows SQL returns, see `FilterTranslator`),
    /// sorting, offset and limit, and uniqueness (unique indexes).
    public var queryCapabilities: QueryCapabilities {
        QueryCapabilities(filters: .all, sorting: true, offsetAndLimit: true, enforcesUniqueness: true)
    }

    /// Removes every model (the key sequence is kept, so keys are never reused) and the history:
    /// every token from before the erase expires.
    public func erase() throws {
        try database.wait { try await self.eraseAsync() }
    }

    func eraseAsync() async throws {
        let tables = layouts.values.flatMap { [$0.table] + $0.joinTables.map(\.table) }
        let history = self.history
        try await database.transaction("erasing") { session in
            // The tables first: TRUNCATE waits for the saves under way, which then need the
            // history counter this transaction would otherwise already hold.
            try await session.execute("TRUNCATE " + tables.joined(separator: ", "))
            try await history.deleteAll(on: session)
        }
    }

    /// The current snapshots of these models, read from the database; remembers the versions read.
    public func cachedSnapshots(
        for identifiers: [PersistentIdentifier], editingState: EditingState
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        let rows = try database.wait { try await self.rows(for: identifiers) }
        remember(rows.values.map { ($0.snapshot.persistentIdentifier, $0.version) }, for: editingState, replacing: true)
        return rows.mapValues(\.snapshot)
    }

    func rows(for identifiers: [PersistentIdentifier]) async throws -> [PersistentIdentifier: RowReader.Versioned] {
        var byEntity: [String: [Int64]] = [:]
        for id in identifiers {
            if let key = localKey(id), layouts[id.entityName] != nil {
                byEntity[id.entityName, default: []].append(key)
            }
        }
        let layouts = self.layouts
        let storeIdentifier = identifier
        let url = database.url
        let keysByEntity = byEntity
        return try await database.read("reading models") { session in
            let reader = RowReader(session: session, storeIdentifier: storeIdentifier, url: url)
            var result: [PersistentIdentifier: RowReader.Versioned] = [:]
            for (entityName, keys) in keysByEntity {
                for (_, row) in try await reader.rows(layouts[entityName]!, keys: keys) {
                    result[row.snapshot.persistentIdentifier] = row
                }
            }
            return result
        }
    }

    /// `true`: a save compares the context's expected values with the rows it updates, as it locks
    /// them (see ``save(_:)-(DataStoreSaveChangesRequest<DefaultSnapshot>)``), so a context under
    /// `.error` need not read them before it saves.
    public var checksExpectedValues: Bool { true }

    /// A context starts using the store: its row versions are remembered from now on.
    public func initializeState(for editingState: EditingState) {
        versions.withLock { $0[editingState.id] = $0[editingState.id] ?? [:] }
    }

    /// A context stops using the store: its row versions are forgotten.
    public func invalidateState(for editingState: EditingState) {
        versions.withLock { $0[editingState.id] = nil }
    }

    /// Records versions a context read (or wrote), for contexts the store was told about.
    func remember(_ read: [(PersistentIdentifier, Int64)], for editingState: EditingState, replacing: Bool) {
        guard !read.isEmpty else { return }
        withBook(of: editingState.id) { book in
            // Room for every row at once (a fresh context's book would otherwise grow, and rehash,
            // several times in one fetch), and one lookup of each identifier.
            book.reserveCapacity(book.count + read.count)
            for (id, version) in read {
                if replacing {
                    book[id] = version
                } else {
                    Self.keep(version, unlessFresher: &book[id, default: Self.staleVersion])
                }
            }
        }
    }

    /// A version read, kept in `remembered` unless that holds a version read or written before
    /// (only a stale one is replaced).
    private static func keep(_ version: Int64, unlessFresher remembered: inout Int64) {
        if remembered == staleVersion { remembered = version }
    }

    /// Changes the versions remembered for a context, if the store was told about it, in place: the
    /// book is taken out of the dictionary while `body` runs, so that a change does not copy every
    /// version the context read (a context that read 100k models would copy them at every save).
    func withBook(of context: UUID, _ body: (inout [PersistentIdentifier: Int64]) -> Void) {
        versions.withLock { all in
            guard var book = all.removeValue(forKey: context) else { return }
            body(&book)
            all[context] = book
        }
    }

    /// The versions remembered for these rows of a context (a save's updated and deleted models),
    /// rather than every version it read, which the context's next change would then copy.
    func versionsRead(of ids: [PersistentIdentifier], in context: UUID) -> [PersistentIdentifier: Int64] {
        versions.withLock { all in
            guard let book = all[context] else { return [:] }
            var read: [PersistentIdentifier: Int64] = [:]
            read.reserveCapacity(ids.count)
            for id in ids { read[id] = book[id] }
            return read
        }
    }

    /// The integer key of an identifier this store minted, or `nil`.
    func localKey(_ id: PersistentIdentifier) -> Int64? {
        guard id.storeIdentifier == identifier else { return nil }
        return id.primaryKey.intValue
    }
}

/// A migration plan type, which is only a type name and safe to send.
///
/// Safety: the plan's `stages` are read once, during the open, by the task the open waits for.
struct SendablePlan: @unchecked Sendable {
    let type: any SchemaMigrationPlan.Type
}
