import Foundation
import ModelStore

/// The models of one store, held in memory in typed columns, with unique-constraint enforcement,
/// indexes and query evaluation: the engine every snapshot-holding adapter (in-memory, JSON file,
/// append log) shares.
///
/// Each entity's rows live in one column per property (integers, doubles and dates as machine
/// numbers, strings, booleans, `nil`s as a bit set; composites, lists and references out of line),
/// numbered in identifier order. Each entity keeps a hash index of row numbers per uniqueness
/// constraint and per declared index (used for `==` and membership; fetching by a unique key costs
/// the same whatever the size of the store) and an ordered index on the first property of each
/// (used for ranges and for sorted fetches with a limit). Hash indexes are maintained by every
/// change; an ordered index is built the first time a query uses it and maintained incrementally
/// from then on, so loads and inserts do not sort. Filters run over the columns, and snapshots are
/// built only for the rows a fetch returns. ``accessPath(for:)`` says which index a query uses.
///
/// A table is a value; a store keeps it behind a `Mutex`. Saving is two steps so that a durable
/// store can write before it applies: ``prepare(_:storeIdentifier:)`` validates a save and mints
/// identifiers without changing the table, and ``apply(_:)-(SnapshotTable.PreparedSave)`` cannot fail.
///
/// Part of the adapter kit (`import ModelStoreAdapterKit`).
public struct SnapshotTable: Sendable {
    /// The schema of the snapshots.
    public let schema: Schema
    private(set) var tables: [String: EntityTable]
    /// The next integer key to mint; keys are unique across the store's entities.
    public private(set) var nextPrimaryKey: Int64 = 1

    /// An empty table for a schema.
    public init(schema: Schema) {
        self.schema = schema
        tables = Dictionary(uniqueKeysWithValues: schema.entities.map { ($0.name, EntityTable(entity: $0)) })
    }

    // MARK: Reading

    /// How many models the table holds, over all entities.
    public var count: Int { tables.values.reduce(0) { $0 + $1.count } }

    /// How many models of one entity the table holds.
    public func count(of entityName: String) -> Int { tables[entityName]?.count ?? 0 }

    /// The snapshot of a model, if the table has it.
    public func snapshot(for id: PersistentIdentifier) -> DefaultSnapshot? {
        tables[id.entityName]?.snapshot(for: id)
    }

    /// Every snapshot of an entity, in identifier order.
    public func snapshots(of entityName: String) -> [DefaultSnapshot] {
        tables[entityName]?.liveRows ?? []
    }

    /// Calls `body` with each model of an entity, in identifier order: its identifier and its values
    /// in slot order, read from the columns into one array that is refilled for each model, so a
    /// writer that reads every model (a whole-file format) builds no snapshot. `body` may keep the
    /// array; the next model then gets a fresh one.
    public func forEachModel(
        of entityName: String, _ body: (PersistentIdentifier, [StoreValue]) throws -> Void
    ) rethrows {
        guard let table = tables[entityName] else { return }
        var values = [StoreValue](repeating: .null, count: table.columns.count)
        for row in 0..<table.rowCount where table.isLive(row) {
            for slot in values.indices { values[slot] = table.value(slot, at: row) }
            try body(table.ids[row], values)
        }
    }

    /// How many of these identifiers name models the table holds (each counted once per mention).
    public func count(existing identifiers: [PersistentIdentifier]) -> Int {
        // A delete of every model lists each row once, in row order: one walk, no look-ups.
        if let name = identifiers.first?.entityName, tables[name]?.isEveryRow(identifiers) == true {
            return identifiers.count
        }
        return identifiers.reduce(0) { $0 + (tables[$1.entityName]?.row(of: $1) == nil ? 0 : 1) }
    }

    /// Every snapshot, entity by entity in schema order, each in identifier order.
    public var allSnapshots: [DefaultSnapshot] { schema.entities.flatMap { snapshots(of: $0.name) } }

    // MARK: Saving

    /// A validated save, ready to apply.
    public struct PreparedSave: Sendable {
        /// Inserted snapshots under their permanent identifiers, references remapped.
        public let inserted: [DefaultSnapshot]
        /// Updated snapshots, references remapped.
        public let updated: [DefaultSnapshot]
        /// Identifiers of deleted models.
        public let deleted: [PersistentIdentifier]
        /// The save's inserted snapshots as the request had them, and the identifier minted for
        /// each (`nil`: it kept its own), from which ``remappedIdentifiers`` is built on demand.
        let requested: [DefaultSnapshot]
        let minted: [PersistentIdentifier?]
        /// The mapping when `prepare` needed it to rewrite references.
        let remapping: [PersistentIdentifier: PersistentIdentifier]?
        /// The key counter after this save.
        public let nextPrimaryKey: Int64

        /// Permanent identifiers by temporary identifier. Built when first asked for (a batch
        /// insert that returns the identifiers in order never asks), so read it once.
        public var remappedIdentifiers: [PersistentIdentifier: PersistentIdentifier] {
            remapping ?? DataStoreSaveChangesRequest.remapping(requested, minted)
        }

        /// The store's result for this save, with the permanent identifiers in the request's
        /// order (the mapping by temporary identifier is built only if the caller reads it).
        public func result(
            for storeIdentifier: String, snapshotsToReregister: [PersistentIdentifier: DefaultSnapshot] = [:],
            historyToken: DefaultHistoryToken? = nil
        ) -> DataStoreSaveChangesResult<DefaultSnapshot> {
            DataStoreSaveChangesResult(
                for: storeIdentifier, inserted: requested, mintedInOrder: minted,
                snapshotsToReregister: snapshotsToReregister, historyToken: historyToken)
        }
    }

    /// Validates a save against the table and mints identifiers, without changing the table.
    ///
    /// Throws `DataStoreError.uniqueConstraintViolation` (naming the entity, the properties and,
    /// in `DataStoreError.conflictingValues`, the values) and `DataStoreError.notFound` for
    /// updates or deletes of models the table does not have.
    public func prepare(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, storeIdentifier: String
    ) throws -> PreparedSave {
        for snapshot in request.inserted where tables[snapshot.persistentIdentifier.entityName] == nil {
            let name = snapshot.persistentIdentifier.entityName
            throw DataStoreError(
                .notFound, "the store has no entity '\(name)'",
                remedy: "Add the model type to this store's configuration", entityName: name)
        }
        var key = nextPrimaryKey
        let minted = request.mintIdentifiersInOrderOnly(storeIdentifier: storeIdentifier, nextPrimaryKey: &key)
        // References to rewrite exist only in snapshots of entities with relationships.
        let refers = [request.inserted, request.updated].joined().contains { !$0.entity.relationships.isEmpty }
        let remap = refers ? DataStoreSaveChangesRequest.remapping(request.inserted, minted) : nil
        // Identifiers minted above are new by construction; only the ones a request brought can clash,
        // with a stored model or with each other (checked below).
        var brought: [PersistentIdentifier] = []
        let inserted = zip(request.inserted, minted).map { snapshot, minted in
            guard let minted else {
                brought.append(snapshot.persistentIdentifier)
                return snapshot.copy(persistentIdentifier: snapshot.persistentIdentifier, remappedIdentifiers: remap)
            }
            return snapshot.copy(persistentIdentifier: minted, remappedIdentifiers: remap)
        }
        let updated = request.updated.map {
            $0.copy(persistentIdentifier: $0.persistentIdentifier, remappedIdentifiers: remap)
        }
        for changed in updated + request.deleted where snapshot(for: changed.persistentIdentifier) == nil {
            throw DataStoreError(
                .notFound,
                "cannot save changes to \(changed.persistentIdentifier): the store does not have it",
                remedy: "Fetch the model again; another context may have deleted it",
                entityName: changed.persistentIdentifier.entityName)
        }
        // Nothing changed since the context checked for conflicts (see `expectedValues`).
        try request.checkExpectedValues { snapshot(for: $0) }
        var seen = Set<PersistentIdentifier>()
        for id in brought where tables[id.entityName]?.row(of: id) != nil || !seen.insert(id).inserted {
            throw DataStoreError(
                .conflict, "cannot insert \(id): the store already has it", entityName: id.entityName)
        }
        try checkUniqueness(inserted: inserted, updated: updated, deleted: request.deleted.map(\.persistentIdentifier))
        return PreparedSave(
            inserted: inserted, updated: updated, deleted: request.deleted.map(\.persistentIdentifier),
            requested: request.inserted, minted: minted, remapping: remap, nextPrimaryKey: key)
    }

    /// Applies a prepared save. Call it only with the result of ``prepare(_:storeIdentifier:)`` on this table.
    public mutating func apply(_ save: PreparedSave) {
        var changed = Set<String>()
        for id in save.deleted {
            tables[id.entityName]?.remove(id)
            changed.insert(id.entityName)
        }
        forEachEntityRun(of: save.updated, changed: &changed) { table, run in
            for snapshot in run { table.replace(snapshot) }
        }
        forEachEntityRun(of: save.inserted, changed: &changed) { table, run in
            table.reserveCapacity(adding: run.count)
            for snapshot in run { table.insert(snapshot) }
        }
        nextPrimaryKey = max(nextPrimaryKey, save.nextPrimaryKey)
        finishChanges(changed)
    }

    /// Ends a change of these entities' tables. The rows a save or batch adds have identifiers that
    /// ``prepare(_:storeIdentifier:)`` checked are new and distinct, so the table cannot find one twice.
    private mutating func finishChanges(_ names: Set<String>) {
        for name in names {
            do {
                try tables[name]?.finishChanges()
            } catch {
                preconditionFailure("a prepared change of '\(name)' stored an identifier twice")
            }
        }
    }

    /// Calls `body` with each run of consecutive snapshots of one entity and that entity's table,
    /// so a batch looks each table up once per run rather than once per snapshot.
    private mutating func forEachEntityRun(
        of snapshots: [DefaultSnapshot], changed: inout Set<String>,
        _ body: (inout EntityTable, ArraySlice<DefaultSnapshot>) -> Void
    ) {
        var start = 0
        while start < snapshots.count {
            let entity = snapshots[start].entity
            var end = start + 1
            while end < snapshots.count, snapshots[end].entity === entity { end += 1 }
            if tables[entity.name] != nil {
                body(&tables[entity.name]!, snapshots[start..<end])
                changed.insert(entity.name)
            }
            start = end
        }
    }

    /// Validates and applies a save in one step.
    public mutating func save(
        _ request: DataStoreSaveChangesRequest<DefaultSnapshot>, storeIdentifier: String
    ) throws -> DataStoreSaveChangesResult<DefaultSnapshot> {
        let prepared = try prepare(request, storeIdentifier: storeIdentifier)
        apply(prepared)
        return prepared.result(for: storeIdentifier)
    }

    /// Inserts new models and returns their permanent identifiers in order: a batch insert,
    /// validated and applied in one step.
    ///
    /// Each snapshot with a temporary identifier, or one of another store, gets an identifier of
    /// `storeIdentifier`, as ``prepare(_:storeIdentifier:)`` mints them. When every snapshot is a
    /// new model of one entity and none refers to a model by a temporary identifier (so no reference
    /// needs rewriting), the values go straight into the columns, with no copy of a snapshot;
    /// otherwise the batch is prepared and applied as a save.
    ///
    /// Throws `DataStoreError.uniqueConstraintViolation(entityName:propertyNames:conflictingValues:file:line:)`
    /// and the errors of ``prepare(_:storeIdentifier:)``; after a throw the table is unchanged.
    public mutating func insert(
        _ snapshots: [DefaultSnapshot], storeIdentifier: String, editingState: EditingState
    ) throws -> PersistentIdentifiers {
        try insert(
            DataStoreBatchInsertRequest(snapshots: snapshots, editingState: editingState),
            storeIdentifier: storeIdentifier)
    }

    /// Inserts a batch read chunk by chunk, atomically, as ``insert(_:storeIdentifier:editingState:)``
    /// inserts an array, and returns the new identifiers in order.
    ///
    /// Chunks of new models of one entity that refer to no model by a temporary identifier go
    /// straight into its columns as they are read, so the batch's snapshots are never all in memory;
    /// if a later chunk fails (a unique value claimed twice, or a snapshot that could not be built),
    /// the rows appended so far are taken back and the error is rethrown, leaving the table as it
    /// was. From the first chunk that is not of that kind on, the rest of the batch is gathered and
    /// saved together.
    public mutating func insert(
        _ request: DataStoreBatchInsertRequest<DefaultSnapshot>, storeIdentifier: String
    ) throws -> PersistentIdentifiers {
        var ids = PersistentIdentifiers()
        // Where the rows appended straight into the columns began, to take them back.
        var appended: (entity: String, row: Int, key: Int64)?
        var gathered: [DefaultSnapshot]?
        /// Appends a chunk's rows straight into the columns, unless the batch is being gathered.
        func append(_ rows: inout BatchRows) throws -> Bool {
            let entity = rows.entity
            guard gathered == nil, isAppendable(rows), appended.map({ $0.entity == entity.name }) ?? true else {
                return false
            }
            if appended == nil {
                appended = (entity.name, tables[entity.name]!.rowCount, nextPrimaryKey)
                tables[entity.name]!.reserveCapacity(adding: max(request.expectedCount, rows.count))
            }
            let first = nextPrimaryKey
            try tables[entity.name]!.appendNew(&rows, storeIdentifier: storeIdentifier, firstKey: first)
            nextPrimaryKey = first + Int64(rows.count)
            ids.append(storeIdentifier: storeIdentifier, entityName: entity.name, keys: first...(nextPrimaryKey - 1))
            return true
        }
        func gather(_ chunk: [DefaultSnapshot]) {
            if gathered == nil { gathered = chunk } else { gathered!.append(contentsOf: chunk) }
        }
        do {
            // Rows the context made from values go in as they are; snapshots as rows of one entity.
            let tookRows = try request.forEachRowChunk { rows in
                if try !append(&rows) { gather(rows.snapshots()) }
            }
            if !tookRows {
                try request.forEachChunk { chunk in
                    guard gathered == nil, let entity = chunk.first?.entity, tables[entity.name] != nil,
                        appended.map({ $0.entity == entity.name }) ?? true,
                        chunk.allSatisfy({ isNew($0, of: entity) })
                    else { return gather(chunk) }
                    // A few thousand rows at a time, so that the rows' flat copy stays small beside
                    // the snapshots (a save hands over every inserted model in one chunk).
                    for start in stride(from: 0, to: chunk.count, by: BatchSlots.chunkSize) {
                        var rows = BatchRows(
                            entity: entity, snapshots: chunk[start..<min(start + BatchSlots.chunkSize, chunk.count)])
                        guard try append(&rows) else { return gather(Array(chunk[start...])) }
                    }
                }
            }
            if let gathered {
                let prepared = try prepare(
                    DataStoreSaveChangesRequest(
                        editingState: request.editingState, inserted: gathered, updated: [], deleted: []),
                    storeIdentifier: storeIdentifier)
                apply(prepared)
                for snapshot in prepared.inserted { ids.append(snapshot.persistentIdentifier) }
            }
        } catch {
            if let appended {
                tables[appended.entity]!.removeAppendedRows(from: appended.row)
                nextPrimaryKey = appended.key
            }
            throw error
        }
        if let appended { finishChanges([appended.entity]) }
        return ids
    }

    /// Whether a chunk can go straight into the columns: new models of an entity of this table, none
    /// referring to a model by a temporary identifier (which a save would have to rewrite).
    private func isAppendable(_ rows: BatchRows) -> Bool {
        guard tables[rows.entity.name] != nil else { return false }
        return !(0..<rows.count).contains { row in
            rows.entity.relationships.contains { Self.refersToTemporary(rows[row, $0.slot]) }
        }
    }

    /// Whether a snapshot is of a new model of `entity` (a temporary identifier) that refers to no
    /// model by a temporary identifier, so that it can go straight into the columns.
    private func isNew(_ snapshot: DefaultSnapshot, of entity: Schema.Entity) -> Bool {
        snapshot.entity === entity && snapshot.persistentIdentifier.isTemporary
            && !entity.relationships.contains { Self.refersToTemporary(snapshot.values[$0.slot]) }
    }

    private static func refersToTemporary(_ value: StoreValue) -> Bool {
        switch value {
        case .reference(let id): id.isTemporary
        case .references(let ids): ids.contains(where: \.isTemporary)
        default: false
        }
    }

    /// Loads snapshots read from disk, keeping their identifiers. Throws `DataStoreError.corrupted`
    /// on a duplicate identifier, an unknown entity, or a unique-constraint violation.
    public mutating func load(_ snapshots: [DefaultSnapshot]) throws {
        var start = 0
        while start < snapshots.count {
            let entity = snapshots[start].entity
            var end = start + 1
            while end < snapshots.count, snapshots[end].entity === entity { end += 1 }
            let run = snapshots[start..<end]
            start = end
            guard tables[entity.name] != nil else {
                let id = run.first!.persistentIdentifier
                throw DataStoreError(
                    .corrupted, "the stored model \(id) belongs to an entity the schema does not have",
                    remedy: "Open the store with a schema that includes '\(id.entityName)'")
            }
            try loadRows(of: entity.name, expectedCount: run.count) { rows in
                for snapshot in run { try rows.append(snapshot.persistentIdentifier, snapshot.values) }
            }
        }
    }

    /// Loads the rows of one entity as a reader produces them, without a snapshot per row: `body`
    /// appends each row to `rows`, which checks what ``load(_:)`` checks. A whole-file format
    /// decodes straight into the table this way. `expectedCount` reserves room for that many rows.
    ///
    /// Throws what `body` throws, or `DataStoreError.corrupted` on a duplicate identifier, a row
    /// filed under another entity, or a unique-constraint violation. On a throw the entity's rows are
    /// part-loaded; callers discard the table (a failed load opens nothing).
    public mutating func loadRows<Result>(
        of entityName: String, expectedCount: Int = 0, _ body: (inout LoadingRows) throws -> Result
    ) throws -> Result {
        guard let table = tables.removeValue(forKey: entityName) else {
            throw DataStoreError(
                .corrupted, "the store has models of '\(entityName)', an entity the schema does not have",
                remedy: "Open the store with a schema that includes '\(entityName)'")
        }
        var rows = LoadingRows(table: table, nextPrimaryKey: nextPrimaryKey)
        rows.table.reserveCapacity(adding: expectedCount)
        defer {
            tables[entityName] = rows.table
            nextPrimaryKey = rows.nextPrimaryKey
        }
        let result = try body(&rows)
        do {
            try rows.table.claimLoadedUniqueValues()
            try rows.table.finishChanges()
        } catch .duplicateUniqueValue(let constraint, let pair) {
            let (table, owner, claimant) = (rows.table, pair.0, pair.1)
            let names = table.entity.uniquenessConstraints[constraint].map { "'\($0)'" }.joined(separator: ", ")
            let value = table.uniqueSlots[constraint].map { "\(table.value($0, at: owner))" }.joined(separator: ", ")
            throw DataStoreError(
                .corrupted,
                "two stored '\(entityName)' models share a unique value of \(names): \(table.ids[owner]) and "
                    + "\(table.ids[claimant]) both have \(value)",
                remedy: "Restore the store from a backup, or change or remove one of the two models",
                entityName: entityName)
        } catch {
            throw DataStoreError(
                .corrupted, "an identifier of '\(entityName)' is stored twice",
                remedy: "Restore the store from a backup, or remove the repeated model", entityName: entityName)
        }
        return result
    }

    /// The rows of one entity while a reader loads them (see ``SnapshotTable/loadRows(of:expectedCount:_:)``).
    public struct LoadingRows {
        fileprivate var table: EntityTable
        fileprivate var nextPrimaryKey: Int64
        /// The scope of the last identifier appended, whose entity name was checked.
        private var checkedScope: PersistentIdentifier.Scope?

        fileprivate init(table: EntityTable, nextPrimaryKey: Int64) {
            self.table = table
            self.nextPrimaryKey = nextPrimaryKey
        }

        /// Appends a row read from disk: its identifier, and its values in slot order. The values are
        /// copied into the columns, so a reader can refill one array for every row.
        ///
        /// Throws `DataStoreError.corrupted` if the identifier is another entity's or is already
        /// loaded. Unique values are checked once every row is in: ``SnapshotTable/loadRows(of:expectedCount:_:)``
        /// throws if two loaded rows share one.
        public mutating func append(_ id: PersistentIdentifier, _ values: [StoreValue]) throws(DataStoreError) {
            // Rows of one load share a scope: the entity's name is compared once per scope, not per row.
            if id.scope != checkedScope, id.entityName != table.entity.name {
                throw DataStoreError(
                    .corrupted, "the stored model \(id) is filed under the entity '\(table.entity.name)'",
                    entityName: id.entityName)
            }
            checkedScope = id.scope
            guard table.insertLoaded(id, values) else {
                throw DataStoreError(.corrupted, "the identifier \(id) is stored twice", entityName: id.entityName)
            }
            if case .int(let int) = id.primaryKey, int >= nextPrimaryKey { nextPrimaryKey = int + 1 }
        }
    }

    /// Raises the key counter to at least `key`, so keys below it are never minted again.
    ///
    /// Durable stores call it after ``load(_:)`` with the counter they saved: loading sees only the
    /// models that still exist, and without it the keys of deleted models would be reused.
    public mutating func reserveKeys(below key: Int64) {
        nextPrimaryKey = max(nextPrimaryKey, key)
    }

    /// Removes every snapshot.
    public mutating func removeAll() {
        tables = Dictionary(uniqueKeysWithValues: schema.entities.map { ($0.name, EntityTable(entity: $0)) })
    }

    /// The one uniqueness checker: throws `DataStoreError.uniqueConstraintViolation(entityName:propertyNames:conflictingValues:file:line:)`
    /// when a save's inserted and updated snapshots claim a unique value that another of them, or a
    /// row the save keeps, already has.
    func checkUniqueness(
        inserted: [DefaultSnapshot], updated: [DefaultSnapshot], deleted: [PersistentIdentifier]
    ) throws {
        // The entities with constraints, found without copying the lists (runs share an entity).
        var constrained = Set<String>()
        var last: Schema.Entity?
        for snapshot in [inserted, updated].joined() where snapshot.entity !== last {
            last = snapshot.entity
            if !snapshot.entity.uniquenessConstraints.isEmpty { constrained.insert(snapshot.entity.name) }
        }
        guard !constrained.isEmpty else { return }
        let vacating = Set(deleted).union(updated.map(\.persistentIdentifier))
        func claimant(_ position: Int32) -> PersistentIdentifier {
            let position = Int(position)
            return position < updated.count
                ? updated[position].persistentIdentifier : inserted[position - updated.count].persistentIdentifier
        }
        for name in constrained.sorted() {
            guard let table = tables[name] else { continue }
            for constraint in table.uniqueIndexes.indices {
                // An empty index (a table filled by this save) has no owner to look up.
                let hasOwners = !table.uniqueIndexes[constraint].isEmpty
                // The values this save claims, and by which of its snapshots (a position: updated,
                // then inserted); checked against the stored owners.
                var claimed: [IndexKey: Int32] = [:]
                claimed.reserveCapacity(inserted.count + updated.count)
                for (position, snapshot) in [updated, inserted].joined().enumerated() where snapshot.entity.name == name
                {
                    guard let key = table.uniqueKey(constraint, of: snapshot) else { continue }
                    let id = snapshot.persistentIdentifier
                    var owner = claimed.updateValue(Int32(position), forKey: key).map(claimant)
                    if owner == nil, hasOwners, let existing = table.owner(constraint, of: key), existing != id,
                        !vacating.contains(existing)
                    {
                        owner = existing
                    }
                    if let owner, owner != id {
                        throw DataStoreError.uniqueConstraintViolation(
                            entityName: name, propertyNames: table.entity.uniquenessConstraints[constraint],
                            conflictingValues: key.values)
                    }
                }
            }
        }
    }

    // MARK: Batches

    /// Deletes models by identifier; unknown identifiers are ignored.
    public mutating func delete(_ identifiers: [PersistentIdentifier]) {
        if let name = identifiers.first?.entityName, tables[name]?.isEveryRow(identifiers) == true {
            // A batch delete of every row (no predicate): empty the table rather than unindex row by row.
            tables[name] = EntityTable(entity: tables[name]!.entity)
            return
        }
        var changed = Set<String>()
        for id in identifiers {
            tables[id.entityName]?.remove(id)
            changed.insert(id.entityName)
        }
        finishChanges(changed)
    }

    /// The identifiers of every model of an entity, in identifier order.
    public func identifiers(of entityName: String) -> PersistentIdentifiers {
        guard let table = tables[entityName] else { return [] }
        return table.ids.collect(liveCount: table.count, where: table.isLive)
    }

    /// Deletes every model of an entity at once: the entity's rows and indexes are dropped, not
    /// unindexed row by row.
    public mutating func deleteEveryModel(of entityName: String) {
        guard let table = tables[entityName] else { return }
        tables[entityName] = EntityTable(entity: table.entity)
    }

    /// Validates a batch update: the snapshots it would store.
    public func prepareUpdate(
        _ identifiers: [PersistentIdentifier], values: [Int: StoreValue]
    ) throws -> [DefaultSnapshot] {
        var updated: [DefaultSnapshot] = []
        updated.reserveCapacity(identifiers.count)
        for id in identifiers {
            guard var snapshot = snapshot(for: id) else { continue }
            for (slot, value) in values { snapshot.values[slot] = value }
            updated.append(snapshot)
        }
        try checkUniqueness(inserted: [], updated: updated, deleted: [])
        return updated
    }

    /// Stores updated snapshots returned by ``prepareUpdate(_:values:)``.
    public mutating func applyUpdate(_ snapshots: [DefaultSnapshot]) {
        var changed = Set<String>()
        forEachEntityRun(of: snapshots, changed: &changed) { table, run in
            for snapshot in run { table.replace(snapshot) }
        }
        finishChanges(changed)
    }
}
