import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreFileIO

extension SQLiteStore {
    /// Saves in one transaction: deletes, then updates, then inserts; a save that throws changes nothing.
    ///
    /// Throws ``DataStoreError/uniqueConstraintViolation`` (a unique index refused a value),
    /// ``DataStoreError/notFound`` (an update or delete of a model the store doesn't have, or a
    /// relationship to a new model the save does not insert), ``DataStoreError/conflict`` (an insert
    /// under an identifier the store already has) and ``DataStoreError/locked`` (another writer
    /// held the database past the busy timeout). References to models that no longer exist are
    /// cleared, and the rewritten snapshots returned for the context to re-register.
    public func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        if request.makesInsertedOnDemand, request.updated.isEmpty, request.deleted.isEmpty {
            // New models only, whose snapshots the context makes on demand: written a chunk at a
            // time by the batch insert, so they never all exist at once.
            let (ids, number) = try withWriter { writer in try insertRecording(request.insertedBatch(), with: &writer) }
            return DataStoreSaveChangesResult(
                for: identifier, inserted: request, identifiers: ids,
                historyToken: number.map { DefaultHistoryToken(storeIdentifier: identifier, transactionNumber: $0) })
        }
        return try withWriter { writer in try apply(request, with: &writer) }
    }

    /// The steps of a save, inside a write transaction: deletes, then updates, then inserts, then
    /// references to models that are gone cleared.
    func apply(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, with writer: inout RowWriter
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        let minted = try writer.mint(request.inserted, updated: request.updated)
        let deleted = request.deleted.map(\.persistentIdentifier)
        // The rows as they were, for history: what an update changed, and a delete's tombstone.
        let (before, compared) = try storedSnapshots(
            of: minted.updated.map(\.persistentIdentifier) + deleted, expecting: request.expectedValues, with: writer)
        // Nothing changed since the context checked for conflicts: the rows were read in this
        // write transaction. External values are read here as file names, so they are not compared.
        if !compared {
            try request.checkExpectedValues(
                skipping: { $0.options.contains(.externalStorage) }, stored: { before[$0] })
        }
        try writer.delete(deleted)
        try writer.write(minted.updated, update: true, stored: before)
        try writer.write(minted.inserted, update: false)
        let repaired = try writer.clearDanglingReferences(changed: minted.updated + minted.inserted, deleted: deleted)
        var changes = minted.inserted.map { StoreHistoryRecord.Change(.insert, $0.persistentIdentifier) }
        changes += minted.updated.compactMap { snapshot in
            StoreHistoryRecord.Change.update(from: before[snapshot.persistentIdentifier], to: snapshot)
        }
        changes += deleted.compactMap { id in before[id].map(StoreHistoryRecord.Change.deletion(of:)) }
        let number = try HistoryTable.record(
            changes, author: request.editingState.author, limit: configuration.historyLimit, on: writer.connection)
        return DataStoreSaveChangesResult(
            for: identifier, remappedIdentifiers: minted.remap, snapshotsToReregister: repaired,
            historyToken: number.map { DefaultHistoryToken(storeIdentifier: identifier, transactionNumber: $0) })
    }

    /// The stored rows of these models (those the store has), read in the open transaction, and
    /// whether every one with expected values was found identical to them (so there is no conflict
    /// left to check).
    ///
    /// A row whose entity ``EntityLayout/comparesRowsInPlace`` is compared with its expected values
    /// where it is stored (``RowReader/holds(_:layout:exactly:)``), and when identical its snapshot is
    /// made of those values instead of read; any other row is read whole.
    func storedSnapshots(
        of identifiers: [PersistentIdentifier], expecting expected: [PersistentIdentifier: [StoreValue]],
        with writer: RowWriter
    ) throws -> (snapshots: [PersistentIdentifier: DefaultSnapshot], compared: Bool) {
        guard !expected.isEmpty else { return (try storedSnapshots(of: identifiers, with: writer), false) }
        let reader = writer.reader
        var result: [PersistentIdentifier: DefaultSnapshot] = [:]
        var compared = true
        for id in identifiers {
            guard let key = localKey(id), let layout = layouts[id.entityName] else { continue }
            if layout.comparesRowsInPlace, let values = expected[id] {
                switch try reader.holds(key, layout: layout, exactly: values) {
                case nil: continue
                case true?:
                    result[id] = DefaultSnapshot(persistentIdentifier: id, entity: layout.entity, values: values)
                    continue
                case false?: break
                }
            }
            compared = compared && expected[id] == nil
            if let snapshot = try reader.snapshot(key, layout: layout) { result[id] = snapshot }
        }
        return (result, compared)
    }

    /// The stored rows of these models (those the store has), read in the open transaction.
    func storedSnapshots(
        of identifiers: [PersistentIdentifier], with writer: RowWriter
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        let reader = writer.reader
        var result: [PersistentIdentifier: DefaultSnapshot] = [:]
        for id in identifiers {
            guard let key = localKey(id), let layout = layouts[id.entityName] else { continue }
            if let snapshot = try reader.snapshot(key, layout: layout) { result[id] = snapshot }
        }
        return result
    }

    /// Deletes models by identifier in one statement per entity table; unknown identifiers are ignored.
    ///
    /// History records each deleted model. Rows are read whole only for an entity with
    /// `.preserveValueOnDeletion` attributes (their tombstones); for the others the keys that exist
    /// are enough.
    public func delete<T: PersistentModel>(_ request: DataStoreBatchDeleteRequest<T>) throws {
        try withWriter { writer in
            // Identifiers come in runs of one entity: the keys are grouped without hashing each name.
            var byEntity: [String: [Int64]] = [:]
            var run: (name: String, keys: [Int64])?
            for id in request.identifiers {
                guard let key = localKey(id) else { continue }
                if run?.name != id.entityName {
                    if let run { byEntity[run.name, default: []] += run.keys }
                    run = (id.entityName, [])
                }
                run!.keys.append(key)
            }
            if let run { byEntity[run.name, default: []] += run.keys }
            try deleteRows(
                request.identifiers, byEntity: byEntity, everyRowOf: [:], author: request.editingState.author,
                with: &writer)
        }
    }

    /// Deletes every stored model of `T`'s entity in one write transaction, and returns their
    /// identifiers (in no particular order).
    ///
    /// The keys are read inside the transaction, so nothing a concurrent writer adds is missed or
    /// deleted unreported, and the table is emptied with `DELETE` without `WHERE`, which lets SQLite
    /// drop its pages at once. History records each model as ``delete(_:)`` does (tombstones for
    /// `.preserveValueOnDeletion` attributes); external files are released, and references from
    /// other entities cleared. Throws ``DataStoreError/notFound`` for an entity the store lacks.
    public func deleteEveryModel<T: PersistentModel>(
        _ request: DataStoreDeleteEveryModelRequest<T>
    ) throws -> PersistentIdentifiers {
        let entityName = Schema.entityName(for: T.self)
        return try withWriter { writer in
            let keys = try writer.keys(of: try writer.layout(entityName))
            guard keys.count > 0 else { return [] }
            let identifiers =
                keys.range.map { PersistentIdentifiers(storeIdentifier: identifier, entityName: entityName, keys: $0) }
                ?? PersistentIdentifiers(storeIdentifier: identifier, entityName: entityName, keys: keys.list)
            // The keys themselves are needed only to clear references to the rows (a run of keys is
            // written out only then).
            try deleteRows(
                identifiers, byEntity: [entityName: writer.isReferenced(entityName) ? keys.array : []],
                everyRowOf: [entityName: keys.count], author: request.editingState.author, with: &writer)
            return identifiers
        }
    }

    /// The steps of a batch delete inside its write transaction: history, external files, the rows
    /// and their join rows, then references to them cleared.
    ///
    /// `byEntity` holds the keys of `identifiers` by entity name. `everyRowOf` holds the row counts
    /// of the entities whose keys the caller read in this transaction, so they are known to be every
    /// row the table has; their keys in `byEntity` are read only to clear references to them, and
    /// may be left empty for an entity nothing refers to.
    private func deleteRows(
        _ identifiers: some Collection<PersistentIdentifier>, byEntity: [String: [Int64]], everyRowOf: [String: Int],
        author: String?, with writer: inout RowWriter
    ) throws {
        var tombstoned: [PersistentIdentifier] = []
        var found: [String: RowWriter.ExistingKeys] = [:]
        for (name, keys) in byEntity {
            let layout = try writer.layout(name)
            if layout.entity.attributes.contains(where: { $0.options.contains(.preserveValueOnDeletion) }) {
                tombstoned += identifiers.filter { $0.entityName == name }
            } else if let count = everyRowOf[name] {
                found[name] = RowWriter.ExistingKeys(count: count, isEveryRow: true, missing: [])
            } else {
                found[name] = try writer.existingKeys(keys, layout: layout)
            }
        }
        let before = try storedSnapshots(of: tombstoned, with: writer)
        if tombstoned.isEmpty, !byEntity.isEmpty, byEntity.keys.allSatisfy({ everyRowOf[$0] != nil }),
            let identifiers = identifiers as? PersistentIdentifiers
        {
            // Every row of the entity, deleted without tombstones (a delete of every model): the
            // identifiers are every change, written from their runs of keys.
            _ = try HistoryTable.record(
                count: identifiers.count, of: .delete, identifiers, author: author, limit: configuration.historyLimit,
                on: writer.connection)
        } else {
            _ = try HistoryTable.record(
                count: before.count + found.values.reduce(0) { $0 + $1.count }, author: author,
                limit: configuration.historyLimit, on: writer.connection
            ) {
                identifiers.compactMap { id in
                    if let snapshot = before[id] { return .deletion(of: snapshot) }
                    guard let key = localKey(id), found[id.entityName]?.contains(key) == true else { return nil }
                    return StoreHistoryRecord.Change(.delete, id)
                }
            }
        }
        for (name, keys) in byEntity {
            let layout = try writer.layout(name)
            // Every row named (a delete without a predicate): `DELETE` without `WHERE` lets SQLite
            // drop the table's pages at once instead of unindexing row by row, and needs no key list.
            let everyRow =
                try everyRowOf[name] != nil
                || found[name]?.isEveryRow
                    ?? writer.countsEveryRow(RowWriter.jsonArray(keys), layout: layout)
            let list = everyRow ? "" : RowWriter.jsonArray(keys)
            let condition = everyRow ? "" : " WHERE \(EntityLayout.primaryKey) IN (SELECT value FROM json_each(?))"
            try writer.releaseExternalFiles(of: layout, where: condition, everyRow ? [] : [.text(list)])
            let statement = try writer.connection.statement("DELETE FROM \(layout.table)" + condition)
            if !everyRow { statement.bind(1, list) }
            try statement.run()
            for join in layout.joinTables {
                let rows = try writer.connection.statement(
                    "DELETE FROM \(join.table)" + (everyRow ? "" : " WHERE owner IN (SELECT value FROM json_each(?))"))
                if !everyRow { rows.bind(1, list) }
                try rows.run()
            }
        }
        _ = try writer.clearDanglingReferences(changed: [], deletedKeys: byEntity)
    }

    /// Sets values on models by identifier: one `UPDATE … WHERE _pk IN (…)` per entity, atomically,
    /// with uniqueness enforced by the unique indexes.
    public func update<T: PersistentModel>(_ request: DataStoreBatchUpdateRequest<T>) throws {
        let entityName = request.identifiers.first?.entityName ?? Schema.entityName(for: T.self)
        guard let layout = layouts[entityName], !request.values.isEmpty else { return }
        try withWriter { writer in
            let keys = request.identifiers.compactMap { $0.entityName == entityName ? localKey($0) : nil }
            guard !keys.isEmpty else { return }
            let ids = request.identifiers.filter { $0.entityName == entityName && localKey($0) != nil }
            let before = try storedSnapshots(of: ids, with: writer)
            let list = RowWriter.jsonArray(keys)
            let slots = request.values.keys.sorted()
            var assignments: [String] = []
            var parameters: [SQLValue] = []
            let probe = DefaultSnapshot(
                persistentIdentifier: .identifier(for: identifier, entityName: entityName, primaryKey: keys[0]),
                entity: layout.entity,
                values: layout.entity.properties.map { _ in .null })
            // External values are written per model below: each row gets a file of its own.
            for slot in slots {
                guard let column = layout.columnsBySlot[slot], !column.isExternal else { continue }
                var snapshot = probe
                snapshot.values[slot] = request.values[slot]!
                assignments.append("\(quote(column.name)) = ?")
                parameters.append(try writer.value(of: snapshot, column, layout: layout))
            }
            if !assignments.isEmpty {
                let statement = try writer.connection.prepare(
                    "UPDATE \(layout.table) SET " + assignments.joined(separator: ", ")
                        + " WHERE \(EntityLayout.primaryKey) IN (SELECT value FROM json_each(?))")
                statement.bind(parameters + [.text(list)])
                do {
                    try statement.run()
                } catch let error as DataStoreError where error.code == .uniqueConstraintViolation {
                    let names = layout.constraint(inMessage: error.message) ?? []
                    throw DataStoreError(
                        .uniqueConstraintViolation,
                        "the batch update would give two '\(entityName)' models the same "
                            + names.map { "'\($0)'" }.joined(separator: ", "),
                        remedy: "Update fewer models, or set a value that differs per model", entityName: entityName,
                        propertyNames: names, underlyingError: error)
                }
            }
            // To-many values (rare in batch updates) rewrite each model's join rows, and external
            // values each model's file.
            let toMany = layout.joinTables.filter { request.values[$0.slot] != nil }
            let external = layout.externalColumns.contains { request.values[$0.slot] != nil }
            if !toMany.isEmpty || external {
                var rewritten: [DefaultSnapshot] = []
                for key in keys {
                    guard var snapshot = try writer.reader.snapshot(key, layout: layout) else { continue }
                    for (slot, value) in request.values { snapshot.values[slot] = value }
                    rewritten.append(snapshot)
                }
                try writer.write(rewritten, update: true)
            }
            // New references to models that are gone are cleared, as in a save.
            if slots.contains(where: { layout.columnsBySlot[$0]?.kind == nil }) || !toMany.isEmpty {
                let changed = try keys.compactMap { try writer.reader.snapshot($0, layout: layout) }
                _ = try writer.clearDanglingReferences(changed: changed, deleted: [])
            }
            let after = try storedSnapshots(of: ids, with: writer)
            _ = try HistoryTable.record(
                ids.compactMap { id in after[id].flatMap { StoreHistoryRecord.Change.update(from: before[id], to: $0) }
                },
                author: request.editingState.author, limit: configuration.historyLimit, on: writer.connection)
        }
    }

    /// Inserts snapshots in one transaction through a cached statement, and returns their
    /// permanent identifiers in order.
    ///
    /// The snapshots are written a chunk at a time as the request yields them; a failure rolls the
    /// transaction back.
    public func insert(_ request: DataStoreBatchInsertRequest<DefaultSnapshot>) throws -> PersistentIdentifiers {
        try withWriter { writer in try insertRecording(request, with: &writer).ids }
    }

    /// Writes a batch a chunk at a time in the open write transaction and records it in the history;
    /// returns the permanent identifiers in order and the transaction's number.
    private func insertRecording(
        _ request: DataStoreBatchInsertRequest<DefaultSnapshot>, with writer: inout RowWriter
    ) throws -> (ids: PersistentIdentifiers, number: Int64?) {
        var ids = PersistentIdentifiers()
        func insert(_ chunk: [DefaultSnapshot], with writer: inout RowWriter) throws {
            let minted = try writer.mint(chunk, updated: [])
            try writer.write(minted.inserted, update: false)
            _ = try writer.clearDanglingReferences(changed: minted.inserted, deleted: [])
            for snapshot in chunk {
                ids.append(minted.remap[snapshot.persistentIdentifier] ?? snapshot.persistentIdentifier)
            }
        }
        // Chunks the context made from values are written from the values, without a snapshot per row.
        let tookRows = try request.forEachRowChunk { rows in
            if let keys = try writer.insertNew(rows) {
                ids.append(storeIdentifier: identifier, entityName: rows.entity.name, keys: keys)
            } else {
                try insert(rows.snapshots(), with: &writer)
            }
        }
        if !tookRows { try request.forEachChunk { try insert($0, with: &writer) } }
        let number = try HistoryTable.record(
            count: ids.count, of: .insert, ids, author: request.editingState.author,
            limit: configuration.historyLimit, on: writer.connection)
        return (ids, number)
    }

    /// A writer of this store's rows on `connection`.
    func writer(on connection: SQLiteConnection) -> RowWriter {
        RowWriter(connection: connection, storeIdentifier: identifier, layouts: layouts)
    }

    /// Throws unless the database's path still names the file this store opened: a file replaced
    /// under the open store (renamed over, as editors, sync tools and restores do) or removed would
    /// take the transaction into a file that no open reads again.
    func checkFileIsStillTheOneOpened() throws {
        guard let openedFile else { return }
        let named = try FileIO.identity(of: databasePath)
        guard named?.device != openedFile.device || named?.inode != openedFile.inode else { return }
        throw DataStoreError(
            .conflict,
            "the SQLite store '\(databasePath)' was replaced or removed while the store was open, so "
                + "the transaction was not written",
            remedy: "Close the store and open it again; it then reads the file as it is now")
    }

    /// Runs `body` with a writer in one write transaction, and saves the key counter; then
    /// removes the external files the transaction wrote (if it failed) or released (if it committed).
    func withWriter<Result>(_ body: (inout RowWriter) throws -> Result) throws -> Result {
        guard configuration.allowsSave || configuration.url == nil else {
            throw DataStoreError.readOnly(store: databasePath, refusing: "a change")
        }
        return try database.withLock { connection in
            var writer = writer(on: connection)
            let result: Result
            do {
                result = try connection.writeTransaction {
                    try checkFileIsStillTheOneOpened()
                    let result = try body(&writer)
                    try writer.storeNextKey()
                    try writer.flushExternalFiles()
                    return result
                }
            } catch {
                writer.discardWrittenFiles()
                throw error
            }
            removeReleasedFiles(of: writer)
            return result
        }
    }

    /// Removes the external files a committed transaction no longer names, once the commit is on
    /// disk: below ``SQLiteStoreConfiguration/Durability/everySave`` the write-ahead log is synced
    /// first, since a power loss that rolled the commit back would otherwise leave rows naming
    /// removed files. If the log cannot be synced the files stay (`compact()` removes them).
    func removeReleasedFiles(of writer: RowWriter) {
        guard let folder = writer.folder, !writer.files.released.isEmpty else { return }
        if configuration.durability != .everySave {
            let log = databasePath + "-wal"
            if FileIO.exists(log), (try? FileIO.sync(log)) == nil { return }
        }
        folder.remove(writer.files.released)
        writer.files.released = []
    }
}
