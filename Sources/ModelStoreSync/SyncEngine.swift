import Foundation
import ModelStore

/// Keeps a local store and a remote one converging: offline first, merging field by field, and
/// keeping every clash as a conflict the app can see.
///
/// ```swift
/// let schema = Schema([Trip.self, Stop.self]).includingSyncMetadata()
/// let local = try ModelContainer(for: schema, configurations: [ModelConfiguration(url: localURL)])
/// let remote = try SyncHost(container: ModelContainer(for: schema, configurations: [shared]))
/// let engine = try SyncEngine(container: local, transport: InProcessSyncTransport(host: remote))
/// try await engine.syncNow()      // one round now
/// await engine.start()            // or keep syncing after every save
/// ```
///
/// A round says hello (and stops with ``SyncError/Code/schemaMismatch`` if the two schemas differ),
/// pulls the remote's changes page by page, merges each page into the local store in one save
/// together with the cursor it reached, and then pushes the local changes made since the last push,
/// recording the new base and the push cursor in one save when the remote has stored them. A crash
/// at any instant therefore repeats work but never loses or duplicates a change, and the engine's
/// own saves are never pushed back.
///
/// Merging is three-way against the values both sides last agreed on: properties changed on one
/// side only take that side's value; to-many relationships merge as sets (both sides' additions
/// and removals); a property both sides changed to different values is decided by the policy of
/// ``SyncConfiguration`` and recorded as a ``SyncConflict``.
public actor SyncEngine {
    /// The local container.
    public nonisolated let container: ModelContainer
    /// What the engine is doing, for an app to show.
    public nonisolated let status = SyncStatus()
    private let transport: any SyncTransport
    private let configuration: SyncConfiguration
    private let local: SyncStore
    private let hub = SyncEventHub()
    private var loop: Task<Void, Never>?
    private var replica: String?
    /// What the hello found, sent with every later request; `nil` until the first round, and again
    /// after a failure that may mean another remote (see ``round(pushFirst:)``).
    private var session: SyncSession? {
        didSet { if session == nil { pulledThrough.withLock { $0 = -1 } } }
    }
    /// The remote transaction this replica's pulls have read through (-1 while unknown, or while it
    /// reads the remote whole), for skipping announcements of changes it has.
    private nonisolated let pulledThrough = LockedValue<Int64>(-1)
    /// The local transactions known to be the engine's own, which the push cursor moves past.
    private var own = OwnTransactions()
    /// The models an unfinished push to the current remote named by derived identifiers.
    private var inFlight = PushInFlight()
    /// The identifiers this replica derives for its models, once its identifier is known.
    private var derivation: ReplicaGlobalIDs?
    /// Whether a push was sent since the last pulled page was stored: a page the remote read
    /// before that push may hold models as they were before it, so carried changes wait for a pull.
    private var pushedSinceLastPull = false

    /// The author of the engine's own saves, which it never pushes.
    public static let author = "modelstore-sync"

    /// An engine syncing the first store of `container` through `transport`.
    ///
    /// Throws ``SyncError/Code/missingMetadata`` when the container's schema lacks the sync entities.
    public init(
        container: ModelContainer, transport: any SyncTransport, configuration: SyncConfiguration = SyncConfiguration()
    ) throws {
        guard container.schema.hasSyncMetadata else {
            throw SyncError(
                .missingMetadata, "the local container's schema has no sync entities",
                remedy: "Create it with Schema(...).includingSyncMetadata()")
        }
        self.container = container
        self.transport = transport
        self.configuration = configuration
        self.local = SyncStore(store: container.stores[0], schema: container.schema, author: Self.author)
    }

    /// The engine's events from the moment of the call: an `AsyncSequence` that ends when the
    /// engine is stopped.
    public nonisolated var events: AsyncStream<SyncEvent> { hub.subscribe() }

    // MARK: Rounds

    /// Runs one round now: pull, merge, push. Returns what moved.
    @discardableResult
    public func syncNow() async throws -> SyncSummary {
        try await syncNow(pushFirst: false)
    }

    /// Runs one round, pushing before it pulls when `pushFirst` (see ``round(pushFirst:)``), as
    /// ``start()`` does after a local save; the randomized tests run both kinds.
    @discardableResult
    package func syncNow(pushFirst: Bool) async throws -> SyncSummary {
        hub.emit(.started)
        status.update(phase: .syncing)
        do {
            let summary = try await round(pushFirst: pushFirst)
            status.finished(at: Date())
            hub.emit(.upToDate(summary))
            return summary
        } catch {
            let failure = error as? SyncError ?? SyncError.store(error, while: "a sync round")
            status.failed(failure, retryAt: nil)
            hub.emit(.failed(failure, retryAt: nil))
            throw failure
        }
    }

    /// Keeps syncing until ``stop()``: a round after every local save and every change the remote
    /// announces (after ``SyncConfiguration/debounce``), at least every
    /// ``SyncConfiguration/pollInterval``, and after a transient failure with growing, jittered
    /// waits. A failure that is not transient stops nothing: the next save or poll tries again.
    /// A round that follows a local save pushes first and pulls after, so the save leaves in the
    /// round's first request. An announcement that carries changes
    /// (``SyncTransport/remoteAnnouncements(replica:pageSize:)``) is stored at once as a pulled
    /// page, with no round, when it starts at this replica's cursor (see ``SyncCarriedChanges``).
    public func start() {
        guard loop == nil else { return }
        let saves = container.changes
        let configuration = configuration
        let announcements =
            (try? replicaID()).flatMap { transport.remoteAnnouncements(replica: $0, pageSize: configuration.pageSize) }
        let pulledThrough = pulledThrough
        loop = Task { [weak self] in
            let wake = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
            let saved = LockedValue(false)
            // Whether a wake-up needs a round (a poll, an announcement without changes, a retry);
            // one for carried changes alone does not.
            let needsRound = LockedValue(true)
            let carried = LockedValue<[SyncCarriedChanges]>([])
            let watcher = Task {
                for await change in saves where change.author != SyncEngine.author {
                    saved.withLock { $0 = true }
                    wake.continuation.yield()
                }
            }
            let remoteWatcher = Task {
                guard let announcements else { return }
                for await announcement in announcements {
                    if let changes = announcement.changes {
                        carried.withLock { $0.append(changes) }
                        wake.continuation.yield()
                        continue
                    }
                    // A change this replica's pulls have read already (its own push, announced
                    // after the pull that the push carried) needs no round.
                    if let transaction = announcement.transaction, transaction <= pulledThrough.withLock({ $0 }) {
                        continue
                    }
                    needsRound.withLock { $0 = true }
                    wake.continuation.yield()
                }
            }
            let ticker = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: configuration.pollInterval)
                    needsRound.withLock { $0 = true }
                    wake.continuation.yield()
                }
            }
            defer {
                watcher.cancel()
                remoteWatcher.cancel()
                ticker.cancel()
            }
            var failures = 0
            var iterator = wake.stream.makeAsyncIterator()
            wake.continuation.yield()
            while !Task.isCancelled {
                guard await iterator.next() != nil else { return }
                // A burst of saves makes one round; carried changes alone are stored at once.
                if saved.withLock({ $0 }) || needsRound.withLock({ $0 }) {
                    try? await Task.sleep(for: configuration.debounce)
                }
                guard let self, !Task.isCancelled else { return }
                let pushFirst = saved.withLock { saved in
                    defer { saved = false }
                    return saved
                }
                let round = needsRound.withLock { needed in
                    defer { needed = false }
                    return needed
                }
                let pages = carried.withLock { pages in
                    defer { pages = [] }
                    return pages
                }
                // Without a save or another reason for a round, carried changes that join up need none.
                if !pushFirst && !round {
                    guard !pages.isEmpty else { continue }
                    if await self.store(carried: pages) { continue }
                }
                do {
                    try await self.syncNow(pushFirst: pushFirst)
                    failures = 0
                } catch let error as SyncError where error.isTransient {
                    failures += 1
                    let delay = Self.retryDelay(after: failures, configuration: configuration)
                    let (seconds, attoseconds) = delay.components
                    let retryAt = Date().addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
                    self.status.failed(error, retryAt: retryAt)
                    await self.emit(.failed(error, retryAt: retryAt))
                    try? await Task.sleep(for: delay)
                    needsRound.withLock { $0 = true }
                    wake.continuation.yield()
                } catch {
                    // Not transient: the status says why; the next save or poll tries again.
                }
            }
        }
    }

    /// Stores pages of changes the remote sent with its announcements, in order, as pulled pages
    /// (the same merge, conflicts and cursor), and returns whether this replica now has all of
    /// them. Returns `false`, having stored the pages before it, at the first page that does not
    /// start at the replica's cursor, is not of its session's remote and schema, or may be older
    /// than a push of this replica (one sent after its last pull: the page may have been read
    /// before it and would take back what it pushed); the caller then runs a round, which pulls.
    /// A page that ends at or before the cursor is had already and skipped.
    private func store(carried pages: [SyncCarriedChanges]) async -> Bool {
        guard let session else { return false }
        do {
            let replica = try replicaID()
            var state = try loadState(remote: session.remote, replica: replica)
            guard state.cursor.snapshot == nil else { return false }
            var summary = SyncSummary()
            var started = false
            for changes in pages {
                let page = changes.page
                guard changes.remote == session.remote, changes.schemaFingerprint == session.schemaFingerprint,
                    page.cursor.snapshot == nil, !page.hasMore
                else { return false }
                if page.cursor.transaction <= state.cursor.transaction { continue }
                guard changes.after == state.cursor.transaction, !pushedSinceLastPull else { return false }
                if !started {
                    started = true
                    hub.emit(.started)
                    status.update(phase: .syncing)
                    inFlight = try PushInFlight.load(remote: session.remote, store: local)
                }
                let merged = try await merge(page, state: &state)
                summary.pulled += merged.pulled
                summary.conflicts += merged.conflicts
                if merged.pulled > 0 { hub.emit(.pulled(merged.pulled)) }
            }
            if started {
                status.finished(at: Date())
                hub.emit(.upToDate(summary))
            }
            return true
        } catch {
            // The round that follows reports the failure, if it lasts.
            return false
        }
    }

    /// Stops the rounds ``start()`` began, after the current one, and ends ``events``.
    public func stop() {
        loop?.cancel()
        loop = nil
        hub.finish()
    }

    private func emit(_ event: SyncEvent) { hub.emit(event) }

    /// The wait before retry number `failures`: doubling from the first delay up to the maximum,
    /// with up to half of it random.
    public static func retryDelay(after failures: Int, configuration: SyncConfiguration) -> Duration {
        let first =
            Double(configuration.retryDelay.components.seconds)
            + Double(configuration.retryDelay.components.attoseconds) / 1e18
        let maximum = Double(configuration.maximumRetryDelay.components.seconds)
        let base = min(maximum, first * pow(2, Double(max(0, failures - 1))))
        return .milliseconds(Int((base * Double.random(in: 0.5...1.0)) * 1000))
    }

    /// One round. The engine says hello once, in its first round, and sends what the hello found
    /// (``SyncSession``) with every later request, which the remote refuses when it now serves
    /// another store (the round then says hello again and runs once more) or has another schema
    /// (a new hello then says which side is behind). After a failure to reach the remote the next
    /// round says hello again: what answers may be another server.
    ///
    /// A round pulls every page, merges, then pushes; when `pushFirst` (a round after a local save)
    /// and the replica has read the remote whole before, it pushes first and asks for the pull in
    /// the same request, so the save leaves at once and a push alone needs no second request.
    private func round(pushFirst: Bool) async throws -> SyncSummary {
        do {
            return try await roundOnce(pushFirst: pushFirst)
        } catch let error as SyncError where error.code == .remoteChanged {
            session = nil
            return try await roundOnce(pushFirst: pushFirst)
        } catch let error as SyncError where error.code == .schemaMismatch && session != nil {
            // The remote's schema changed since the hello: a new one says which side is behind.
            session = nil
            let hello = try await transport.hello(try helloMessage())
            try checkSchema(hello)
            // The hello agrees: the remotes behind the address differ. The next round says hello again.
            throw error
        } catch let error as SyncError where error.code == .unreachable {
            session = nil
            throw error
        }
    }

    private func helloMessage() throws -> SyncHello {
        SyncHello(
            replica: try replicaID(), schemaVersion: "\(local.schema.version)",
            schemaFingerprint: SyncCoding.fingerprint(local.schema))
    }

    /// The session of this engine, saying hello first if there is none.
    private func currentSession() async throws -> SyncSession {
        if let session { return session }
        let hello = try await transport.hello(try helloMessage())
        try checkSchema(hello)
        let started = SyncSession(remote: hello.remote, schemaFingerprint: hello.schemaFingerprint)
        session = started
        return started
    }

    private func roundOnce(pushFirst: Bool) async throws -> SyncSummary {
        let replica = try replicaID()
        let session = try await currentSession()
        var state = try loadState(remote: session.remote, replica: replica)
        inFlight = try PushInFlight.load(remote: session.remote, store: local)
        noteCursor(state.cursor)
        if state.pushed == 0 && state.cursor.snapshot != nil {
            // Joining: only entities that held models before the round can hold models equal to
            // pulled ones; the others need no look-up per pulled model.
            state.joinable = Set(try local.schema.syncedEntities.map(\.name).filter { try local.count($0) > 0 })
            if state.joinable.isEmpty { state.emptyThrough = try local.newestTransaction() }
        }
        var summary = SyncSummary()
        // A replica still reading the remote whole pulls first: joining matches pulled models with
        // local ones before any is pushed.
        var pulledFirst = !pushFirst || state.cursor.snapshot != nil
        for _ in 0..<8 {
            if pulledFirst { try await pullPages(state: &state, summary: &summary, session: session) }
            let carried =
                pulledFirst
                ? nil : SyncPullRequest(replica: replica, cursor: state.cursor, limit: configuration.pageSize)
            switch try await push(state: &state, replica: replica, session: session, pull: carried) {
            case .pushed(let count, let conflicts, let pulled):
                summary.pushed += count
                summary.conflicts += conflicts
                if !pulledFirst {
                    try await pullPages(state: &state, summary: &summary, session: session, first: pulled)
                }
                return summary
            case .stale(let globalIDs):
                guard pulledFirst else {
                    // Pushed before pulling: the pull brings what moved on the remote (a model
                    // read and merged here too would be merged twice, its clash kept twice).
                    pulledFirst = true
                    continue
                }
                // The remote moved on: pull what changed, merge, push again. The stale models
                // themselves are read and merged too: a pull leaves out this replica's own pushes,
                // and one it made before a crash, never acknowledged, is what the remote holds.
                let models = try await transport.fetch(SyncFetchRequest(globalIDs: globalIDs, session: session))
                let merged = try await merge(
                    SyncPullReply(models: models, cursor: state.cursor, hasMore: false), state: &state)
                summary.conflicts += merged.conflicts
                pulledFirst = true
                continue
            }
        }
        throw SyncError(
            .busy, "the remote kept changing the models this replica pushes", remedy: "The engine retries",
            isTransient: true)
    }

    /// Pulls and merges page after page until the remote has no more, starting with `first` when
    /// a push brought the first page.
    ///
    /// The remote reads the next page while this replica merges the one before it: the next page's
    /// cursor is the one the page carries, which the merge stores. The pages are still merged one at a
    /// time and in order, and the next one is only asked for, never merged, before its page is
    /// stored; a merge that fails drops it, and the round's next pull asks for it again.
    private func pullPages(
        state: inout State, summary: inout SyncSummary, session: SyncSession, first: SyncPullReply? = nil
    ) async throws {
        var next = first
        var ahead: Task<SyncPullReply, any Error>?
        defer { ahead?.cancel() }
        let replica = try replicaID()
        let transport = transport
        while true {
            let reply: SyncPullReply
            if let page = next {
                reply = page
                next = nil
            } else if let pending = ahead {
                ahead = nil
                reply = try await pending.value
            } else {
                reply = try await transport.pull(
                    SyncPullRequest(
                        replica: replica, cursor: state.cursor, limit: configuration.pageSize, session: session))
            }
            if reply.hasMore {
                let request = SyncPullRequest(
                    replica: replica, cursor: reply.cursor, limit: configuration.pageSize, session: session)
                ahead = Task.detached { try await transport.pull(request) }
            }
            let merged = try await merge(reply, state: &state)
            // Read after every push this round sent (a push's own page, too, is read after it).
            pushedSinceLastPull = false
            summary.pulled += merged.pulled
            summary.conflicts += merged.conflicts
            if merged.pulled > 0 { hub.emit(.pulled(merged.pulled)) }
            if !reply.hasMore { return }
        }
    }

    private func checkSchema(_ hello: SyncHelloReply) throws {
        let mine = SyncCoding.fingerprint(local.schema)
        guard hello.schemaFingerprint != mine else { return }
        let localVersion = "\(local.schema.version)"
        let behind: String
        if localVersion == hello.schemaVersion {
            behind = "both say version \(localVersion), but their models differ"
        } else if localVersion.compare(hello.schemaVersion, options: .numeric) == .orderedAscending {
            behind = "this replica (version \(localVersion)) is behind the remote (version \(hello.schemaVersion))"
        } else {
            behind = "the remote (version \(hello.schemaVersion)) is behind this replica (version \(localVersion))"
        }
        throw SyncError(
            .schemaMismatch, "the schemas of '\(local.store.identifier)' and '\(hello.remote)' differ: \(behind)",
            remedy: "Migrate the store that is behind to the same models (open it with the new schema, or run "
                + "'modelstore migrate'), then sync again; nothing was exchanged")
    }

    // MARK: State

    struct State {
        var snapshot: DefaultSnapshot
        var cursor: SyncCursor
        var pushed: Int64
        /// The entities that held models when a joining round began (see ``equalMatch``).
        var joinable = Set<String>()
        /// The newest local transaction when a round of a replica that never pushed began with no
        /// model in the store; `nil` otherwise (see ``onlyPulledModels(_:)``).
        var emptyThrough: Int64?
        /// The delete-against-edit clashes the round's merges decided (see
        /// ``MergePlan/decidedThisRound``).
        var decided = Set<String>()
    }

    /// Keeps the stored pull cursor's transaction for the announcements ``start()`` receives.
    private func noteCursor(_ cursor: SyncCursor) {
        pulledThrough.withLock { $0 = cursor.snapshot == nil ? cursor.transaction : -1 }
    }

    private func replicaID() throws -> String {
        if let replica { return replica }
        let rows = try local.fetch(SyncMetadata.stateEntityName, filter: .equal("remote", .string("")))
        if let existing = rows.first?["replica"]?.stringValue {
            replica = existing
            return existing
        }
        let id = UUID().uuidString
        let row = try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: SyncMetadata.stateEntityName),
            entity: try local.entity(SyncMetadata.stateEntityName),
            namedValues: ["remote": .string(""), "replica": .string(id), "pushed": .int(0), "pulled": .data(Data())])
        try save(inserted: [row], updated: [], deleted: [])
        replica = id
        return id
    }

    /// The global identifiers this replica derives from its models' keys.
    private func deriving() throws -> ReplicaGlobalIDs {
        if let derivation { return derivation }
        let derived = ReplicaGlobalIDs(replica: try replicaID(), entities: local.schema.syncedEntities.map(\.name))
        derivation = derived
        return derived
    }

    /// A random global identifier, for a model whose key gives none (see ``ReplicaGlobalIDs``).
    private static func randomGlobalID(_ model: PersistentIdentifier) -> String { SyncCoding.uuidString(UUID()) }

    private func loadState(remote: String, replica: String) throws -> State {
        let entity = try local.entity(SyncMetadata.stateEntityName)
        if let row = try local.fetch(SyncMetadata.stateEntityName, filter: .equal("remote", .string(remote))).first {
            let cursor = row["pulled"]?.dataValue.flatMap { try? JSONDecoder().decode(SyncCursor.self, from: $0) }
            return State(snapshot: row, cursor: cursor ?? .start, pushed: row["pushed"]?.int64Value ?? 0)
        }
        let row = try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: entity.name), entity: entity,
            namedValues: [
                "remote": .string(remote), "replica": .string(replica), "pushed": .int(0),
                "pulled": .data(SyncCoding.encode(SyncCursor.start)),
            ])
        let result = try save(inserted: [row], updated: [], deleted: [])
        var saved = row
        if let id = result.remappedIdentifiers[row.persistentIdentifier] { saved.persistentIdentifier = id }
        return State(snapshot: saved, cursor: .start, pushed: 0)
    }

    /// Saves to the local store, noting the transaction the save recorded as the engine's own.
    @discardableResult
    private func save(
        inserted: [DefaultSnapshot], updated: [DefaultSnapshot], deleted: [DefaultSnapshot]
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        let result = try local.save(inserted: inserted, updated: updated, deleted: deleted)
        own.saved(result.historyToken)
        return result
    }

    /// The push cursor moved past the engine's own transactions right after it, for a save that
    /// writes the state row anyway. A replica that never pushed (cursor 0) keeps its cursor: its
    /// first push reads every model.
    private func movedPast(_ pushed: Int64) -> Int64 { pushed > 0 ? own.advanced(pushed) : pushed }

    private func stateRow(_ state: State) -> DefaultSnapshot {
        var row = state.snapshot
        if let slot = row.entity.slot(of: "pulled") { row.values[slot] = .data(SyncCoding.encode(state.cursor)) }
        if let slot = row.entity.slot(of: "pushed") { row.values[slot] = .int(state.pushed) }
        return row
    }

    // MARK: Local changes

    /// What this replica changed since its last push.
    struct LocalChanges {
        /// The newest local transaction read.
        var head: Int64 = 0
        /// Models inserted or updated by the app, with when.
        var changed: [PersistentIdentifier: SyncStamp] = [:]
        /// Models the app deleted.
        var deleted: [PersistentIdentifier] = []
        /// Whether any transaction in the range was the app's (not the engine's).
        var hasAppTransactions = false
        /// How many transactions the range held.
        var transactions = 0
        /// When every model counts as changed (nothing was pushed yet, or the history was trimmed),
        /// which lists none of them: the stamp each has.
        var everyModelStamp: SyncStamp?

        /// When the app last changed a model, if it did since the last push.
        func stamp(of id: PersistentIdentifier) -> SyncStamp? { changed[id] ?? everyModelStamp }
    }

    /// What changed locally since the last push. When every model counts as changed (nothing was
    /// pushed yet, or the history was trimmed) the models are not listed (see
    /// ``LocalChanges/everyModelStamp``): a push reads them a page at a time, and a merge asks
    /// only for the stamps of the models it meets. A merge passes `readingHead: false`, since it
    /// needs no head and reading it costs a read of the whole history on some stores.
    private func localChanges(after pushed: Int64, replica: String, readingHead: Bool = true) throws -> LocalChanges {
        var changes = LocalChanges()
        guard pushed > 0 else {
            return everyModel(head: readingHead ? try local.newestTransaction() : 0, replica: replica)
        }
        // The engine's own transactions right after the push (its merges, acknowledgements and
        // cursors) hold nothing to push: the read starts after them.
        let start = own.advanced(pushed)
        let transactions: [DefaultHistoryTransaction]
        do {
            transactions = try local.transactions(after: start, limit: Int.max)
        } catch DataStoreError.historyTokenExpired {
            // The local history was trimmed past the last push: compare every model with its base.
            return everyModel(head: try local.newestTransaction(), replica: replica)
        }
        // Read once: the newest transaction is the last one read, or the last one skipped.
        changes.head = transactions.last?.transactionIdentifier ?? start
        changes.transactions = Int(start - pushed) + transactions.count
        if !transactions.contains(where: { $0.author != Self.author }) {
            own.read(after: start, through: changes.head)
        }
        for transaction in transactions where transaction.author != Self.author {
            changes.hasAppTransactions = true
            let stamp = SyncStamp(
                milliseconds: Int64(transaction.timestamp.timeIntervalSince1970 * 1000), counter: 0, replica: replica)
            for change in transaction.changes {
                let id = change.changedPersistentIdentifier
                guard !SyncMetadata.isMetadata(id.entityName) else { continue }
                if case .delete = change {
                    changes.deleted.append(id)
                    changes.changed[id] = nil
                } else {
                    changes.changed[id] = max(changes.changed[id] ?? .zero, stamp)
                }
            }
        }
        return changes
    }

    private func everyModel(head: Int64, replica: String) -> LocalChanges {
        var changes = LocalChanges()
        changes.head = head
        changes.hasAppTransactions = true
        changes.everyModelStamp = SyncStamp(milliseconds: 0, counter: 0, replica: replica)
        return changes
    }

    // MARK: Pull and merge

    private struct Merged {
        var pulled = 0
        var conflicts = 0
    }

    private func merge(_ reply: SyncPullReply, state: inout State) async throws -> Merged {
        guard !reply.models.isEmpty else {
            // Nothing to merge: only the cursor moves, and a quiet round writes nothing.
            guard reply.cursor != state.cursor else { return Merged() }
            state.cursor = reply.cursor
            state.pushed = movedPast(state.pushed)
            let result = try save(inserted: [], updated: [stateRow(state)], deleted: [])
            noteCursor(state.cursor)
            if let id = result.remappedIdentifiers[state.snapshot.persistentIdentifier] {
                state.snapshot.persistentIdentifier = id
            }
            return Merged()
        }
        var models = reply.models
        var index = try RecordIndex.load(globalIDs: models.map(\.globalID), store: local)
        // Models the page refers to that this replica lacks: fetch them, so references hold.
        var wanted = Set<String>()
        for _ in 0..<4 {
            let known = Set(models.map(\.globalID))
            var missing: [String] = []
            for model in models {
                for value in model.values?.values ?? [:].values {
                    for reference in SyncValues.referencedGlobalIDs(value) {
                        guard case .string(let global) = reference.primaryKey, !known.contains(global),
                            wanted.insert(global).inserted
                        else { continue }
                        missing.append(global)
                    }
                }
            }
            try index.add(globalIDs: missing, store: local)
            let absent = missing.filter { index.model(of: $0) == nil }
            guard !absent.isEmpty else { break }
            models += try await transport.fetch(SyncFetchRequest(globalIDs: absent, session: session)).filter {
                $0.values != nil
            }
        }
        // Every model's record was looked up: the page's by `load`, the fetched ones' in the loop.
        try reclaimDerived(models, index: &index)
        let replica = try replicaID()
        // Read the local history (a read of all of it on some stores) only when a clash needs a stamp.
        let pushed = state.pushed
        let changes = LazyLocalChanges { try self.localChanges(after: pushed, replica: replica, readingHead: false) }
        var plan = MergePlan(configuration: configuration)
        plan.decidedThisRound = state.decided
        // A replica that never pushed and reads the remote whole for the first time may hold the
        // same models already (seeded alike, or its bookkeeping was lost): equal models become one
        // instead of two.
        let joining = state.pushed == 0 && state.cursor.snapshot != nil
        var taken = Set<PersistentIdentifier>()
        // New models first get temporary identifiers, so references among them resolve.
        let new = models.filter { $0.values != nil && index.record(of: $0.globalID) == nil }
        let uniques = try UniqueLookup.load(new.map { ($0.entity, $0.values ?? [:]) }, store: local)
        for model in new {
            if let adopted = try uniqueMatch(for: model, in: uniques, index: &index) {
                index.link(model.globalID, to: adopted)
                taken.insert(adopted)
            } else if joining, state.joinable.contains(model.entity),
                let equal = try equalMatch(for: model, index: &index, taken: taken)
            {
                index.link(model.globalID, to: equal)
                taken.insert(equal)
            } else {
                index.assignTemporary(model.globalID, entity: model.entity)
            }
        }
        let current = try index.models(store: local)
        // A record may still name a model deleted here (a store that leaves the reference in place):
        // it is not there to write to, nor to refer to.
        index.unlinkMissing(from: current)
        let currentValues = try index.syncValues(
            of: current, store: local, deriving: try deriving(), mint: Self.randomGlobalID)
        for model in models {
            try plan.merge(
                model, index: &index, current: current, currentValues: currentValues, changes: changes, store: local)
        }
        let conflictEntity = try local.entity(SyncMetadata.conflictEntityName)
        let conflictRows = try plan.conflicts.map { try $0.snapshot(entity: conflictEntity) }
        // The other ends of changed links follow the carried ends.
        var written = plan.inserted + plan.updated
        let holders = try local.maintainInverses(of: &written, before: current)
        plan.inserted = Array(written.prefix(plan.inserted.count))
        plan.updated = Array(written.dropFirst(plan.inserted.count)) + holders
        let deletedIDs = Set(plan.deleted.map(\.persistentIdentifier))
        plan.updated.removeAll { deletedIDs.contains($0.persistentIdentifier) }
        state.cursor = reply.cursor
        state.pushed = movedPast(state.pushed)
        // Records this merge made (``reclaimDerived(_:index:)``) are not stored yet: a change to one
        // is stored as its insert, and a deletion of one drops it.
        var recordInserts = plan.recordInserts + index.derivedRecordInserts
        var recordUpdates = plan.recordUpdates + index.recordUpdates
        var recordDeletes = plan.recordDeletes + index.recordDeletes
        let unsaved = Dictionary(
            recordUpdates.filter(\.persistentIdentifier.isTemporary).map { ($0.persistentIdentifier, $0) },
            uniquingKeysWith: { $1 })
        let dropped = Set(recordDeletes.filter(\.persistentIdentifier.isTemporary).map(\.persistentIdentifier))
        recordInserts = recordInserts.compactMap {
            dropped.contains($0.persistentIdentifier) ? nil : unsaved[$0.persistentIdentifier] ?? $0
        }
        recordUpdates.removeAll(where: \.persistentIdentifier.isTemporary)
        recordDeletes.removeAll(where: \.persistentIdentifier.isTemporary)
        let result: DataStoreSaveChangesResult<DefaultSnapshot>
        do {
            result = try save(
                inserted: plan.inserted + recordInserts + conflictRows,
                updated: plan.updated + recordUpdates + [stateRow(state)],
                deleted: plan.deleted + recordDeletes)
        } catch {
            throw SyncError.store(
                error, while: "storing \(models.count) pulled model(s) in '\(local.store.identifier)'")
        }
        noteCursor(state.cursor)
        state.decided.formUnion(plan.conflicts.compactMap(MergePlan.decisionKey))
        let inserted = plan.inserted.map { (snapshot: DefaultSnapshot) in
            result.remappedIdentifiers[snapshot.persistentIdentifier] ?? snapshot.persistentIdentifier
        }
        if !inserted.isEmpty || !plan.updated.isEmpty || !plan.deleted.isEmpty {
            container.changeHub.publish(
                ModelContainerChange(
                    inserted: inserted, updated: plan.updated.map { $0.persistentIdentifier },
                    deleted: plan.deleted.map { $0.persistentIdentifier }, author: Self.author,
                    historyTokens: result.historyToken.map { [$0] } ?? [], origin: .external))
        }
        for conflict in plan.conflicts { hub.emit(.conflict(conflict)) }
        // Keep the saved state row's identifier for the next save.
        if let id = result.remappedIdentifiers[state.snapshot.persistentIdentifier] {
            state.snapshot.persistentIdentifier = id
        }
        return Merged(pulled: plan.applied, conflicts: plan.conflicts.count)
    }

    /// Finds the local models behind pulled models that this replica named itself, by identifiers
    /// derived from their keys, in a push whose acknowledgement a crash took: each gets the record
    /// that acknowledgement would have stored before it (no base), so the merge meets it as a model
    /// of both sides rather than a new one. A model of an unfinished push deleted here since gets a
    /// record without a model, as a model deleted here does.
    private func reclaimDerived(_ models: [SyncModelState], index: inout RecordIndex) throws {
        let derivation = try deriving()
        var candidates: [String: [(global: String, key: Int64)]] = [:]
        for model in models where index.record(of: model.globalID) == nil {
            guard let key = derivation.key(of: model.globalID, entity: model.entity) else { continue }
            candidates[model.entity, default: []].append((model.globalID, key))
        }
        for (entity, list) in candidates {
            let recordEntity = try local.entity(SyncMetadata.recordEntityName(for: entity))
            let ids = list.map {
                PersistentIdentifier.identifier(for: local.store.identifier, entityName: entity, primaryKey: $0.key)
            }
            let recorded = Set(
                try local.fetch(recordEntity.name, where: "model", in: ids.map(StoreValue.reference)).compactMap {
                    SyncRecord(snapshot: $0).model
                })
            let live = try local.existing(ids, entityName: entity)
            for (candidate, id) in zip(list, ids) where !recorded.contains(id) {
                let model: PersistentIdentifier?
                if live.contains(id) {
                    model = id
                } else if inFlight.contains(entity: entity, key: candidate.key) {
                    model = nil
                } else {
                    continue
                }
                let record = try SyncRecord.new(
                    entity: recordEntity, globalID: candidate.global, model: model, base: nil, stamps: [:])
                index.derivedRecordInserts.append(record.snapshot)
                index.remember(record)
            }
        }
    }

    /// A local model that holds every unique value of a pulled new model and was never synced:
    /// the two become one model under the pulled identifier.
    private func uniqueMatch(
        for model: SyncModelState, in uniques: UniqueLookup, index: inout RecordIndex
    ) throws -> PersistentIdentifier? {
        guard let entity = local.schema.entity(named: model.entity), let values = model.values,
            let match = uniques.match(entity: entity, values: values)
        else { return nil }
        let id = match.persistentIdentifier
        let known = try index.globalIDs(for: [id], store: local, deriving: try deriving(), mint: Self.randomGlobalID)
        guard let global = known[id], index.record(of: global)?.base == nil else { return nil }
        // The local model was never synced: it takes the pulled identifier. Its own record goes.
        if let record = index.record(of: global), !record.snapshot.persistentIdentifier.isTemporary {
            index.recordDeletes.append(record.snapshot)
        }
        index.derivedRecordInserts.removeAll { $0["globalID"]?.stringValue == global }
        index.adoptedByUnique.insert(model.globalID)
        return id
    }

    /// A local model, never synced and not yet taken, whose every attribute equals the pulled
    /// model's: the two become one model under the pulled identifier, agreeing on those values.
    private func equalMatch(
        for model: SyncModelState, index: inout RecordIndex, taken: Set<PersistentIdentifier>
    ) throws -> PersistentIdentifier? {
        guard let entity = local.schema.entity(named: model.entity), let values = model.values else { return nil }
        let filters = entity.attributes.map { attribute in
            StoreFilter.compare(StorePath(attribute.name), .equal, values[attribute.name] ?? .null)
        }
        let filter = StoreFilter.conjunction(filters)
        for candidate in try local.fetch(entity.name, filter: filter, limit: taken.count + 8) {
            let id = candidate.persistentIdentifier
            guard !taken.contains(id) else { continue }
            let known = try index.globalIDs(
                for: [id], store: local, deriving: try deriving(), mint: Self.randomGlobalID)
            guard let global = known[id], index.record(of: global)?.base == nil else { continue }
            if let record = index.record(of: global), !record.snapshot.persistentIdentifier.isTemporary {
                index.recordDeletes.append(record.snapshot)
            }
            index.derivedRecordInserts.removeAll { $0["globalID"]?.stringValue == global }
            index.adoptedAsEqual.insert(model.globalID)
            return id
        }
        return nil
    }

    // MARK: Push

    private enum PushOutcome {
        /// Stored: how many changes and conflicts, and the answer to the pull asked for with the
        /// push when the request that carried it was the push's last.
        case pushed(Int, conflicts: Int, pulled: SyncPullReply?)
        /// The remote refused the push: these models changed there since their base.
        case stale([String])
    }

    /// Pushes what changed locally since the last push. `pull`, when given, rides on the push's
    /// request when the push takes one request (a page of changes, or of deletions).
    private func push(
        state: inout State, replica: String, session: SyncSession, pull: SyncPullRequest?
    ) async throws -> PushOutcome {
        var changes = try localChanges(after: state.pushed, replica: replica)
        if changes.everyModelStamp != nil, onlyPulledModels(state, head: changes.head) {
            // Nothing to read: every model is as this round's merges stored it. The cursor still
            // moves off 0 at the end (`hasAppTransactions` stays set), so later rounds read the history.
            changes.everyModelStamp = nil
        }
        // Every model counts as changed on a first push (or after the history was trimmed): they are
        // read a page at a time below rather than listed, so the push holds at most two pages of them
        // (one with the remote, the next made ready).
        let everyModel = changes.everyModelStamp != nil
        // Records whose model was deleted here: the reference was cleared, or still names it.
        var deletedRecords: [SyncRecord] = []
        for entity in local.schema.syncedEntities {
            let recordEntity = SyncMetadata.recordEntityName(for: entity.name)
            deletedRecords += try local.fetch(recordEntity, filter: .compare("model", .equal, .null)).map(
                SyncRecord.init)
            let gone = changes.deleted.filter { $0.entityName == entity.name }
            deletedRecords += try local.fetch(recordEntity, where: "model", in: gone.map(StoreValue.reference)).map(
                SyncRecord.init)
        }
        var pending: [SyncRecord] = []
        for entity in local.schema.syncedEntities {
            pending += try local.fetch(SyncMetadata.recordEntityName(for: entity.name), filter: Self.isPending)
                .map(SyncRecord.init)
        }
        let pendingByModel = Dictionary(
            pending.compactMap { record in record.model.map { ($0, record) } }, uniquingKeysWith: { $1 })
        let ids =
            everyModel ? [] : Array(changes.changed.keys) + pendingByModel.keys.filter { changes.changed[$0] == nil }
        var deletes: [SyncChange] = []
        var seenDeletes = Set<String>()
        let now = SyncStamp.zero.next(replica: replica, now: Date())
        for record in deletedRecords where seenDeletes.insert(record.globalID).inserted {
            // Sent even without a base: a push of the model may have reached the remote before a
            // crash took its acknowledgement; a remote that never had the model ignores the delete.
            deletes.append(SyncChange(globalID: record.globalID, entity: record.entityName, kind: .delete, stamp: now))
        }
        deletes += try inFlightDeletes(seen: &seenDeletes, now: now)
        let models =
            everyModel ? try local.schema.syncedEntities.reduce(0) { $0 + (try local.count($1.name)) } : ids.count
        status.update(pendingChanges: models + deletes.count)
        // A page of models at a time: read, compared with their bases, pushed and acknowledged, so
        // the memory a push takes does not grow with the number of models it pushes.
        var round = PushRound(session: session)
        // The pull rides on a push of a page or two (models, deletions, links pushed again); the
        // answer to the last request counts, read after every change of the push was stored. A
        // longer push pulls with requests of its own after it.
        if !everyModel && ids.count <= configuration.pageSize && deletes.count <= configuration.pageSize {
            round.pull = pull
        }
        for chunk in ids.chunked(configuration.pageSize) {
            var index = RecordIndex()
            for id in chunk { if let record = pendingByModel[id] { index.remember(record) } }
            guard try await pushPage(Array(chunk), index: &index, changes: changes, round: &round, now: now) else {
                return .stale(round.stale)
            }
        }
        if everyModel {
            // Pipelined: while the remote stores one page, the next is read and made ready, and the
            // acknowledgement of one is stored while the remote stores the next (see `PagePipeline`).
            var pipeline = PagePipeline()
            do {
                for entity in local.schema.syncedEntities {
                    var position = EntityReadPosition()
                    var exhausted = false
                    var lowest: Int64?
                    // A range wider than the models it holds would cost a recovery a look at every key
                    // of it: sparse keys are listed one by one instead.
                    let widest = Int64(4 * max(try local.count(entity.name), configuration.pageSize))
                    while !exhausted {
                        let page = try local.readPage(
                            &position, entity: entity.name, limit: configuration.pageSize, filter: nil)
                        exhausted = page.exhausted
                        let read = Dictionary(
                            page.rows.map { ($0.persistentIdentifier, $0) }, uniquingKeysWith: { $1 })
                        // The keys this read goes through, listed once for every page (see PushInFlight).
                        lowest = lowest ?? page.rows.first?.persistentIdentifier.primaryKey.intValue
                        let highest =
                            position.through?.intValue ?? page.rows.last?.persistentIdentifier.primaryKey.intValue
                        let range = lowest.flatMap { low in
                            highest.flatMap { high -> (String, ClosedRange<Int64>)? in
                                let (width, overflow) = high.subtractingReportingOverflow(low)
                                return high >= low && !overflow && width < widest ? (entity.name, low...high) : nil
                            }
                        }
                        let source = PageSource(
                            ids: page.rows.map(\.persistentIdentifier), read: read, linksOnly: false, range: range)
                        guard
                            try await pushPipelined(
                                source, pipeline: &pipeline, changes: changes, round: &round, now: now)
                        else { return .stale(round.stale) }
                    }
                }
                guard try await drain(&pipeline, round: &round) else {
                    return .stale(round.stale)
                }
            } catch {
                // Nothing of this push runs after it has failed.
                if let sending = pipeline.sending { _ = await sending.reply.result }
                throw error
            }
        }
        // Links left out above because their targets were not on the remote yet: the targets are
        // there now, so the models that hold them (pending) are pushed again, a page at a time.
        if round.withheld {
            for entity in local.schema.syncedEntities {
                var position = EntityReadPosition()
                var exhausted = false
                while !exhausted {
                    let page = try local.readPage(
                        &position, entity: SyncMetadata.recordEntityName(for: entity.name),
                        limit: configuration.pageSize, filter: Self.isPending)
                    exhausted = page.exhausted
                    var index = RecordIndex()
                    let records = page.rows.map(SyncRecord.init)
                    for record in records { index.remember(record) }
                    let held = records.compactMap(\.model)
                    guard
                        try await pushPage(
                            held, index: &index, changes: changes, round: &round, now: now, linksOnly: true)
                    else { return .stale(round.stale) }
                }
            }
        }
        for batch in deletes.chunked(configuration.pageSize) {
            var index = RecordIndex()
            let reply = try await round.send(Array(batch), replica: replica, transport: transport)
            guard reply.applied else { return .stale(reply.stale) }
            round.conflicts += try acknowledge(
                Array(batch), reply: reply, index: &index, state: nil, deletedRecords: deletedRecords
            ).conflicts
            round.total += batch.count
            hub.emit(.pushed(batch.count))
        }
        // The push is stored whole: no model of it waits for an acknowledgement any more.
        let inFlightRow = inFlight.finish()
        if round.total + round.links > 0 {
            // Every change through the head is on the remote, and the acknowledgements after it are
            // the engine's own: the next round reads none of them back.
            state.pushed = own.advanced(changes.head)
            try save(inserted: [], updated: [stateRow(state)], deleted: inFlightRow.map { [$0] } ?? [])
            status.update(pendingChanges: 0)
            return .pushed(round.total, conflicts: round.conflicts, pulled: round.pulled)
        }
        // Nothing to push. Move the push cursor past the engine's own transactions only now and
        // then, so a quiet round writes nothing.
        if state.pushed < changes.head && (changes.hasAppTransactions || changes.transactions >= 64)
            || !deletedRecords.isEmpty || !pending.isEmpty || inFlightRow != nil
        {
            state.pushed = own.advanced(changes.head)
            try save(
                inserted: [], updated: [stateRow(state)] + pending.map { marked($0, pending: false) },
                deleted: deletedRecords.map(\.snapshot) + (inFlightRow.map { [$0] } ?? []))
        }
        status.update(pendingChanges: 0)
        return .pushed(0, conflicts: 0, pulled: nil)
    }

    /// Whether every model of a replica that never pushed came from this round's merges: the store
    /// held none when the round began, and every local transaction since is the engine's own (the
    /// run of them, ``OwnTransactions``, reaches from then to `head`, so no save of the app, in this
    /// process or another, lies between). Its first push then has nothing to compare with the bases
    /// those merges stored.
    private func onlyPulledModels(_ state: State, head: Int64) -> Bool {
        guard state.pushed == 0, let start = state.emptyThrough else { return false }
        return own.advanced(start) >= head
    }

    /// Deletions of the models an unfinished push named by derived identifiers (``PushInFlight``)
    /// that are gone since and have no record: the remote may hold them. One it never had, it ignores.
    private func inFlightDeletes(seen: inout Set<String>, now: SyncStamp) throws -> [SyncChange] {
        guard !inFlight.isEmpty else { return [] }
        let derivation = try deriving()
        var deletes: [SyncChange] = []
        var chunks: [(entity: String, keys: [Int64])] = []
        for (entity, keys) in inFlight.keys {
            for chunk in keys.sorted().chunked(configuration.pageSize) { chunks.append((entity, Array(chunk))) }
        }
        for (entity, range) in inFlight.ranges {
            let step = Int64(configuration.pageSize)
            var start = range.lowerBound
            while true {
                let (remaining, overflow) = range.upperBound.subtractingReportingOverflow(start)
                let end = overflow || remaining >= step ? start + (step - 1) : range.upperBound
                chunks.append((entity, Array(start...end)))
                guard end < range.upperBound else { break }
                start = end + 1
            }
        }
        for (entity, keys) in chunks {
            let recordEntity = SyncMetadata.recordEntityName(for: entity)
            let chunk = keys.map {
                PersistentIdentifier.identifier(for: local.store.identifier, entityName: entity, primaryKey: $0)
            }
            let live = try local.existing(Array(chunk), entityName: entity)
            let recorded = Set(
                try local.fetch(recordEntity, where: "model", in: chunk.map(StoreValue.reference)).compactMap {
                    SyncRecord(snapshot: $0).model
                })
            let globals = chunk.filter { !live.contains($0) && !recorded.contains($0) }.compactMap {
                derivation.globalID(of: $0)
            }
            guard !globals.isEmpty else { continue }
            // A record holding the identifier stands for the model already (a record without a
            // model is pushed as a deletion above).
            let held = Set(
                try local.fetch(recordEntity, where: "globalID", in: globals.map(StoreValue.string)).map {
                    SyncRecord(snapshot: $0).globalID
                })
            for global in globals where !held.contains(global) && seen.insert(global).inserted {
                deletes.append(SyncChange(globalID: global, entity: entity, kind: .delete, stamp: now))
            }
        }
        return deletes
    }

    /// The records waiting to be pushed again.
    private static let isPending = StoreFilter.equal("pending", .bool(true))

    /// What one push has done so far, over its pages.
    private struct PushRound {
        /// The session every request carries.
        let session: SyncSession
        /// The pull to ask for with the push's requests, if any.
        var pull: SyncPullRequest?
        /// The answer to `pull`, when the push's last request so far carried it.
        var pulled: SyncPullReply?
        /// The changes pushed, one per model (or deletion).
        var total = 0
        /// The links pushed again once their targets were on the remote (their models are in ``total``).
        var links = 0
        var conflicts = 0
        /// Whether a page left out a link to a model the remote did not have yet.
        var withheld = false
        /// The models the remote refused, when it did.
        var stale: [String] = []

        /// Sends one request of the push, with the pull when there is one.
        mutating func send(
            _ changes: [SyncChange], replica: String, transport: any SyncTransport
        ) async throws -> SyncPushReply {
            let reply = try await transport.push(
                SyncPushRequest(replica: replica, changes: changes, session: session, pull: pull))
            pulled = reply.pulled
            return reply
        }
    }

    /// Pushes one page of local models (`read` holds them when the caller read them already) and
    /// stores what the remote acknowledged. Returns `false` when the remote refused the page as
    /// stale (``PushRound/stale`` names the models).
    private func pushPage(
        _ ids: [PersistentIdentifier], read: [PersistentIdentifier: DefaultSnapshot]? = nil,
        index: inout RecordIndex, changes: LocalChanges, round: inout PushRound, now: SyncStamp,
        linksOnly: Bool = false, range: (entity: String, keys: ClosedRange<Int64>)? = nil
    ) async throws -> Bool {
        let source = PageSource(ids: ids, read: read, linksOnly: linksOnly, range: range)
        guard var page = try prepare(source, index: index, changes: changes, round: &round, now: now) else {
            return true
        }
        let reply = try await round.send(page.changes, replica: page.replica, transport: transport)
        guard reply.applied else {
            round.stale = reply.stale
            return false
        }
        try finish(&page, reply: reply, round: &round)
        index = page.index
        return true
    }

    /// What one page of a push is made from: its models, read already when `read` is set.
    private struct PageSource {
        var ids: [PersistentIdentifier]
        var read: [PersistentIdentifier: DefaultSnapshot]?
        /// Whether the page pushes again the links of models pushed before (not counted as changes).
        var linksOnly: Bool
        /// The keys the read went through, for the in-flight row (see ``PushInFlight``).
        var range: (entity: String, keys: ClosedRange<Int64>)?
    }

    /// A page of a push, ready to send (without the models it was made from, which it no longer needs).
    private struct OutgoingPage {
        /// Whether the page pushes again the links of models pushed before (``PageSource/linksOnly``).
        var linksOnly: Bool
        var changes: [SyncChange]
        /// The models sent without a link the remote cannot hold yet.
        var withheld: Set<String>
        /// The records of the page's models, and those created for them.
        var index: RecordIndex
        var replica: String
    }

    /// Makes a page ready to send: its changes, and the records saved before the request (random
    /// identifiers, the in-flight row, models waiting for a link's target). `nil` when nothing of
    /// it differs from the remote. `before` is the page sent before this one and not acknowledged
    /// yet: the remote holds its models before this page arrives, and the records its
    /// acknowledgement will insert are this page's too (``RecordIndex/carry(_:)``).
    private func prepare(
        _ source: PageSource, index: RecordIndex, changes: LocalChanges, round: inout PushRound, now: SyncStamp,
        before: OutgoingPage? = nil
    ) throws -> OutgoingPage? {
        let replica = try replicaID()
        var index = index
        let page = try outgoing(
            source.ids, current: source.read, changes: changes, index: &index, remote: round.session.remote,
            replica: replica, now: now, range: source.range, before: before)
        // Models whose only difference from the remote is a link it cannot hold yet wait for it.
        let sent = Set(page.changes.map(\.globalID))
        let held = page.withheld.subtracting(sent).compactMap { index.record(of: $0) }.filter { !$0.pending }
        if !held.isEmpty { try save(inserted: [], updated: held.map { marked($0, pending: true) }, deleted: []) }
        // A page with something withheld makes the push send those models' links again at its end.
        if !page.withheld.isEmpty { round.withheld = true }
        guard !page.changes.isEmpty else { return nil }
        pushedSinceLastPull = true
        return OutgoingPage(
            linksOnly: source.linksOnly, changes: page.changes, withheld: page.withheld, index: index, replica: replica)
    }

    /// Stores what the remote acknowledged for a page it applied, and counts it.
    @discardableResult
    private func finish(
        _ page: inout OutgoingPage, reply: SyncPushReply, round: inout PushRound
    ) throws -> Acknowledged {
        let acknowledged = try acknowledge(
            page.changes, reply: reply, index: &page.index, state: nil, deletedRecords: [], withheld: page.withheld)
        round.conflicts += acknowledged.conflicts
        if page.linksOnly {
            round.links += page.changes.count
        } else {
            round.total += page.changes.count
            hub.emit(.pushed(page.changes.count))
        }
        return acknowledged
    }

    /// The pages of a first push in flight: at most one request is out at a time, and the remote
    /// applies the pages in the order they are read.
    private struct PagePipeline {
        /// The page sent and not yet acknowledged, with the task awaiting the remote's reply.
        var sending: (page: OutgoingPage, reply: Task<SyncPushReply, any Error>)?
    }

    /// Pushes one page of a first push through `pipeline`: made ready while the remote applies the
    /// page before it, sent once that one is applied, and acknowledged while the remote applies the
    /// next. Returns `false` when the remote refused a page as stale.
    ///
    /// A page is sent only after the one before it was applied, so the remote holds every page it
    /// applied in order, and a refused page stops the push before the next leaves. A page that
    /// links to a model of the page before it is made ready as if that model were on the remote;
    /// when the remote folded a model of that page into one it had (``SyncPushReply/merged``), the
    /// page is made ready again after the acknowledgement, with the identifiers that stored.
    private func pushPipelined(
        _ source: PageSource, pipeline: inout PagePipeline, changes: LocalChanges, round: inout PushRound,
        now: SyncStamp
    ) async throws -> Bool {
        var next = try prepare(
            source, index: RecordIndex(), changes: changes, round: &round, now: now, before: pipeline.sending?.page)
        guard var previous = pipeline.sending else {
            if let next { pipeline.sending = (next, send(next, round: round)) }
            return true
        }
        pipeline.sending = nil
        let reply = try await previous.reply.value
        guard reply.applied else {
            round.stale = reply.stale
            return false
        }
        if !reply.merged.isEmpty {
            // Identifiers of the page before changed: made ready again once they are stored.
            try finish(&previous.page, reply: reply, round: &round)
            next = try prepare(source, index: RecordIndex(), changes: changes, round: &round, now: now)
            if let next { pipeline.sending = (next, send(next, round: round)) }
            return true
        }
        if let next { pipeline.sending = (next, send(next, round: round)) }
        let acknowledged = try finish(&previous.page, reply: reply, round: &round)
        // The records the page made ready meanwhile carried are stored now.
        pipeline.sending?.page.index.carriedRecordsSaved(acknowledged.inserted, acknowledged.result)
        return true
    }

    /// Waits for the last page of `pipeline` and stores its acknowledgement.
    private func drain(_ pipeline: inout PagePipeline, round: inout PushRound) async throws -> Bool {
        guard var last = pipeline.sending else { return true }
        let reply = try await last.reply.value
        pipeline.sending = nil
        guard reply.applied else {
            round.stale = reply.stale
            return false
        }
        try finish(&last.page, reply: reply, round: &round)
        return true
    }

    /// Sends a page of a first push (which carries no pull) on a task of its own, so the engine
    /// goes on with the next page while the remote applies this one.
    private func send(_ page: OutgoingPage, round: PushRound) -> Task<SyncPushReply, any Error> {
        let request = SyncPushRequest(replica: page.replica, changes: page.changes, session: round.session, pull: nil)
        let transport = transport
        return Task.detached { try await transport.push(request) }
    }

    /// The changes to push for these local models: new ones whole, others what differs from their
    /// base. A model that had no global identifier gets the one derived from its key, stored with
    /// the acknowledgement (the in-flight row lists the model first); one whose key gives none gets a
    /// random one, saved first, so a repeated push reuses it. `read` holds the models when the
    /// caller read them already.
    ///
    /// A link to a model the remote does not have yet (never pushed, and not in this page) is left
    /// out: the remote would drop it, and the base would then name a link the remote lacks, which
    /// the next pull would bring back as the remote's change. Those models are listed in `withheld`;
    /// they stay pending and are pushed again once their targets are there.
    private func outgoing(
        _ ids: [PersistentIdentifier], current read: [PersistentIdentifier: DefaultSnapshot]?,
        changes: LocalChanges, index: inout RecordIndex, remote: String, replica: String, now: SyncStamp,
        range: (entity: String, keys: ClosedRange<Int64>)?, before: OutgoingPage?
    ) throws -> (changes: [SyncChange], withheld: Set<String>) {
        let derivation = try deriving()
        if let before { index.carry(before.index) }
        var globals = try index.globalIDs(for: ids, store: local, deriving: derivation, mint: Self.randomGlobalID)
        var current: [PersistentIdentifier: DefaultSnapshot] = read ?? [:]
        if read == nil {
            for (entity, group) in Dictionary(grouping: ids, by: \.entityName) {
                let models = try local.snapshots(group, entityName: entity)
                // Entities hold distinct models: the first one's need no merge.
                if current.isEmpty { current = models } else { current.merge(models) { $1 } }
            }
        }
        var values = try index.syncValues(of: current, store: local, deriving: derivation, mint: Self.randomGlobalID)
        // Records of random identifiers are stored before the push, so a repeated push reuses them.
        // Derived ones wait for the acknowledgement: a repeated push derives them again, and the
        // in-flight row lists their models, in case one is deleted before it is acknowledged.
        let early = index.derivedRecordInserts.filter {
            !index.rederivable.contains($0["globalID"]?.stringValue ?? "")
        }
        // Only this page's models are sent under their new identifiers: a link to another model
        // without a record is left out below.
        let marker = try inFlight.listing(
            index.rederivableKeys(among: Set(current.keys)), range: range, remote: remote, replica: replica,
            store: local)
        if !early.isEmpty || marker != nil {
            let saved = try save(
                inserted: early + (marker?.isNew == true ? [marker!.row] : []),
                updated: marker?.isNew == false ? [marker!.row] : [], deleted: [])
            inFlight.saved(saved)
            if saved.snapshotsToReregister.isEmpty {
                // Stored as they were: only their identifiers changed.
                index.derivedRecordsSaved(early, saved)
            } else {
                index = RecordIndex()
                if let before { index.carry(before.index) }
                globals = try index.globalIDs(
                    for: ids, store: local, deriving: derivation, mint: Self.randomGlobalID)
            }
        }
        // Which linked models the remote has: those synced before, and this page's.
        let inPage = Set(current.keys.compactMap { globals[$0] }).union(before?.changes.map(\.globalID) ?? [])
        var targets: [String] = []
        for modelValues in values.values {
            for value in modelValues.values {
                for target in SyncValues.referencedGlobalIDs(value) {
                    if case .string(let global) = target.primaryKey, !inPage.contains(global) { targets.append(global) }
                }
            }
        }
        try index.add(globalIDs: targets, store: local)
        func isOnRemote(_ target: PersistentIdentifier) -> Bool {
            guard case .string(let global) = target.primaryKey else { return false }
            return inPage.contains(global) || index.record(of: global)?.base != nil
        }
        var withheld = Set<String>()
        for (id, modelValues) in values {
            var kept = modelValues
            for (name, value) in modelValues {
                switch value {
                case .reference(let target) where !isOnRemote(target):
                    kept[name] = .null
                case .references(let targets) where !targets.allSatisfy(isOnRemote):
                    kept[name] = .references(targets.filter(isOnRemote))
                default:
                    continue
                }
            }
            guard kept != modelValues else { continue }
            values[id] = kept
            if let global = globals[id] ?? index.global(of: id) { withheld.insert(global) }
        }
        var out: [SyncChange] = []
        for (id, snapshot) in current {
            guard let global = globals[id] ?? index.global(of: id), let modelValues = values[id] else { continue }
            let stamp = max(
                changes.stamp(of: id) ?? now, SyncStamp(milliseconds: 0, counter: 0, replica: replica))
            guard let base = index.record(of: global)?.base else {
                out.append(
                    SyncChange(
                        globalID: global, entity: snapshot.entity.name, kind: .insert, values: modelValues, stamp: stamp
                    ))
                continue
            }
            var changed: [String: StoreValue] = [:]
            var was: [String: StoreValue] = [:]
            for (name, value) in modelValues where base[name] != value {
                changed[name] = value
                was[name] = base[name] ?? .null
            }
            guard !changed.isEmpty else { continue }
            out.append(
                SyncChange(
                    globalID: global, entity: snapshot.entity.name, kind: .update, values: changed, base: was,
                    stamp: stamp))
        }
        return (out, withheld)
    }

    private func marked(_ record: SyncRecord, pending: Bool) -> DefaultSnapshot {
        var record = record
        record.set("pending", .bool(pending))
        return record.snapshot
    }

    /// Stores what the remote now holds as the base of every pushed model, in one save with the
    /// push cursor (on the last batch).
    private func acknowledge(
        _ batch: [SyncChange], reply: SyncPushReply, index: inout RecordIndex, state: State?,
        deletedRecords: [SyncRecord], withheld: Set<String> = []
    ) throws -> Acknowledged {
        try index.add(globalIDs: batch.map(\.globalID) + reply.merged.values, store: local)
        let states = Dictionary(reply.states.map { ($0.globalID, $0) }, uniquingKeysWith: { $1 })
        var updated: [DefaultSnapshot] = []
        var deleted: [DefaultSnapshot] = []
        var conflicts: [SyncConflict] = []
        let deletedByGlobal = Dictionary(deletedRecords.map { ($0.globalID, $0) }, uniquingKeysWith: { $1 })
        var stampsBlobs = SyncStampsBlobs()
        for change in batch {
            if change.kind == .delete {
                if let record = deletedByGlobal[change.globalID] ?? index.record(of: change.globalID) {
                    deleted.append(record.snapshot)
                }
                continue
            }
            guard var record = index.record(of: change.globalID) else { continue }
            if let existing = reply.merged[change.globalID], let remote = states[existing]?.values {
                // Folded into a model the remote had with the same unique values: this model becomes
                // that one; what differs is pushed on the next round, and kept as a conflict.
                record.set("globalID", .string(existing))
                for (name, value) in change.values where remote[name] != value {
                    conflicts.append(
                        SyncConflict(
                            kind: .unique, globalID: existing, entity: change.entity, property: name, base: nil,
                            local: value, remote: remote[name], chosen: value, outcome: "localWins"))
                }
                record.set("base", .data(SyncCoding.encodeValues(remote)))
                record.set("pending", .bool(true))
                updated.append(record.snapshot)
                continue
            }
            // The base becomes what was pushed; what else the remote holds arrives with the next pull,
            // which reads this push's transaction too.
            if change.kind == .insert && record.stamps.keys.allSatisfy({ change.values[$0] != nil }) {
                // A new model: its base is what was pushed, and every property carries the push's stamp.
                record.set("base", .data(SyncCoding.encodeValues(change.values)))
                record.set("stamps", .data(stampsBlobs.encode(change.stamp, names: change.values.keys)))
            } else {
                // The pushed values over the base (none for a model new to the remote), and the push's
                // stamp on them, patched into the stored blobs.
                let base = SyncRecordCoding.overlay(
                    change.kind == .insert ? Data() : record.storedBase, with: change.values)
                let stamps = SyncRecordCoding.restamp(
                    record.storedStamps, names: change.values.keys, stamp: change.stamp)
                record.set("base", .data(base))
                record.set("stamps", .data(stamps))
            }
            record.set("pending", .bool(withheld.contains(change.globalID)))
            updated.append(record.snapshot)
        }
        // The records of identifiers derived for this push are stored now, those of pushed models
        // with their new bases.
        let derived = updated.filter { $0.persistentIdentifier.isTemporary }
        let acknowledged = Set(derived.map(\.persistentIdentifier))
        let recordInserts =
            derived + index.derivedRecordInserts.filter { !acknowledged.contains($0.persistentIdentifier) }
        updated.removeAll { $0.persistentIdentifier.isTemporary }
        let conflictEntity = try local.entity(SyncMetadata.conflictEntityName)
        let rows = try conflicts.map { try $0.snapshot(entity: conflictEntity) }
        let inserted = recordInserts + rows
        let result = try save(
            inserted: inserted, updated: updated + (state.map { [stateRow($0)] } ?? []), deleted: deleted)
        index.derivedRecordInserts = []
        index.rederivable = []
        for conflict in conflicts { hub.emit(.conflict(conflict)) }
        return Acknowledged(conflicts: conflicts.count, inserted: inserted, result: result)
    }

    /// What storing an acknowledgement did.
    private struct Acknowledged {
        /// The conflicts it recorded.
        var conflicts: Int
        /// The rows it inserted, in the save's order.
        var inserted: [DefaultSnapshot]
        /// The save's result.
        var result: DataStoreSaveChangesResult<DefaultSnapshot>
    }
}

/// What changed locally, read the first time it is asked for.
final class LazyLocalChanges {
    private let load: () throws -> SyncEngine.LocalChanges
    private var loaded: SyncEngine.LocalChanges?

    init(_ load: @escaping () throws -> SyncEngine.LocalChanges) { self.load = load }

    /// When the app last changed a model since the last push, if it did.
    func stamp(of id: PersistentIdentifier) throws -> SyncStamp? {
        if loaded == nil { loaded = try load() }
        return loaded?.stamp(of: id)
    }
}
