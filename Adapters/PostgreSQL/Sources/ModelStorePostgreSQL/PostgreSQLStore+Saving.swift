import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

extension PostgreSQLStore {
    /// Saves in one transaction: deletes, then updates, then inserts, then the history row (see
    /// ``HistoryLog``); a save that throws changes nothing and records no history.
    ///
    /// Throws ``DataStoreError/Code/conflict`` when a row changed since the context read it (see
    /// the type's discussion) or, for a model the request has
    /// ``DataStoreSaveChangesRequest/expectedValues`` for, when the row's stored attributes differ from
    /// them: the statement that updates a row returns, or a read under the row's lock gives, the
    /// values it replaces, and those are compared before the commit. A row at another version than
    /// the one remembered is then compared instead of refused, so a save conflicts exactly when the
    /// context's own check would have (the context skips that read, see ``checksExpectedValues``). ``DataStoreError/Code/uniqueConstraintViolation`` when a unique index
    /// refused a value, ``DataStoreError/Code/notFound`` for a change to a model the store does not
    /// have, and ``DataStoreError/Code/io`` when the connection is lost (the server rolls the
    /// transaction back; the next call reconnects). References to models that no longer exist are
    /// cleared, and the rewritten snapshots returned for the context to re-register.
    public func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        try database.wait { try await self.save(request) }
    }

    /// Saves without blocking a thread; as ``save(_:)-(DataStoreSaveChangesRequest<DefaultSnapshot>)``.
    public func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) async throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        let read = versionsRead(
            of: request.updated.map(\.persistentIdentifier) + request.deleted.map(\.persistentIdentifier),
            in: request.editingState.id)
        let saved: (DataStoreSaveChangesResult<DefaultSnapshot>, [PersistentIdentifier: Int64])
        do {
            // One statement when it can be, else (also when that statement stored nothing) the transaction.
            if let one = try await updateInOneStatement(request, versions: read) {
                saved = one
                commitGroups.count(saves: 1)
            } else if groupsCommits {
                saved = try await writeInGroup(request, versions: read)
            } else {
                saved = try await write(request, versions: read)
            }
        } catch let error as DataStoreError where error.code == .conflict {
            markStale(request)
            throw error
        }
        remember(saved.1, of: request)
        return saved.0
    }

    /// After a conflict: until the context reads these rows again, every save of them is a conflict too.
    func markStale(_ request: DataStoreSaveChangesRequest<DefaultSnapshot>) {
        let touched = (request.updated + request.deleted).map { ($0.persistentIdentifier, Self.staleVersion) }
        remember(touched, for: request.editingState, replacing: true)
    }

    /// After a save: the versions it wrote are the ones the context read; deleted rows are forgotten.
    func remember(_ written: [PersistentIdentifier: Int64], of request: DataStoreSaveChangesRequest<DefaultSnapshot>) {
        withBook(of: request.editingState.id) { book in
            for snapshot in request.deleted { book[snapshot.persistentIdentifier] = nil }
            book.merge(written) { $1 }
        }
    }

    /// The version remembered for a row after a conflict: no row has it, so a save of the row fails
    /// until a fetch reads it again.
    static var staleVersion: Int64 { -1 }

    /// Saves `request` in a transaction of its own.
    func write(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, versions read: [PersistentIdentifier: Int64]
    ) async throws -> (DataStoreSaveChangesResult<DefaultSnapshot>, [PersistentIdentifier: Int64]) {
        let saved = try await withWriter("saving") { writer in
            try await self.apply(request, versions: read, with: writer, committing: true)
        }
        commitGroups.count(saves: 1)
        return saved
    }

    /// Writes a save in the writer's transaction: the rows, the cleared references and the history
    /// row. Returns the result and the versions written.
    ///
    /// With `committing`, the history row is written by the namespace's function together with the
    /// transaction's `COMMIT` when the namespace has the function
    /// (``HistoryLog/recordByFunction(_:author:limit:committing:on:unavailable:)``), which ends the
    /// transaction; otherwise, and always without `committing`, the transaction is left open.
    /// With `grouped` (a save of a group, see ``groupsCommits``), the function records the history
    /// row without the `COMMIT`.
    func apply(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, versions read: [PersistentIdentifier: Int64],
        with writer: RowWriter, committing: Bool = false, grouped: Bool = false
    ) async throws -> (DataStoreSaveChangesResult<DefaultSnapshot>, [PersistentIdentifier: Int64]) {
        let minted = try await writer.mint(request.inserted, updated: request.updated)
        let deleted = request.deleted.map(\.persistentIdentifier)
        // The rows as they were, locked until the commit: what an update changed. The UPDATE returns
        // them itself where it can, and a delete's tombstone comes back from the DELETE.
        let returned = writer.previousValuesReturned(by: minted.updated, versions: read)
        var before = try await writer.lockedSnapshots(
            of: minted.updated.map(\.persistentIdentifier).filter { !returned.contains($0) })
        let deletions = try await writer.delete(deleted, versions: read)
        let expected = request.expectedValues
        let recording = oneChangeRecording(request, minted.updated, returned)
        let updated = try await writer.update(
            minted.updated, versions: read, returningPrevious: returned,
            comparable: { expected[$0] != nil }, recording: recording, stored: before)
        // A row read and locked first keeps those values: the update may have cleared its unique
        // values on the way (`vacateUniqueValues`) before it read the row again.
        before.merge(updated.previous) { first, _ in first }
        // The rows as they were when each was locked (read first, or returned by its UPDATE): the
        // context's conflict check, under the lock (see `checksExpectedValues`).
        try request.checkExpectedValues { before[$0] }
        var written = updated.versions
        let insertedVersions = try await writer.insert(minted.inserted)
        if written.isEmpty {
            written = insertedVersions
        } else {
            written.merge(insertedVersions) { $1 }
        }
        let repaired = try await writer.clearDanglingReferences(
            changed: minted.updated + minted.inserted, deleted: deleted)
        for (id, row) in repaired { written[id] = row.version }
        var changes = minted.inserted.map { StoreHistoryRecord.Change(.insert, $0.persistentIdentifier) }
        changes += minted.updated.compactMap { snapshot in
            StoreHistoryRecord.Change.update(from: before[snapshot.persistentIdentifier], to: snapshot)
        }
        changes += deletions
        let number: Int64?
        if let recorded = updated.recorded, let totals = recorded.totals, let recording {
            // Recorded from the values the context read, which the check above found the row held.
            guard changes == [recording.change] else { throw recordedAnotherChange() }
            try await self.history.trim(
                total: totals.total, before: totals.before, limit: configuration.historyLimit, on: writer.session)
            number = recorded.number
        } else if committing || grouped, updated.recorded == nil, hasRecordFunction.withLock({ $0 }) {
            // Last: the counter's lock is held from this call to the commit (which it carries when
            // `committing`; a group's commits after its last save).
            let flag = hasRecordFunction
            number = try await self.history.recordByFunction(
                changes, author: request.editingState.author, limit: configuration.historyLimit,
                committing: committing, on: writer.session, unavailable: { flag.withLock { $0 = false } })
        } else {
            number = try await self.history.record(
                changes, author: request.editingState.author, limit: configuration.historyLimit,
                number: updated.recorded?.number, on: writer.session)
        }
        let result = DataStoreSaveChangesResult(
            for: writer.storeIdentifier, remappedIdentifiers: minted.remap,
            snapshotsToReregister: repaired.mapValues(\.snapshot),
            historyToken: number.map {
                DefaultHistoryToken(storeIdentifier: writer.storeIdentifier, transactionNumber: $0)
            })
        return (result, written)
    }

    /// The history change a save's one write records itself, when that write is an `UPDATE` that
    /// can (see ``HistoryLog/recordingOneChange(after:parameters:)``): it updates one model, of a
    /// table no foreign key reaches, at the version the context read (its previous values come back
    /// from the `UPDATE`, and are checked before the commit), inserts and deletes nothing, the
    /// namespace has no deferred constraints to check first, and the update changes a value of the
    /// model as the context read it (so the save records history). `nil` otherwise.
    func oneChangeRecording(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, _ updated: [DefaultSnapshot],
        _ returned: Set<PersistentIdentifier>
    ) -> OneChangeRecording? {
        guard request.inserted.isEmpty, request.deleted.isEmpty, updated.count == 1, let snapshot = updated.first,
            returned.contains(snapshot.persistentIdentifier), !self.history.hasDeferredConstraints,
            let expected = request.expectedValues[snapshot.persistentIdentifier]
        else { return nil }
        let read = DefaultSnapshot(
            persistentIdentifier: snapshot.persistentIdentifier, entity: snapshot.entity, values: expected)
        return StoreHistoryRecord.Change.update(from: read, to: snapshot).map {
            OneChangeRecording(history: self.history, change: $0, author: request.editingState.author)
        }
    }

    /// The error of a save whose one change, recorded with its `UPDATE`, is not the change the
    /// row's previous values give: they passed the check against the values the change was
    /// computed from, so this does not happen; if it did, the save fails and stores nothing.
    func recordedAnotherChange() -> DataStoreError {
        DataStoreError(
            .corrupted,
            "a save to the PostgreSQL store '\(configuration.redactedURL)' recorded a history change that differs from "
                + "what its UPDATE replaced; nothing was saved",
            remedy: "Report this as a bug of ModelStorePostgreSQL, and save again")
    }

    /// Deletes models by identifier, one statement per entity table (without naming the rows when
    /// they are every row of the table, see ``RowWriter/deleteRows(_:keys:)``); unknown identifiers
    /// are ignored.
    public func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        var byEntity: [String: [Int64]] = [:]
        for id in request.identifiers {
            if let key = localKey(id) { byEntity[id.entityName, default: []].append(key) }
        }
        let keysByEntity = byEntity
        let storeIdentifier = identifier
        let (history, limit, author) = (self.history, configuration.historyLimit, request.editingState.author)
        try database.wait {
            try await self.withWriter("deleting a batch") { writer in
                var requested: [PersistentIdentifier] = []
                var tombstones: [StoreHistoryRecord.Change] = []
                for (name, keys) in keysByEntity.sorted(by: { $0.key < $1.key }) {
                    let layout = try writer.layout(name)
                    var binds = PostgresBindings()
                    binds.append(keys)
                    for join in layout.joinTables {
                        try await writer.session.execute("DELETE FROM \(join.table) WHERE owner = ANY($1)", binds)
                    }
                    tombstones += try await writer.deleteRows(layout, keys: keys).map(\.change)
                    requested += keys.map { .identifier(for: storeIdentifier, entityName: name, primaryKey: $0) }
                }
                _ = try await writer.clearDanglingReferences(changed: [], deleted: requested)
                _ = try await history.record(tombstones, author: author, limit: limit, on: writer.session)
            }
        }
    }

    /// Deletes every model of `T`'s entity in one transaction and returns their identifiers:
    /// `DELETE FROM table RETURNING` the keys (and the `.preserveValueOnDeletion` attributes for
    /// the tombstones), its join tables emptied, references to the rows from other tables cleared
    /// (as a batch delete clears them), and one history transaction, as a batch delete of the same
    /// models records it. Nothing is read first, and no key is sent to the server. When no other
    /// table refers to the entity and it keeps no tombstones, the table is locked against other
    /// writers first, the rows are deleted with a plain `DELETE`, the history row of their keys'
    /// runs is written and the history trimmed, and the keys come back as runs of consecutive keys:
    /// a model another process inserts meanwhile is either deleted and returned, or stays. That is
    /// one call of the namespace's function, one statement outside a transaction
    /// (``deleteEveryRowInOneCall(of:author:limit:)``), or, when the namespace has no function, the
    /// same steps as a transaction of separate statements
    /// (``HistoryLog/deleteEveryRow(of:emptying:author:limit:on:)``).
    public func deleteEveryModel<T: PersistentModel>(
        _ request: DataStoreDeleteEveryModelRequest<T>
    ) throws -> PersistentIdentifiers {
        let entityName = Schema.entityName(for: T.self)
        guard let layout = layouts[entityName] else { return [] }
        let storeIdentifier = identifier
        let (history, limit, author) = (self.history, configuration.historyLimit, request.editingState.author)
        // Whether a to-one column or a join table of any entity may name the deleted rows.
        let referred = layouts.values.contains { other in
            other.columns.contains { $0.destination == entityName }
                || other.joinTables.contains { $0.destination == entityName }
        }
        let tombstones = layout.entity.attributes.contains { $0.options.contains(.preserveValueOnDeletion) }
        return try database.wait {
            if !referred && !tombstones,
                let runs = try await self.deleteEveryRowInOneCall(of: layout, author: author, limit: limit)
            {
                var ids = PersistentIdentifiers()
                for run in runs { ids.append(storeIdentifier: storeIdentifier, entityName: entityName, keys: run) }
                return ids
            }
            return try await self.withWriter("deleting every '\(entityName)'") { writer in
                if !referred && !tombstones {
                    let runs = try await history.deleteEveryRow(
                        of: layout, emptying: layout.joinTables.map(\.table), author: author, limit: limit,
                        on: writer.session)
                    var ids = PersistentIdentifiers()
                    for run in runs { ids.append(storeIdentifier: storeIdentifier, entityName: entityName, keys: run) }
                    return ids
                }
                for join in layout.joinTables { try await writer.session.execute("DELETE FROM \(join.table)") }
                let deleted = try await writer.deleteReturningVersions(layout, where: "true", PostgresBindings())
                let ids = deleted.map {
                    PersistentIdentifier.identifier(for: storeIdentifier, entityName: entityName, primaryKey: $0.key)
                }
                if referred { _ = try await writer.clearDanglingReferences(changed: [], deleted: ids) }
                _ = try await history.record(deleted.map(\.change), author: author, limit: limit, on: writer.session)
                return PersistentIdentifiers(ids)
            }
        }
    }

    /// Sets values on models by identifier: one `UPDATE … WHERE _pk = ANY(…)` per entity, atomically,
    /// with uniqueness enforced by the unique indexes.
    public func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        let entityName = request.identifiers.first?.entityName ?? Schema.entityName(for: T.self)
        guard let layout = layouts[entityName], !request.values.isEmpty else { return }
        let keys = request.identifiers.compactMap { $0.entityName == entityName ? localKey($0) : nil }
        guard !keys.isEmpty else { return }
        let values = request.values
        let storeIdentifier = identifier
        let (history, limit, author) = (self.history, configuration.historyLimit, request.editingState.author)
        try database.wait {
            try await self.withWriter("updating a batch") { writer in
                let ids = keys.map {
                    PersistentIdentifier.identifier(for: storeIdentifier, entityName: entityName, primaryKey: $0)
                }
                let before = try await writer.lockedSnapshots(of: ids)
                var binds = PostgresBindings()
                binds.append(keys)
                var assignments = ["\(TableLayout.version) = \(TableLayout.version) + 1"]
                let probe = DefaultSnapshot(
                    persistentIdentifier: .identifier(
                        for: storeIdentifier, entityName: entityName, primaryKey: keys[0]),
                    entity: layout.entity, values: layout.entity.properties.map { _ in .null })
                for slot in values.keys.sorted() {
                    guard let column = layout.columnsBySlot[slot] else { continue }
                    var snapshot = probe
                    snapshot.values[slot] = values[slot]!
                    try writer.bind(snapshot, column, layout: layout, to: &binds)
                    assignments.append(
                        "\(column.quoted) = \(column.type?.placeholder(binds.count) ?? "$\(binds.count)")")
                }
                do {
                    try await writer.session.execute(
                        "UPDATE \(layout.table) SET " + assignments.joined(separator: ", ")
                            + " WHERE \(TableLayout.key) = ANY($1)", binds)
                } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
                    let names = error.serverInfo?[.constraintName].flatMap(layout.constraint(named:)) ?? []
                    throw DataStoreError(
                        .uniqueConstraintViolation,
                        "the batch update would give two '\(entityName)' models the same "
                            + names.map { "'\($0)'" }.joined(separator: ", "),
                        remedy: "Update fewer models, or set a value that differs per model", entityName: entityName,
                        propertyNames: names, underlyingError: error)
                }
                let toMany = layout.joinTables.filter { values[$0.slot] != nil }
                var changed: [DefaultSnapshot] = []
                if !toMany.isEmpty || values.keys.contains(where: { layout.columnsBySlot[$0]?.type == nil }) {
                    var rows = try await writer.reader.rows(layout, keys: keys).values.map(\.snapshot)
                    if !toMany.isEmpty {
                        for index in rows.indices { for (slot, value) in values { rows[index].values[slot] = value } }
                        _ = try await writer.update(rows, versions: [:])
                    }
                    changed = rows
                }
                _ = try await writer.clearDanglingReferences(changed: changed, deleted: [])
                let after = try await writer.reader.rows(layout, keys: keys)
                _ = try await history.record(
                    ids.compactMap { id in
                        after[id.primaryKey.intValue ?? 0].flatMap {
                            StoreHistoryRecord.Change.update(from: before[id], to: $0.snapshot)
                        }
                    }, author: author, limit: limit, on: writer.session)
            }
        }
    }

    /// Inserts snapshots in one transaction and returns their permanent identifiers in order.
    ///
    /// The batch is read whole before the transaction starts: the transaction runs on the event
    /// loop, which must not wait on the caller's rows.
    public func insert(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> PersistentIdentifiers {
        let (history, limit, author) = (self.history, configuration.historyLimit, request.editingState.author)
        let snapshots = try request.allSnapshots()
        return try database.wait {
            try await self.withWriter("inserting a batch") { writer in
                let minted = try await writer.mint(snapshots, updated: [])
                _ = try await writer.insert(minted.inserted)
                _ = try await writer.clearDanglingReferences(changed: minted.inserted, deleted: [])
                _ = try await history.record(
                    minted.inserted.map { StoreHistoryRecord.Change(.insert, $0.persistentIdentifier) },
                    author: author, limit: limit, on: writer.session)
                return PersistentIdentifiers(
                    snapshots.lazy.map { minted.remap[$0.persistentIdentifier] ?? $0.persistentIdentifier })
            }
        }
    }

    /// Runs `body` with a writer in one transaction (retried after a serialization failure).
    func withWriter<Value: Sendable>(
        _ doing: String, _ body: @escaping @Sendable (RowWriter) async throws -> Value
    ) async throws -> Value {
        // The attempts of this transaction share whether a batch insert was refused (see `InsertRefusals`).
        let refusals = InsertRefusals()
        return try await database.transaction(doing) { session in
            var writer = self.writer(on: session)
            writer.insertRefusals = refusals
            return try await body(writer)
        }
    }

    /// A writer of the store's tables on a session.
    func writer(on session: Session) -> RowWriter {
        RowWriter(
            session: session, storeIdentifier: identifier, layouts: layouts, keySequence: opener.keySequence,
            url: database.url)
    }
}
