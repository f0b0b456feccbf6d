import Foundation
import ModelStore

/// The remote side of sync: a store that replicas push their changes to and pull others' from.
///
/// A host serves any store the process can open (a file store, SQLite, PostgreSQL) whose schema
/// includes the sync entities (``ModelStore/Schema/includingSyncMetadata()``). It keeps no state of
/// its own: everything it needs is in the store, so several hosts, in one process or many, can
/// serve one shared store, and a push that meets a concurrent write is refused whole and retried.
///
/// - A push applies each change only if the properties it changes still hold the values the
///   replica based it on (or already hold the pushed values, so a repeated push is harmless);
///   otherwise nothing is stored and the reply names the stale models, which the replica pulls,
///   merges and pushes again. A new model whose unique values another model already has is not
///   inserted: the reply names the existing model, which the pushing replica's model becomes.
/// - A pull reads the store whole the first time, then follows its history. Models written to the store without the engine get a global identifier
///   derived from their identity, the same for every replica.
public final class SyncHost: Sendable {
    /// The container that holds the store open.
    public let container: ModelContainer
    let store: SyncStore
    private let fingerprint: String
    let scope: SyncScope?
    /// Serialize this host's pushes per requester (a requester's subject picks one of them), so
    /// requesters with different scopes push at once; pushes that meet anyway (on shared models,
    /// or from other hosts on the same store) are caught by the store's own conflict checks.
    /// Reads (pulls, fetches) take none.
    private let pushing = (0..<32).map { _ in NSLock() }
    /// The newest history, read once for the pulls that arrive together.
    let tail: SyncHistoryTail

    /// The author the host records its saves under: `modelstore-sync:` and the pushing replica.
    public static func author(forReplica replica: String) -> String { "modelstore-sync:" + replica }

    /// The author of a push that wrote exactly what the replica sent and nothing else: the
    /// replica's acknowledgement records that same state, so its pulls leave the transaction out
    /// instead of bringing its own models back.
    static func exactAuthor(forReplica replica: String) -> String { author(forReplica: replica) + ":exact" }

    /// A host for the first store of `container`, which gives each replica what `scope` lets it
    /// hold (everything when `nil`).
    ///
    /// Throws ``SyncError/Code/missingMetadata`` when the container's schema lacks the sync entities.
    public init(container: ModelContainer, scope: SyncScope? = nil) throws {
        guard container.schema.hasSyncMetadata else {
            throw SyncError(
                .missingMetadata, "the remote container's schema has no sync entities",
                remedy: "Create it with Schema(...).includingSyncMetadata()")
        }
        self.container = container
        self.store = SyncStore(store: container.stores[0], schema: container.schema, author: "modelstore-sync")
        self.fingerprint = SyncCoding.fingerprint(container.schema)
        self.scope = scope
        self.tail = SyncHistoryTail(store: store)
    }

    /// The host's identity and schema digest.
    public func hello(_ request: SyncHello) throws -> SyncHelloReply {
        SyncHelloReply(
            remote: store.store.identifier, schemaVersion: "\(store.schema.version)", schemaFingerprint: fingerprint)
    }

    // MARK: Push

    /// Applies a replica's changes all or nothing; see the type's description for when it refuses.
    /// `access` is who asks, for the host's scope.
    ///
    /// When the request carries a ``SyncPushRequest/pull`` and the changes were stored, the reply
    /// also holds that pull's answer, read after the push's transaction was committed.
    public func push(_ request: SyncPushRequest, access: SyncAccess = .unrestricted) throws -> SyncPushReply {
        try checkSession(request.session, replica: request.replica, request: "push")
        let check = try ScopeCheck(scope, access: access, schema: store.schema)
        let key = access.subject ?? ""
        var reply = try pushing[Int(UInt(bitPattern: key.hashValue) % UInt(pushing.count))].withLock {
            try applyPush(request, check: check)
        }
        if reply.applied, let pull = request.pull {
            // The push is stored whatever happens here: a pull that fails leaves the answer out,
            // and the replica pulls with a request of its own, which reports the failure.
            reply.pulled = try? self.pull(
                SyncPullRequest(replica: request.replica, cursor: pull.cursor, limit: pull.limit), access: access)
        }
        return reply
    }

    /// Refuses a request whose session names another store or another schema than this host's:
    /// the replica said hello to a different remote (its address now leads elsewhere) or the
    /// remote's schema changed since. Requests without a session (from replicas that say hello
    /// every round) pass.
    func checkSession(_ session: SyncSession?, replica: String?, request: String) throws {
        guard let session else { return }
        let here = store.store.identifier
        let request = request + (replica.map { " of replica '\($0)'" } ?? "")
        guard session.remote == here else {
            throw SyncError(
                .remoteChanged,
                "the \(request) was meant for the store '\(session.remote)', "
                    + "but this remote serves '\(here)'",
                remedy: "The engine says hello again and syncs with this store; nothing was stored",
                isTransient: true)
        }
        guard session.schemaFingerprint == fingerprint else {
            throw SyncError(
                .schemaMismatch,
                "the \(request) was refused: its schema differs from the one of "
                    + "'\(here)' (version \(store.schema.version)), which changed since the replica's hello",
                remedy: "Migrate the store that is behind to the same models (update the app, or open the "
                    + "remote with the new schema), then sync again; nothing was stored")
        }
    }

    private func applyPush(_ request: SyncPushRequest, check: ScopeCheck) throws -> SyncPushReply {
        var writer = SyncStore(
            store: store.store, schema: store.schema, author: Self.author(forReplica: request.replica))
        // The changed models, and the models the changes refer to.
        var globalIDs = request.changes.map(\.globalID)
        for change in request.changes {
            for value in change.values.values {
                for id in SyncValues.referencedGlobalIDs(value) {
                    if case .string(let global) = id.primaryKey { globalIDs.append(global) }
                }
            }
        }
        var index = try RecordIndex.load(globalIDs: globalIDs, store: writer)
        let current = try index.models(store: writer)
        // A change may link only models the replica's scope holds (or models new in this push):
        // a link to another's model would also change that model's side of the relationship.
        for change in request.changes where change.kind != .delete {
            for value in change.values.values {
                for id in SyncValues.referencedGlobalIDs(value) {
                    guard case .string(let global) = id.primaryKey, let target = index.model(of: global),
                        let model = current[target], !check.allows(model)
                    else { continue }
                    throw check.linkRefusal(change.globalID, entity: change.entity, to: global, of: model.entity.name)
                }
            }
        }

        var inserted: [DefaultSnapshot] = []
        var updated: [DefaultSnapshot] = []
        var deleted: [DefaultSnapshot] = []
        var expected: [PersistentIdentifier: [StoreValue]] = [:]
        var recordInserts: [DefaultSnapshot] = []
        var recordUpdates: [DefaultSnapshot] = []
        var stale: [String] = []
        var merged: [String: String] = [:]
        var pendingInserts: [(change: SyncChange, snapshot: DefaultSnapshot)] = []
        // Where each record entity keeps a record's values, by app entity.
        var recordSlots: [String: SyncRecordSlots] = [:]
        var stampsBlobs = SyncStampsBlobs()
        // Whether the push writes exactly the pushed values and nothing else (see `exactAuthor`).
        var exact = true
        // New models' temporary identifiers, so changes in the same push can refer to them.
        for change in request.changes where change.kind == .insert && index.model(of: change.globalID) == nil {
            index.assignTemporary(change.globalID, entity: change.entity)
        }
        // The stored models' values in sync form, read one property at a time: a change compares
        // only the properties it pushes.
        let currentGlobals = try index.relatedGlobalIDs(
            of: current.values, store: writer, mint: SyncCoding.derivedGlobalID)
        func currentValue(_ model: DefaultSnapshot, _ name: String) -> StoreValue? {
            SyncValues.value(named: name, of: model, carrying: writer.owning[model.entity.name] ?? []) {
                currentGlobals[$0]
            }
        }
        let uniques = try UniqueLookup.load(
            request.changes.filter { $0.kind == .insert }.map { ($0.entity, $0.values) }, store: writer)
        // New models folded into one this store has with the same unique values (two offline
        // "Lisbon" trips), found before any change is applied: a link of this push to a folded model
        // names the model it was folded into (nothing, when the replica's scope does not hold that
        // one), never the folded model, which the save does not insert.
        var folds: [String: PersistentIdentifier] = [:]
        for change in request.changes where change.kind == .insert {
            guard index.model(of: change.globalID)?.isTemporary == true,
                let match = uniques.match(entity: try writer.entity(change.entity), values: change.values),
                let existing = try index.globalIDs(
                    for: [match.persistentIdentifier], store: writer, mint: SyncCoding.derivedGlobalID
                )[match.persistentIdentifier]
            else { continue }
            merged[change.globalID] = existing
            if check.allows(match) { folds[change.globalID] = match.persistentIdentifier }
        }
        /// The model here a global reference names, if this side has it.
        func localID(_ reference: PersistentIdentifier) -> PersistentIdentifier? {
            if case .string(let global) = reference.primaryKey, merged[global] != nil { return folds[global] }
            return index.localID(reference)
        }

        for change in request.changes {
            let entity = try writer.entity(change.entity)
            let record = index.record(of: change.globalID)
            let modelID = index.model(of: change.globalID)
            let model = modelID.flatMap { current[$0] }
            switch change.kind {
            case .insert:
                // Folded into a model this store has (above).
                if merged[change.globalID] != nil { continue }
                if let model {
                    // The model is here already: a repeated push, fine when nothing differs.
                    if change.values.contains(where: { currentValue(model, $0.key) != $0.value }) {
                        stale.append(change.globalID)
                    }
                    exact = false
                    continue
                }
                guard let temporary = index.model(of: change.globalID) else { continue }
                // A link to a model the host lacks is dropped on the way in: the stored model differs.
                if change.values.values.contains(where: {
                    SyncValues.referencedGlobalIDs($0).contains { localID($0) == nil }
                }) {
                    exact = false
                }
                var snapshot = try DefaultSnapshot(persistentIdentifier: temporary, entity: entity, namedValues: [:])
                SyncValues.write(change.values, into: &snapshot, localID: { localID($0) })
                guard check.allows(snapshot) else { throw check.refusal(change.globalID, entity: entity.name, "adds") }
                pendingInserts.append((change, snapshot))
                // Every pushed property carries the change's stamp.
                let stamps = stampsBlobs.encode(change.stamp, names: change.values.keys)
                if var record {
                    record.set("model", .reference(temporary))
                    record.set("stamps", .data(stamps))
                    record.set("key", .string(""))
                    record.set("deletedAt", .int(0))
                    recordUpdates.append(record.snapshot)
                } else {
                    let slots: SyncRecordSlots
                    if let known = recordSlots[change.entity] {
                        slots = known
                    } else {
                        slots = try SyncRecordSlots(writer.entity(SyncMetadata.recordEntityName(for: change.entity)))
                        recordSlots[change.entity] = slots
                    }
                    recordInserts.append(
                        SyncRecord.new(
                            slots: slots, globalID: change.globalID, model: temporary, base: Data(), stamps: stamps
                        ).snapshot)
                }
            case .update:
                guard var model, var record else {
                    stale.append(change.globalID)  // deleted here: the replica pulls the delete and decides
                    continue
                }
                guard check.allows(model) else { throw check.refusal(change.globalID, entity: entity.name, "changes") }
                var patch: [String: StoreValue] = [:]
                var clashes = false
                for (name, value) in change.values {
                    let stored = currentValue(model, name)
                    guard stored != value else { continue }
                    if case .references(let pushed) = value, case .references(let here)? = stored {
                        // To-many relationships change as sets: the replica's additions and removals.
                        let was: [PersistentIdentifier] =
                            if case .references(let list)? = change.base[name] { list } else { [] }
                        let result = Set(here).union(Set(pushed).subtracting(was)).subtracting(
                            Set(was).subtracting(pushed))
                        patch[name] = .references(result.sorted())
                    } else if stored == change.base[name] {
                        patch[name] = value
                    } else {
                        clashes = true
                    }
                }
                if clashes {
                    stale.append(change.globalID)
                    continue
                }
                // Stored as sent only when every pushed value was written as it came (a set merge of a
                // to-many relationship, a value held already, or a dropped link make it differ).
                if patch.count != change.values.count || patch.contains(where: { change.values[$0.key] != $0.value })
                    || patch.values.contains(where: {
                        SyncValues.referencedGlobalIDs($0).contains { localID($0) == nil }
                    })
                {
                    exact = false
                }
                guard !patch.isEmpty else { continue }
                expected[model.persistentIdentifier] = model.values
                SyncValues.write(patch, into: &model, localID: { localID($0) })
                guard check.allows(model) else { throw check.refusal(change.globalID, entity: entity.name, "moves") }
                updated.append(model)
                let stamps = SyncRecordCoding.restamp(record.storedStamps, names: patch.keys, stamp: change.stamp)
                record.set("stamps", .data(stamps))
                recordUpdates.append(record.snapshot)
            case .delete:
                guard let model, var record else { continue }  // gone already
                guard check.allows(model) else { throw check.refusal(change.globalID, entity: entity.name, "deletes") }
                deleted.append(model)
                try writer.removeReferences(to: model, from: &updated)
                record.set("model", .null)
                record.set("key", .string("\(model.persistentIdentifier.primaryKey)"))
                record.set("deletedAt", .int(-1))
                recordUpdates.append(record.snapshot)
            }
        }
        guard stale.isEmpty else {
            return SyncPushReply(applied: false, stale: stale, merged: [:], states: [])
        }
        // The other ends of changed links follow the carried ends.
        var written = pendingInserts.map(\.snapshot) + updated
        let holders = try writer.maintainInverses(of: &written, before: current)
        inserted = Array(written.prefix(pendingInserts.count))
        updated = Array(written.dropFirst(pendingInserts.count)) + holders
        let deletedIDs = Set(deleted.map(\.persistentIdentifier))
        updated.removeAll { deletedIDs.contains($0.persistentIdentifier) }
        inserted += index.derivedRecordInserts
        // Models the replica did not send (the other ends of links, references to a deleted model)
        // or a fold into an existing model: its pulls must bring this transaction back.
        exact = exact && holders.isEmpty && deleted.isEmpty && merged.isEmpty
        if exact {
            writer = SyncStore(
                store: store.store, schema: store.schema, author: Self.exactAuthor(forReplica: request.replica))
        }
        do {
            let result = try writer.save(
                inserted: inserted + recordInserts, updated: updated + recordUpdates, deleted: deleted,
                expected: expected)
            let insertedIDs = pendingInserts.map { result.remappedIdentifiers[$0.snapshot.persistentIdentifier] }
            container.changeHub.publish(
                ModelContainerChange(
                    inserted: insertedIDs.compactMap { $0 }, updated: updated.map { $0.persistentIdentifier },
                    deleted: deleted.map { $0.persistentIdentifier }, author: writer.editingState.author,
                    historyTokens: result.historyToken.map { [$0] } ?? [], origin: .external))
        } catch let error as DataStoreError where error.code == .uniqueConstraintViolation {
            // A concurrent push (or a read recording global identifiers) stored a unique value or a
            // record this push also adds, after this host looked: the next round finds it and merges.
            throw SyncError(
                .busy, "another write added what this push adds at the same moment", remedy: "The engine retries",
                isTransient: true, underlyingError: error)
        } catch let error as DataStoreError where error.code == .conflict {
            // Another writer (a host in another process, or another program) changed one of these
            // models between this host's read and its save, which the store caught from the expected
            // values: the same answer as a clash found while reading, so the replica pulls, merges
            // and pushes again instead of failing the round.
            return SyncPushReply(
                applied: false, stale: Array(expected.keys.compactMap(index.global)), merged: [:], states: [])
        } catch {
            throw SyncError.store(
                error, while: "applying \(request.changes.count) change(s) to '\(store.store.identifier)'")
        }
        // Only the models pushed ones were folded into need their state: the replica's own become
        // what it pushed.
        return SyncPushReply(
            applied: true, stale: [], merged: merged, states: merged.isEmpty ? [] : try states(of: Array(merged.values))
        )
    }

    // MARK: Pull

    /// A page of changes after the replica's cursor, of the models `access` may hold.
    ///
    /// Pulls run concurrently with each other and with pushes; pulls that arrive together share one
    /// read of the store's history (see ``SyncHistoryTail``).
    public func pull(_ request: SyncPullRequest, access: SyncAccess = .unrestricted) throws -> SyncPullReply {
        try checkSession(request.session, replica: request.replica, request: "pull")
        let limit = max(1, request.limit)
        let check = try ScopeCheck(scope, access: access, schema: store.schema)
        return try retryingDerivedRecords {
            if let snapshot = request.cursor.snapshot {
                return try pullSnapshot(snapshot, limit: limit, check: check)
            }
            return try pullHistory(request, limit: limit, check: check)
        }
    }

    /// Runs a read again (once) when another request of this or another host recorded global
    /// identifiers for the same models between its read of the records and its save: the second
    /// time it finds those records.
    private func retryingDerivedRecords<Result>(_ read: () throws -> Result) throws -> Result {
        do {
            return try read()
        } catch let error as SyncError {
            guard let underlying = error.underlyingError as? DataStoreError,
                underlying.code == .uniqueConstraintViolation || underlying.code == .conflict
            else { throw error }
            return try read()
        }
    }

    private func pullSnapshot(
        _ position: SyncCursor.SnapshotPosition, limit: Int, check: ScopeCheck
    ) throws -> SyncPullReply {
        var position = position
        if position.head < 0 { position.head = try tail.newest() }
        let entities = store.schema.syncedEntities.map(\.name)
        var entityIndex = entities.firstIndex(of: position.entity) ?? 0
        if position.entity.isEmpty || !entities.contains(position.entity) {
            position.entity = entities.first ?? ""
            position.offset = 0
            position.after = nil
        }
        var rows: [DefaultSnapshot] = []
        while rows.count < limit, entityIndex < entities.count {
            let name = entities[entityIndex]
            var read = EntityReadPosition(after: position.after, offset: position.offset, through: position.through)
            let page = try store.readPage(
                &read, entity: name, limit: limit - rows.count, filter: check.filter(for: name))
            (position.after, position.offset, position.through) = (read.after, read.offset, read.through)
            rows += page.rows
            if page.exhausted {
                entityIndex += 1
                if entityIndex < entities.count {
                    position = .init(head: position.head, entity: entities[entityIndex], after: nil, offset: 0)
                }
            }
        }
        var index = RecordIndex()
        let states = try currentStates(rows, index: &index)
        try saveDerivedRecords(index)
        if entityIndex >= entities.count {
            return SyncPullReply(models: states, cursor: SyncCursor(transaction: position.head), hasMore: true)
        }
        return SyncPullReply(
            models: states, cursor: SyncCursor(transaction: 0, snapshot: position), hasMore: true)
    }

    private func pullHistory(_ request: SyncPullRequest, limit: Int, check: ScopeCheck) throws -> SyncPullReply {
        let transactions: [DefaultHistoryTransaction]
        do {
            transactions =
                try tail.transactions(after: request.cursor.transaction, limit: limit)
                ?? store.transactions(after: request.cursor.transaction, limit: limit)
        } catch DataStoreError.historyTokenExpired {
            // The history this replica needs is gone: read the store whole again; the replica merges
            // it against what it has, so nothing local is lost.
            return try pullSnapshot(.init(head: -1, entity: "", after: nil, offset: 0), limit: limit, check: check)
        }
        return try page(
            transactions, after: request.cursor.transaction, limit: limit,
            leavingOut: Self.exactAuthor(forReplica: request.replica), check: check)
    }

    /// Pulls of several replicas of one requester, as ``pull(_:access:)`` answers each, in the
    /// order of `requests`; the replies of requests from the same place and of the same limit are
    /// one read and one page (unless the page holds one of the replicas' own exact pushes, which
    /// that replica's page leaves out).
    ///
    /// With `knownThrough`, the number of a transaction this host has already read the history
    /// up to (a change feed's newest), the pulls may answer from the history as that read left
    /// it, instead of each waiting for a read that begins after the call; a page then stops at a
    /// transaction no earlier than `knownThrough`.
    public func pull(
        _ requests: [SyncPullRequest], access: SyncAccess = .unrestricted, knownThrough: Int64? = nil
    ) throws -> [SyncPullReply] {
        var replies = [SyncPullReply?](repeating: nil, count: requests.count)
        // Requests from one place with one limit, by their index; the rest are pulled one by one.
        var groups: [PullGroupKey: [Int]] = [:]
        for (index, request) in requests.enumerated() {
            try checkSession(request.session, replica: request.replica, request: "pull")
            if request.cursor.snapshot == nil {
                groups[PullGroupKey(after: request.cursor.transaction, limit: max(1, request.limit)), default: []]
                    .append(index)
            } else {
                replies[index] = try pull(request, access: access)
            }
        }
        let check = try ScopeCheck(scope, access: access, schema: store.schema)
        for (key, indices) in groups {
            let transactions: [DefaultHistoryTransaction]
            do {
                transactions =
                    try knownThrough.flatMap { tail.transactions(after: key.after, limit: key.limit, holding: $0) }
                    ?? tail.transactions(after: key.after, limit: key.limit)
                    ?? store.transactions(after: key.after, limit: key.limit)
            } catch DataStoreError.historyTokenExpired {
                for index in indices { replies[index] = try pull(requests[index], access: access) }
                continue
            }
            // A replica whose own exact push is in the page gets a page of its own without it.
            let authors = Set(transactions.map(\.author))
            var shared: [Int] = []
            for index in indices {
                let own = Self.exactAuthor(forReplica: requests[index].replica)
                if authors.contains(own) {
                    replies[index] = try retryingDerivedRecords {
                        try page(transactions, after: key.after, limit: key.limit, leavingOut: own, check: check)
                    }
                } else {
                    shared.append(index)
                }
            }
            guard !shared.isEmpty else { continue }
            let reply = try retryingDerivedRecords {
                try page(transactions, after: key.after, limit: key.limit, leavingOut: nil, check: check)
            }
            for index in shared { replies[index] = reply }
        }
        // Every request has its reply by now.
        return replies.compactMap { $0 }
    }

    private struct PullGroupKey: Hashable {
        var after: Int64
        var limit: Int
    }

    /// The page of these transactions (read after `after`, at most `limit` of them) that a replica
    /// of `check`'s requester pulls, without the transactions of `leavingOut` (the replica's own
    /// exact pushes).
    private func page(
        _ transactions: [DefaultHistoryTransaction], after: Int64, limit: Int, leavingOut ownExact: String?,
        check: ScopeCheck
    ) throws -> SyncPullReply {
        var changed: [PersistentIdentifier] = []
        var deletions: [(id: PersistentIdentifier, transaction: Int64)] = []
        var seen = Set<PersistentIdentifier>()
        // The replica's own pushes are included: a push can change models it did not send (the
        // other ends of links, references to a model it deleted), and what others changed since; the
        // replica finds the rest equal to what it has and writes nothing for them. A push stored
        // exactly as sent is left out: the replica's acknowledgement holds what it wrote, and what
        // others changed since is in their own transactions.
        for transaction in transactions where transaction.author != ownExact {
            for change in transaction.changes {
                let id = change.changedPersistentIdentifier
                guard !SyncMetadata.isMetadata(id.entityName) else { continue }
                if case .delete = change {
                    deletions.append((id, transaction.transactionIdentifier))
                } else if seen.insert(id).inserted {
                    changed.append(id)
                }
            }
        }
        let cursor = SyncCursor(transaction: transactions.last?.transactionIdentifier ?? after)
        var rows: [DefaultSnapshot] = []
        for (entity, ids) in Dictionary(grouping: changed, by: \.entityName) {
            let found = try store.snapshots(ids, entityName: entity)
            rows += ids.compactMap { found[$0] }
            for id in ids where found[id] == nil { deletions.append((id, cursor.transaction)) }
        }
        var index = RecordIndex()
        // A model outside the requester's scope (or that just left it) arrives as a deletion.
        let outside = rows.filter { !check.allows($0) }
        rows.removeAll { !check.allows($0) }
        var states = try currentStates(rows, index: &index)
        let left = try index.globalIDs(
            for: outside.map(\.persistentIdentifier), store: store, mint: SyncCoding.derivedGlobalID)
        states += outside.compactMap { row in
            left[row.persistentIdentifier].map { SyncModelState(globalID: $0, entity: row.entity.name, values: nil) }
        }
        states += try deletedStates(deletions, index: &index)
        try saveDerivedRecords(index)
        return SyncPullReply(models: states, cursor: cursor, hasMore: transactions.count >= limit)
    }

    /// The global identifiers of models deleted in these transactions.
    private func deletedStates(
        _ deletions: [(id: PersistentIdentifier, transaction: Int64)], index: inout RecordIndex
    ) throws -> [SyncModelState] {
        var states: [SyncModelState] = []
        var reported = Set<String>()
        for (entity, items) in Dictionary(grouping: deletions, by: { $0.id.entityName }) {
            let recordEntity = SyncMetadata.recordEntityName(for: entity)
            var found: [SyncRecord] = []
            // Deleted through a push: the record kept the key.
            found += try store.fetch(
                recordEntity, where: "key", in: items.map { .string("\($0.id.primaryKey)") }
            ).map(SyncRecord.init)
            // Deleted directly, by a store that leaves the record's reference in place.
            found += try store.fetch(recordEntity, where: "model", in: items.map { .reference($0.id) })
                .map(SyncRecord.init)
            // Deleted directly, by a store that cleared the reference: claim them for this
            // transaction, so every replica reading it finds them.
            let newest = items.map(\.transaction).max() ?? 0
            let anonymous = try store.fetch(
                recordEntity,
                filter: .and([
                    .compare("model", .equal, .null), .compare("key", .equal, .string("")),
                    .compare("deletedAt", .equal, .int(0)),
                ]))
            for var record in anonymous.map(SyncRecord.init) {
                record.set("deletedAt", .int(newest))
                index.recordUpdates.append(record.snapshot)
                found.append(record)
            }
            found += try store.fetch(
                recordEntity, where: "deletedAt", in: Set(items.map(\.transaction)).map { .int($0) }
            ).map(SyncRecord.init)
            for record in found where reported.insert(record.globalID).inserted {
                states.append(SyncModelState(globalID: record.globalID, entity: entity, values: nil))
            }
        }
        return states
    }

    /// The current state of models by global identifier.
    /// Models outside the scope of `access` are left out.
    public func fetch(_ request: SyncFetchRequest, access: SyncAccess = .unrestricted) throws -> [SyncModelState] {
        try checkSession(request.session, replica: nil, request: "fetch")
        let check = try ScopeCheck(scope, access: access, schema: store.schema)
        return try retryingDerivedRecords { try states(of: request.globalIDs, check: check) }
    }

    /// The states of these models: deleted ones without values; unknown ones left out.
    private func states(of globalIDs: [String], check: ScopeCheck = .everything) throws -> [SyncModelState] {
        var index = try RecordIndex.load(globalIDs: globalIDs, store: store)
        let current = try index.models(store: store)
        var rows: [DefaultSnapshot] = []
        var deleted: [SyncModelState] = []
        for global in Set(globalIDs) {
            guard let record = index.record(of: global) else { continue }
            if let id = index.model(of: global), let row = current[id] {
                guard check.allows(row) else { continue }
                rows.append(row)
            } else {
                deleted.append(SyncModelState(globalID: global, entity: record.entityName, values: nil))
            }
        }
        let found = try currentStates(rows, index: &index)
        try saveDerivedRecords(index)
        return found + deleted
    }

    /// Models' states with global identifiers for them and every model they refer to.
    private func currentStates(_ rows: [DefaultSnapshot], index: inout RecordIndex) throws -> [SyncModelState] {
        let ids =
            rows.map(\.persistentIdentifier)
            + rows.flatMap { SyncValues.localReferences(of: $0, carrying: store.owning[$0.entity.name] ?? []) }
        let globals = try index.globalIDs(for: ids, store: store, mint: SyncCoding.derivedGlobalID)
        // A row without a global identifier was deleted since it was read (see RecordIndex.globalIDs).
        return rows.compactMap { row in
            guard let global = globals[row.persistentIdentifier] else { return nil }
            return SyncModelState(
                globalID: global, entity: row.entity.name,
                values: SyncValues.values(of: row, carrying: store.owning[row.entity.name] ?? []) { globals[$0] },
                stamps: index.record(of: global)?.stamps ?? [:])
        }
    }

    /// Saves the records a read derived (a concurrent read or push that recorded the same ones
    /// first fails this save, and the read runs again: see ``retryingDerivedRecords(_:)``).
    private func saveDerivedRecords(_ index: RecordIndex) throws {
        guard !index.derivedRecordInserts.isEmpty || !index.recordUpdates.isEmpty else { return }
        do {
            try store.save(inserted: index.derivedRecordInserts, updated: index.recordUpdates, deleted: [])
        } catch {
            throw SyncError.store(error, while: "recording global identifiers in '\(store.store.identifier)'")
        }
    }
}
