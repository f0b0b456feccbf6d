import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

/// Writes a save's rows inside one transaction: mints keys, deletes, updates (checking each row's
/// version), inserts, replaces join rows, and clears references to rows that are gone.
struct RowWriter: Sendable {
    let session: Session
    let storeIdentifier: String
    let layouts: [String: TableLayout]
    let keySequence: String
    let url: String
    /// Whether a batch insert that a unique index refuses runs the transaction again (see
    /// ``InsertRefusals``), set by a writer whose transaction is run by ``Database`` and can run
    /// again; `nil` inserts every batch under a savepoint.
    var insertRefusals: InsertRefusals? = nil

    var reader: RowReader { RowReader(session: session, storeIdentifier: storeIdentifier, url: url) }

    func layout(_ entityName: String) throws -> TableLayout {
        guard let layout = layouts[entityName] else {
            throw DataStoreError(
                .notFound, "the store has no entity '\(entityName)'",
                remedy: "Add the model type to this store's configuration", entityName: entityName)
        }
        return layout
    }

    func localKey(_ id: PersistentIdentifier) -> Int64? {
        id.storeIdentifier == storeIdentifier ? id.primaryKey.intValue : nil
    }

    /// The runs of consecutive snapshots of one entity, in order (a save's snapshots come grouped by
    /// entity, so per-entity work looks the entity up once a run rather than once a snapshot).
    static func entityRuns(of snapshots: [DefaultSnapshot]) -> [(String, ArraySlice<DefaultSnapshot>)] {
        var runs: [(String, ArraySlice<DefaultSnapshot>)] = []
        var start = snapshots.startIndex
        while start < snapshots.endIndex {
            let name = snapshots[start].persistentIdentifier.entityName
            var end = start + 1
            while end < snapshots.endIndex && snapshots[end].persistentIdentifier.entityName == name { end += 1 }
            runs.append((name, snapshots[start..<end]))
            start = end
        }
        return runs
    }

    // MARK: Identifiers

    /// Permanent identifiers for inserted snapshots (keys from the sequence), and the snapshots
    /// with references to temporary identifiers rewritten.
    func mint(_ inserted: [DefaultSnapshot], updated: [DefaultSnapshot]) async throws -> (
        inserted: [DefaultSnapshot], updated: [DefaultSnapshot], remap: [PersistentIdentifier: PersistentIdentifier]
    ) {
        guard !inserted.isEmpty else { return ([], updated, [:]) }
        let fresh = inserted.filter { $0.persistentIdentifier.isTemporary || localKey($0.persistentIdentifier) == nil }
        var keys: [Int64] = []
        if !fresh.isEmpty {
            var binds = PostgresBindings()
            binds.append(Int64(fresh.count))
            // One row holding every key as an array: a row per key cost the client a message to decode
            // each (about 1 µs a key).
            let rows = try await session.query(
                "SELECT ARRAY(SELECT nextval('\(keySequence)') FROM generate_series(1, $1))", binds)
            keys = try rows.first?.decode([Int64].self) ?? []
            guard keys.count == fresh.count else {
                throw DataStoreError(
                    .corrupted,
                    "the key sequence '\(keySequence)' gave \(keys.count) keys for \(fresh.count) new models",
                    remedy: "Check that the sequence exists and is not shared with a program that alters it")
            }
        }
        var remap: [PersistentIdentifier: PersistentIdentifier] = [:]
        remap.reserveCapacity(fresh.count)
        var next = keys.makeIterator()
        var explicit: [String: [Int64]] = [:]
        for (entityName, run) in Self.entityRuns(of: inserted) {
            _ = try layout(entityName)
            for snapshot in run {
                let id = snapshot.persistentIdentifier
                if id.isTemporary || localKey(id) == nil {
                    remap[id] = .identifier(for: storeIdentifier, entityName: entityName, primaryKey: next.next()!)
                } else if let key = localKey(id) {
                    explicit[entityName, default: []].append(key)
                }
            }
        }
        for (entityName, keys) in explicit {
            if let taken = try await reader.existing(try layout(entityName), keys: keys).min() {
                throw DataStoreError(
                    .conflict, "cannot insert '\(entityName)' \(taken): the store already has it",
                    entityName: entityName)
            }
            var binds = PostgresBindings()
            binds.append(keys.max() ?? 1)
            try await session.execute(
                "SELECT setval('\(keySequence)', greatest($1, (SELECT last_value FROM \(keySequence))))", binds)
        }
        let newInserted = inserted.map {
            $0.copy(
                persistentIdentifier: remap[$0.persistentIdentifier] ?? $0.persistentIdentifier,
                remappedIdentifiers: remap)
        }
        let newUpdated = updated.map {
            $0.copy(persistentIdentifier: $0.persistentIdentifier, remappedIdentifiers: remap)
        }
        return (newInserted, newUpdated, remap)
    }

    // MARK: Rows

    /// The stored snapshots of these models (those the store has), with their rows locked until
    /// the transaction ends (`FOR NO KEY UPDATE`: they are about to change), so that the history
    /// records what this transaction replaced. (Deletes return their tombstones instead, see
    /// ``deleteReturningVersions(_:where:_:)``.)
    func lockedSnapshots(of ids: [PersistentIdentifier]) async throws -> [PersistentIdentifier: DefaultSnapshot] {
        var byEntity: [String: [Int64]] = [:]
        for id in ids {
            if let key = localKey(id), layouts[id.entityName] != nil {
                byEntity[id.entityName, default: []].append(key)
            }
        }
        var result: [PersistentIdentifier: DefaultSnapshot] = [:]
        for (entityName, keys) in byEntity.sorted(by: { $0.key < $1.key }) {
            var binds = PostgresBindings()
            binds.append(keys.sorted())
            for row in try await reader.rows(
                try layout(entityName),
                where: "WHERE t.\(TableLayout.key) = ANY($1) ORDER BY t.\(TableLayout.key) FOR NO KEY UPDATE", binds)
            {
                result[row.snapshot.persistentIdentifier] = row.snapshot
            }
        }
        return result
    }

    /// Deletes rows (their join rows cascade), each only at the version the context read when
    /// one is known; returns their history changes (with tombstones) in order, throws `.conflict`
    /// or `.notFound`.
    func delete(
        _ ids: [PersistentIdentifier], versions: [PersistentIdentifier: Int64]
    ) async throws -> [StoreHistoryRecord.Change] {
        var changes: [StoreHistoryRecord.Change] = []
        for id in ids {
            let layout = try layout(id.entityName)
            guard let key = localKey(id) else { throw missing(id) }
            var binds = PostgresBindings()
            binds.append(key)
            guard let row = try await deleteReturningVersions(layout, where: "\(TableLayout.key) = $1", binds).first
            else {
                throw missing(id)
            }
            if let read = versions[id], row.version != read { throw Self.conflict([id]) }
            for join in layout.joinTables { try await clearTargets(of: key, in: join) }
            changes.append(row.change)
        }
        return changes
    }

    /// Deletes the rows that match `condition` (`"_pk" = $1`, `"_pk" = ANY($1)`) and returns each one's
    /// key, version and history change, with its tombstone, from the deleted row itself
    /// (`RETURNING` the key, the version and the `.preserveValueOnDeletion` attributes), so the
    /// rows are neither read nor locked first. Rows come in the order the server deleted them.
    func deleteReturningVersions(
        _ layout: TableLayout, where condition: String, _ binds: PostgresBindings
    ) async throws -> [(key: Int64, version: Int64, change: StoreHistoryRecord.Change)] {
        let entity = layout.entity
        let preserved = entity.attributes.filter { $0.options.contains(.preserveValueOnDeletion) }
            .compactMap { layout.columnsBySlot[$0.slot] }
        let returning =
            [TableLayout.key, TableLayout.version] + preserved.map { $0.type?.selected($0.quoted) ?? $0.quoted }
        var result: [(key: Int64, version: Int64, change: StoreHistoryRecord.Change)] = []
        for row in try await session.query(
            "DELETE FROM \(layout.table) WHERE \(condition) RETURNING "
                + returning.joined(separator: ", "), binds)
        {
            let cells = row.makeRandomAccess()
            let key = try cells[0].decode(Int64.self)
            var values = [StoreValue](repeating: .null, count: entity.properties.count)
            for (offset, column) in preserved.enumerated() {
                if let type = column.type { values[column.slot] = try type.decode(cells[offset + 2]) }
            }
            let snapshot = DefaultSnapshot(
                persistentIdentifier: reader.identifier(entity.name, key), entity: entity, values: values)
            result.append((key, try cells[1].decode(Int64.self), .deletion(of: snapshot)))
        }
        return result
    }

    /// How many keys make a batch delete try ``deleteEveryRow(_:naming:)`` first.
    static let everyRowThreshold = 500

    /// Deletes the rows with these keys (see ``deleteReturningVersions(_:where:_:)``), and when they
    /// are as many as the table's rows (at least ``everyRowThreshold``), without naming them to the
    /// server: what a context's `delete(model:)` of every model of an entity asks.
    ///
    /// `DELETE FROM t WHERE (SELECT count(*) FROM t) = n` (one statement, so the count and the delete
    /// see the same rows) deletes every row when the table has as many as there are keys, and then
    /// every row it deleted must be one of the keys; if one is not (some keys name no row, and other
    /// rows took their place in the count), the statement is rolled back to a savepoint and the rows
    /// are deleted by key, as when the count differs.
    func deleteRows(
        _ layout: TableLayout, keys: [Int64]
    ) async throws -> [(key: Int64, version: Int64, change: StoreHistoryRecord.Change)] {
        let distinct = Set(keys)
        if distinct.count >= Self.everyRowThreshold {
            var count = PostgresBindings()
            count.append(Int64(distinct.count))
            try await session.execute("SAVEPOINT modelstore_delete_every_row")
            let deleted = try await deleteReturningVersions(
                layout, where: "(SELECT count(*) FROM \(layout.table)) = $1", count)
            if deleted.allSatisfy({ distinct.contains($0.key) }) && !deleted.isEmpty { return deleted }
            if !deleted.isEmpty { try await session.execute("ROLLBACK TO SAVEPOINT modelstore_delete_every_row") }
        }
        var binds = PostgresBindings()
        binds.append(keys)
        return try await deleteReturningVersions(layout, where: "\(TableLayout.key) = ANY($1)", binds)
    }

    /// The updated models whose previous values ``update(_:versions:returningPrevious:)`` can return
    /// from its `UPDATE` (joining the table to itself), so they need not be read and locked first:
    /// those updated at a known version (a row at that version is the one the statement's snapshot
    /// holds) of tables no foreign key reaches (nothing else in the save can change them first),
    /// unless the save first clears their unique values (two or more rows of an entity with
    /// uniqueness constraints, see ``vacateUniqueValues(of:stored:)``).
    func previousValuesReturned(
        by snapshots: [DefaultSnapshot], versions: [PersistentIdentifier: Int64]
    ) -> Set<PersistentIdentifier> {
        var counts: [String: Int] = [:]
        for snapshot in snapshots { counts[snapshot.entity.name, default: 0] += 1 }
        var result: Set<PersistentIdentifier> = []
        for snapshot in snapshots {
            let id = snapshot.persistentIdentifier
            guard versions[id] != nil, let layout = layouts[id.entityName], layout.hasNoRelationships else { continue }
            if !snapshot.entity.uniquenessConstraints.isEmpty && counts[snapshot.entity.name, default: 0] > 1 {
                continue
            }
            result.insert(id)
        }
        return result
    }

    /// Rewrites rows, raising each version; a row whose version is not the one the context read
    /// fails the save with `.conflict`, unless `comparable` says the save has expected values for
    /// it: then the row is read under its lock, returned as its previous values for the caller to
    /// compare, and written at the version it has. Returns the new versions, and the previous values
    /// of the models in `returningPrevious` (see ``previousValuesReturned(by:versions:)``) and of
    /// those read so.
    ///
    /// `stored` holds the rows as the save read and locked them before, when it did: a row there
    /// whose unique values stay is not cleared first (see ``vacateUniqueValues(of:stored:)``).
    ///
    /// With `recording`, the one snapshot's `UPDATE` also records the save's one change in the
    /// history (see ``HistoryLog/recordingOneChange(after:parameters:)``), and returns what it
    /// recorded when it did.
    func update(
        _ snapshots: [DefaultSnapshot], versions: [PersistentIdentifier: Int64],
        returningPrevious: Set<PersistentIdentifier> = [], comparable: (PersistentIdentifier) -> Bool = { _ in false },
        recording: OneChangeRecording? = nil, stored: [PersistentIdentifier: DefaultSnapshot] = [:]
    ) async throws -> (
        versions: [PersistentIdentifier: Int64], previous: [PersistentIdentifier: DefaultSnapshot],
        recorded: OneChangeRecording.Recorded?
    ) {
        var written: [PersistentIdentifier: Int64] = [:]
        var previous: [PersistentIdentifier: DefaultSnapshot] = [:]
        var recorded: OneChangeRecording.Recorded?
        try await vacateUniqueValues(of: snapshots, stored: stored)
        // Many rows of a table at known versions go in multi-row statements; the rest one by one.
        let batched = try await updateRows(snapshots, versions: versions, skipping: returningPrevious)
        for snapshot in snapshots {
            let id = snapshot.persistentIdentifier
            if let version = batched[id] {
                written[id] = version
                continue
            }
            let layout = try layout(id.entityName)
            guard let key = localKey(id) else { throw missing(id) }
            if let row = try await updateRow(
                snapshot, key: key, layout: layout, at: versions[id], returningPrevious: returningPrevious.contains(id),
                recording: snapshots.count == 1 ? recording : nil)
            {
                written[id] = row.version
                previous[id] = row.previous
                recorded = row.recorded
            } else {
                guard versions[id] != nil, comparable(id) else {
                    if versions[id] != nil, try await !reader.existing(layout, keys: [key]).isEmpty {
                        throw Self.conflict([id])
                    }
                    throw missing(id)
                }
                // Changed since the context read it: compared by value (the caller's check), as
                // the context would have, at the version it has now, locked until the commit.
                var binds = PostgresBindings()
                binds.append(key)
                guard
                    let current = try await reader.rows(
                        layout, where: "WHERE t.\(TableLayout.key) = $1 FOR NO KEY UPDATE", binds
                    ).first,
                    let row = try await updateRow(
                        snapshot, key: key, layout: layout, at: current.version, returningPrevious: false)
                else { throw missing(id) }
                written[id] = row.version
                previous[id] = current.snapshot
            }
            for join in layout.joinTables {
                try await clearTargets(of: key, in: join)
                try await insertTargets(of: key, in: join, value: snapshot.values[join.slot], owner: id)
            }
        }
        return (written, previous, recorded)
    }

    /// Rewrites one row (at version `read` when there is one) and returns its new version, with its
    /// previous values when `returningPrevious` (the table joined to itself as `o` returns the row
    /// as it was, at its snapshot's version); `nil` when no row has that key and version. With
    /// `recording` (and `returningPrevious`), the statement also records the save's one change.
    private func updateRow(
        _ snapshot: DefaultSnapshot, key: Int64, layout: TableLayout, at read: Int64?, returningPrevious joined: Bool,
        recording: OneChangeRecording? = nil
    ) async throws -> (version: Int64, previous: DefaultSnapshot?, recorded: OneChangeRecording.Recorded?)? {
        let target = joined ? "t." : ""
        var binds = PostgresBindings()
        binds.append(key)
        var assignments = ["\(TableLayout.version) = \(target)\(TableLayout.version) + 1"]
        // Kept prepared unless a value is not of its column's own type (rule 2 of `PreparedStatements`).
        var prepared = true
        for column in layout.columns {
            if let type = column.type, !type.bindsAsItself(snapshot.values[column.slot]) { prepared = false }
            try bind(snapshot, column, layout: layout, to: &binds)
            assignments.append("\(column.quoted) = \(column.type?.placeholder(binds.count) ?? "$\(binds.count)")")
        }
        var condition = "\(target)\(TableLayout.key) = $1"
        if let read {
            binds.append(read)
            condition += " AND \(target)\(TableLayout.version) = $\(binds.count)"
        }
        var sql =
            joined
            ? "UPDATE \(layout.table) t SET " + assignments.joined(separator: ", ") + " FROM \(layout.table) o "
                + "WHERE \(condition) AND o.\(TableLayout.key) = t.\(TableLayout.key) "
                + "RETURNING \(layout.selectList(alias: "o")), t.\(TableLayout.version) AS modelstore_written"
            : "UPDATE \(layout.table) SET " + assignments.joined(separator: ", ") + " WHERE \(condition) "
                + "RETURNING \(TableLayout.version)"
        let recording = joined ? recording : nil
        if let recording {
            sql = recording.history.recordingOneChange(after: sql, parameters: binds.count)
            try HistoryLog.bindRecording(of: recording.change, author: recording.author, to: &binds)
        }
        guard let row = try await run(sql, binds, writing: snapshot, layout: layout, prepared: prepared).first
        else { return nil }
        guard joined else { return (try row.decode(Int64.self), nil, nil) }
        let cells = row.makeRandomAccess()
        var recorded: OneChangeRecording.Recorded?
        if recording != nil {
            let first = layout.columns.count + 3
            guard let number = try cells[first].decode(Int64?.self),
                let transaction = try cells[first + 1].decode(Int64?.self)
            else { throw StoreOpener.incompleteMeta(url) }
            session.transactionID.set(transaction)
            let total = try cells[first + 2].decode(Int64?.self)
            let before = try cells[first + 3].decode(Int64?.self)
            var totals: (total: Int64, before: Int64)?
            if let total, let before { totals = (total, before) }
            recorded = OneChangeRecording.Recorded(number: number, totals: totals)
        }
        return (
            try cells[layout.columns.count + 2].decode(Int64.self), try reader.read(row, layout: layout).snapshot,
            recorded
        )
    }

    /// Runs a statement that writes `snapshot`'s row; a unique index's refusal becomes
    /// `.uniqueConstraintViolation` naming the constraint and the snapshot's values.
    @discardableResult
    func run(
        _ sql: String, _ binds: PostgresBindings, writing snapshot: DefaultSnapshot, layout: TableLayout,
        prepared: Bool = false
    ) async throws -> [PostgresRow] {
        do {
            return try await prepared ? session.query(prepared: sql, binds) : session.query(sql, binds)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            let names =
                error.serverInfo?[.constraintName].flatMap(layout.constraint(named:))
                ?? layout.entity.uniquenessConstraints.first ?? []
            throw DataStoreError(
                .uniqueConstraintViolation,
                "another '\(layout.entity.name)' already has the same "
                    + names.map { "'\($0)'" }.joined(separator: ", "),
                remedy: "Change the value, or fetch and update the existing model instead of inserting one",
                entityName: layout.entity.name, propertyNames: names,
                conflictingValues: names.compactMap { snapshot[$0] }, underlyingError: error)
        }
    }

    /// Clears first the unique columns of the updated rows of an entity whose unique values change,
    /// so values may swap between rows of one save without tripping the unique index on the way.
    ///
    /// A row whose stored values (`stored`, read and locked before) hold the same unique values is
    /// left as it is: another row that takes those values on the way collides with this row's new
    /// values too, which the index must refuse. So does a row of an entity where only one row's
    /// unique values change. Leaving them keeps their index entries, and spares the statement.
    private func vacateUniqueValues(
        of snapshots: [DefaultSnapshot], stored: [PersistentIdentifier: DefaultSnapshot]
    ) async throws {
        var byEntity: [String: [Int64]] = [:]
        for snapshot in snapshots where !snapshot.entity.uniquenessConstraints.isEmpty {
            let id = snapshot.persistentIdentifier
            if let before = stored[id], let layout = layouts[id.entityName],
                layout.entity.uniquenessConstraints.allSatisfy({ names in
                    names.allSatisfy { name in
                        layout.column(named: name).map { snapshot.values[$0.slot] == before.values[$0.slot] } ?? false
                    }
                })
            {
                continue
            }
            if let key = localKey(id) {
                byEntity[snapshot.entity.name, default: []].append(key)
            }
        }
        for (name, keys) in byEntity where keys.count > 1 {
            let layout = try layout(name)
            let columns = Set(layout.entity.uniquenessConstraints.joined()).sorted()
            var binds = PostgresBindings()
            binds.append(keys)
            try await session.execute(
                "UPDATE \(layout.table) SET " + columns.map { "\(quote($0)) = NULL" }.joined(separator: ", ")
                    + " WHERE \(TableLayout.key) = ANY($1)", binds)
        }
    }

    /// Appends the parameter of one column of a snapshot.
    func bind(
        _ snapshot: DefaultSnapshot, _ column: TableLayout.Column, layout: TableLayout, to binds: inout PostgresBindings
    ) throws {
        let value = snapshot.values[column.slot]
        if let type = column.type { return try type.bind(value, to: &binds) }
        switch value {
        case .null: binds.appendNull()
        case .reference(let target):
            binds.append(try targetKey(target, owner: snapshot.persistentIdentifier, property: column.name))
        default: throw notAReference(value, column, layout: layout)
        }
    }

    /// The error for a to-one relationship's value that is not a reference.
    func notAReference(_ value: StoreValue, _ column: TableLayout.Column, layout: TableLayout) -> DataStoreError {
        DataStoreError(
            .invalidValue, "'\(layout.entity.name).\(column.name)' holds a \(value.kindName), not a reference",
            entityName: layout.entity.name, propertyNames: [column.name])
    }

    func targetKey(_ target: PersistentIdentifier, owner: PersistentIdentifier, property: String) throws
        -> Int64
    {
        if target.isTemporary {
            throw DataStoreError(
                .notFound,
                "\(owner) refers through '\(owner.entityName).\(property)' to a new model that the save does not insert",
                remedy: "Insert the related model into the context before saving", entityName: owner.entityName,
                propertyNames: [property])
        }
        guard let key = localKey(target) else {
            throw DataStoreError(
                .unsupportedFeature,
                "\(owner) refers through '\(owner.entityName).\(property)' to \(target), a model of another store",
                remedy: "Keep related models in the same PostgreSQL store", entityName: owner.entityName,
                propertyNames: [property])
        }
        return key
    }

    private func clearTargets(of key: Int64, in join: TableLayout.JoinTable) async throws {
        var binds = PostgresBindings()
        binds.append(key)
        try await session.execute("DELETE FROM \(join.table) WHERE owner = $1", binds)
    }

    private func insertTargets(
        of key: Int64, in join: TableLayout.JoinTable, value: StoreValue, owner: PersistentIdentifier
    ) async throws {
        let targets = try value.referencedIdentifiers.map { try targetKey($0, owner: owner, property: join.name) }
        guard !targets.isEmpty else { return }
        var binds = PostgresBindings()
        binds.append(key)
        binds.append(targets)
        try await session.execute(
            "INSERT INTO \(join.table) (owner, position, target) "
                + "SELECT $1, (t.ordinality - 1)::integer, t.target FROM unnest($2::bigint[]) WITH ORDINALITY AS t(target, ordinality)",
            binds)
    }

    // MARK: Referential integrity

    /// Clears references to rows that no longer exist: those deleted here, and any the changed
    /// snapshots name that the store does not have. Returns the rewritten snapshots (and bumps
    /// their versions, since their rows changed).
    func clearDanglingReferences(
        changed: [DefaultSnapshot], deleted: [PersistentIdentifier]
    ) async throws -> [PersistentIdentifier: RowReader.Versioned] {
        var gone: [String: Set<Int64>] = [:]
        for id in deleted { if let key = localKey(id) { gone[id.entityName, default: []].insert(key) } }
        // Rows this save inserted or updated exist (an update of a missing row failed the save
        // already): a reference to one needs no look-up.
        var written: [String: Set<Int64>] = [:]
        for (entityName, run) in Self.entityRuns(of: changed) {
            var keys = written[entityName] ?? []
            keys.reserveCapacity(keys.count + run.count)
            for snapshot in run { if let key = localKey(snapshot.persistentIdentifier) { keys.insert(key) } }
            written[entityName] = keys
        }
        var named: [String: Set<Int64>] = [:]
        for snapshot in changed {
            for relationship in snapshot.entity.relationships {
                for target in snapshot.values[relationship.slot].referencedIdentifiers {
                    if let key = localKey(target), layouts[target.entityName] != nil,
                        written[target.entityName]?.contains(key) != true
                    {
                        named[target.entityName, default: []].insert(key)
                    }
                }
            }
        }
        for (entityName, keys) in named {
            let found = try await reader.existing(try layout(entityName), keys: Array(keys))
            let missing = keys.subtracting(found)
            if !missing.isEmpty { gone[entityName, default: []].formUnion(missing) }
        }
        var owners: [String: Set<Int64>] = [:]
        for (entityName, keys) in gone where !keys.isEmpty {
            var binds = PostgresBindings()
            binds.append(Array(keys))
            for layout in layouts.values {
                for column in layout.columns where column.destination == entityName {
                    for row in try await session.query(
                        "UPDATE \(layout.table) SET \(column.quoted) = NULL, \(TableLayout.version) = "
                            + "\(TableLayout.version) + 1 WHERE \(column.quoted) = ANY($1) RETURNING \(TableLayout.key)",
                        binds)
                    {
                        owners[layout.entity.name, default: []].insert(try row.decode(Int64.self))
                    }
                }
                for join in layout.joinTables where join.destination == entityName {
                    for row in try await session.query(
                        "DELETE FROM \(join.table) WHERE target = ANY($1) RETURNING owner", binds)
                    {
                        owners[layout.entity.name, default: []].insert(try row.decode(Int64.self))
                    }
                }
            }
        }
        var repaired: [PersistentIdentifier: RowReader.Versioned] = [:]
        for (entityName, keys) in owners {
            let layout = try layout(entityName)
            if !layout.joinTables.isEmpty {
                var binds = PostgresBindings()
                binds.append(Array(keys))
                try await session.execute(
                    "UPDATE \(layout.table) SET \(TableLayout.version) = \(TableLayout.version) + 1 "
                        + "WHERE \(TableLayout.key) = ANY($1)", binds)
            }
            for (_, row) in try await reader.rows(layout, keys: Array(keys)) {
                repaired[row.snapshot.persistentIdentifier] = row
            }
        }
        return repaired
    }

    func missing(_ id: PersistentIdentifier) -> DataStoreError {
        DataStoreError(
            .notFound, "cannot save changes to \(id): the store does not have it",
            remedy: "Fetch the model again; another context may have deleted it", entityName: id.entityName)
    }

    /// The error for rows another context or process changed since this context read them.
    static func conflict(_ ids: [PersistentIdentifier]) -> DataStoreError {
        let entities = Set(ids.map(\.entityName)).sorted()
        return DataStoreError(
            .conflict,
            "the save would overwrite " + ids.map(\.description).joined(separator: ", ")
                + ", changed by another context or process since this context read "
                + (ids.count == 1 ? "it" : "them"),
            remedy: "Roll back (or refetch) the models of " + entities.map { "'\($0)'" }.joined(separator: ", ")
                + " and apply the change again", entityName: entities.first)
    }
}
