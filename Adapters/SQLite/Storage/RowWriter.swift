import Foundation
import ModelStore
import ModelStoreCrypto

/// Writes one save (or batch) inside the store's write transaction: mints keys, checks that the
/// models it changes exist, writes rows and join rows through cached statements, maps unique
/// index violations to ``DataStoreError/uniqueConstraintViolation``, and keeps relationships from
/// pointing at models that are gone.
struct RowWriter {
    let connection: SQLiteConnection
    let storeIdentifier: String
    let layouts: [String: EntityLayout]
    /// The key counter, read from the database when a write first needs it.
    private var nextKey: Int64?
    /// Whether the counter moved, so ``storeNextKey()`` has something to write.
    private(set) var mintedKeys = false
    var reader: RowReader { RowReader(connection: connection, storeIdentifier: storeIdentifier) }
    /// Where the rows' states before this writer changed them are kept, when the change may have
    /// to be undone after it commits (a two-phase save); `nil` for every other write.
    var undoLog: RowUndoLog?
    /// The folder of external values (`nil` in memory, where every value stays in its column).
    let folder: ExternalValueFolder?
    /// The external files this writer wrote and released.
    let files = ExternalFileChanges()
    /// A reader that reads external values as their files' names, for comparing rows.
    private var nameReader: RowReader {
        RowReader(connection: connection, storeIdentifier: storeIdentifier, readsExternalNames: true)
    }

    init(connection: SQLiteConnection, storeIdentifier: String, layouts: [String: EntityLayout]) {
        self.connection = connection
        self.storeIdentifier = storeIdentifier
        self.layouts = layouts
        folder = connection.externalValues
    }

    // MARK: External files

    /// Notes the external files named by the rows of `layout` that match `condition` (SQL after the
    /// table name, such as `" WHERE …"`), before those rows are deleted.
    func releaseExternalFiles(of layout: EntityLayout, where condition: String, _ parameters: [SQLValue]) throws {
        guard folder != nil, !layout.externalColumns.isEmpty else { return }
        let names = layout.externalColumns.map { quote($0.name) }.joined(separator: ", ")
        let statement = try connection.statement("SELECT \(names) FROM \(layout.table)" + condition)
        defer { statement.reset() }
        statement.bind(parameters)
        while try statement.step() {
            for index in 0..<Int32(layout.externalColumns.count) where statement.type(index) == 3 {
                files.released.append(statement.text(index))
            }
        }
    }

    /// Flushes the folder of the files written, before the transaction that names them commits.
    func flushExternalFiles() throws {
        guard let folder, !files.written.isEmpty else { return }
        try folder.syncFolder()
    }

    /// Removes the files written by a transaction that did not commit.
    func discardWrittenFiles() {
        folder?.remove(files.written)
        files.written = []
    }

    private mutating func currentNextKey() throws -> Int64 {
        if let nextKey { return nextKey }
        let statement = try connection.statement("SELECT value FROM \(StoreOpener.metaTable) WHERE key = 'nextKey'")
        guard try statement.step(during: "reading") else {
            throw DataStoreError(
                .corrupted, "the SQLite store '\(connection.path)' has no key counter", remedy: "Restore the file")
        }
        let key = statement.int64(0)
        statement.reset()
        nextKey = key
        return key
    }

    /// Saves the key counter if it moved; call it last, inside the transaction.
    func storeNextKey() throws {
        guard mintedKeys, let nextKey else { return }
        let statement = try connection.statement(StoreOpener.metaWriteSQL)
        statement.bind(1, "nextKey")
        statement.bind(2, nextKey)
        try statement.run()
    }

    func layout(_ entityName: String) throws -> EntityLayout {
        guard let layout = layouts[entityName] else {
            throw DataStoreError(
                .notFound, "the store has no entity '\(entityName)'",
                remedy: "Add the model type to this store's configuration", entityName: entityName)
        }
        return layout
    }

    // MARK: Identifiers

    /// Permanent identifiers for the inserted snapshots that need one, and the snapshots under
    /// them with every reference remapped.
    mutating func mint(
        _ inserted: [DefaultSnapshot], updated: [DefaultSnapshot]
    ) throws -> (
        inserted: [DefaultSnapshot], updated: [DefaultSnapshot], remap: [PersistentIdentifier: PersistentIdentifier]
    ) {
        // An update-only save allocates nothing here (reserving even no capacity allocates).
        guard !inserted.isEmpty else { return ([], updated, [:]) }
        var remap: [PersistentIdentifier: PersistentIdentifier] = [:]
        remap.reserveCapacity(inserted.count)
        var next = try currentNextKey()
        for snapshot in inserted {
            let id = snapshot.persistentIdentifier
            _ = try layout(id.entityName)
            if id.isTemporary || id.storeIdentifier != storeIdentifier {
                remap[id] = .identifier(for: storeIdentifier, entityName: id.entityName, primaryKey: next)
                next += 1
            } else if let key = id.primaryKey.intValue {
                if try reader.exists(key, layout: try layout(id.entityName)) {
                    throw DataStoreError(
                        .conflict, "cannot insert \(id): the store already has it", entityName: id.entityName)
                }
                if key >= next { next = key + 1 }
            }
        }
        if next != nextKey { mintedKeys = true }
        nextKey = next
        let newInserted = inserted.map { snapshot in
            snapshot.copy(
                persistentIdentifier: remap[snapshot.persistentIdentifier] ?? snapshot.persistentIdentifier,
                remappedIdentifiers: remap)
        }
        let newUpdated = updated.map {
            $0.copy(persistentIdentifier: $0.persistentIdentifier, remappedIdentifiers: remap)
        }
        return (newInserted, newUpdated, remap)
    }

    /// The error for a change to a model the store does not have.
    func missing(_ id: PersistentIdentifier) -> DataStoreError {
        DataStoreError(
            .notFound, "cannot save changes to \(id): the store does not have it",
            remedy: "Fetch the model again; another context may have deleted it", entityName: id.entityName)
    }

    func localKey(_ id: PersistentIdentifier) -> Int64? {
        id.storeIdentifier == storeIdentifier ? id.primaryKey.intValue : nil
    }

    // MARK: Rows

    /// Deletes rows and their join rows.
    func delete(_ ids: [PersistentIdentifier]) throws {
        for id in ids {
            let layout = try layout(id.entityName)
            guard let key = localKey(id) else { throw missing(id) }
            try undoLog?.record(id, key: key, layout: layout, reader: reader)
            try releaseExternalFiles(of: layout, where: " WHERE \(EntityLayout.primaryKey) = ?", [.integer(key)])
            let statement = try connection.statement("DELETE FROM \(layout.table) WHERE \(EntityLayout.primaryKey) = ?")
            statement.bind(1, key)
            try statement.run()
            if connection.changes == 0 { throw missing(id) }
            for join in layout.joinTables { try replaceTargets(of: key, in: join, with: nil) }
        }
    }

    /// Inserts rows (`update == false`) or rewrites existing ones.
    ///
    /// `stored` may hold the rows as this transaction read them before the write (as a
    /// ``RowReader`` reads them); an update then compares with them instead of reading each row
    /// again, unless the entity keeps values in external files.
    func write(
        _ snapshots: [DefaultSnapshot], update: Bool, stored: [PersistentIdentifier: DefaultSnapshot] = [:]
    ) throws {
        if let undoLog {
            // Before any change, including the unique values vacated below.
            for snapshot in snapshots {
                let id = snapshot.persistentIdentifier
                guard let key = localKey(id) else { throw missing(id) }
                try undoLog.record(id, key: key, layout: try layout(id.entityName), reader: update ? reader : nil)
            }
        }
        if update {
            // Rows whose unique values were vacated no longer hold what was read before.
            let vacated = try vacateUniqueValues(of: snapshots, stored: stored)
            for snapshot in snapshots {
                let id = snapshot.persistentIdentifier
                let layout = try layout(id.entityName)
                guard let key = localKey(id) else { throw missing(id) }
                // A row read by a `RowReader` holds external values as their bytes, not as their files' names.
                let readAsStored = folder == nil || layout.externalColumns.isEmpty
                let old = readAsStored && !vacated.contains(id) ? stored[id] : nil
                try rewrite(snapshot, key: key, layout: layout, old: old)
            }
            return
        }
        // Inserts come in runs of one entity: its layout and statement are found once per run.
        var current: (layout: EntityLayout, statement: SQLiteStatement)?
        for snapshot in snapshots {
            let id = snapshot.persistentIdentifier
            if current?.layout.entity.name != id.entityName {
                let layout = try layout(id.entityName)
                current = (layout, try connection.statement(layout.insertSQL))
            }
            let (layout, statement) = current!
            guard let key = localKey(id) else { throw missing(id) }
            statement.bind(1, key)
            var index: Int32 = 2
            for column in layout.columns {
                statement.bind(index, try value(of: snapshot, column, layout: layout))
                index += 1
            }
            try run(statement, writing: snapshot, layout: layout)
            statement.reset()
            for join in layout.joinTables {
                try replaceTargets(of: key, in: join, with: snapshot.values[join.slot], owner: id)
            }
        }
    }

    /// Inserts a chunk of new models made from values (``ModelContext/insert(_:rows:)``) under keys
    /// minted in order, binding each row's values from the chunk without building a snapshot, and
    /// returns the keys; `nil`, writing nothing, for a chunk this path does not take: an entity with
    /// relationships or values kept in external files, or a write that keeps an undo log. Those go
    /// through ``mint(_:updated:)`` and ``write(_:update:stored:)`` as snapshots.
    mutating func insertNew(_ rows: borrowing BatchRows) throws -> ClosedRange<Int64>? {
        guard rows.count > 0, undoLog == nil, let layout = layouts[rows.entity.name], layout.joinTables.isEmpty,
            folder == nil || layout.externalColumns.isEmpty, layout.columns.allSatisfy({ $0.kind != nil })
        else { return nil }
        let first = try currentNextKey()
        let statement = try connection.statement(layout.insertSQL)
        for row in 0..<rows.count {
            statement.bind(1, first + Int64(row))
            var index: Int32 = 2
            for column in layout.columns {
                statement.bind(index, try column.kind!.encode(rows[row, column.slot], optional: column.isOptional))
                index += 1
            }
            do {
                try statement.run()
            } catch let error as DataStoreError where error.code == .uniqueConstraintViolation {
                let snapshot = DefaultSnapshot(
                    persistentIdentifier: .temporary(entityName: layout.entity.name), entity: layout.entity,
                    values: rows.values(ofRow: row))
                throw uniqueViolation(error, snapshot: snapshot, layout: layout)
            }
            statement.reset()
        }
        nextKey = first + Int64(rows.count)
        mintedKeys = true
        return first...(first + Int64(rows.count) - 1)
    }

    /// Updates one row: only the columns and join tables whose values changed are written, so an
    /// unchanged indexed column costs no index maintenance. `old` is the stored row, if already read.
    private func rewrite(_ snapshot: DefaultSnapshot, key: Int64, layout: EntityLayout, old: DefaultSnapshot?) throws {
        let id = snapshot.persistentIdentifier
        guard let old = try old ?? nameReader.snapshot(key, layout: layout) else { throw missing(id) }
        var changed: [Int] = []
        var values: [SQLValue] = []
        for (position, column) in layout.columns.enumerated() {
            if column.kind == .data, case .string(let name) = old.values[column.slot] {
                // A value in an external file: unchanged if the file holds the new bytes.
                if case .data(let bytes) = snapshot.values[column.slot],
                    folder?.holds(name, bytes, sealer: try externalSealer()) == true
                {
                    continue
                }
                files.released.append(name)
            } else if Self.identical(old.values[column.slot], snapshot.values[column.slot]) {
                continue
            }
            changed.append(position)
            values.append(try value(of: snapshot, column, layout: layout))
        }
        if !changed.isEmpty {
            // Found by the columns it sets: the SQL text is written only the first time.
            let statement = try connection.statement(shape: .init(table: layout.table, columns: changed)) {
                "UPDATE \(layout.table) SET "
                    + changed.map { "\(quote(layout.columns[$0].name)) = ?" }.joined(separator: ", ")
                    + " WHERE \(EntityLayout.primaryKey) = ?"
            }
            for (offset, value) in values.enumerated() { statement.bind(Int32(offset + 1), value) }
            statement.bind(Int32(values.count + 1), key)
            try run(statement, writing: snapshot, layout: layout)
        }
        for join in layout.joinTables where old.values[join.slot] != snapshot.values[join.slot] {
            try replaceTargets(of: key, in: join, with: snapshot.values[join.slot], owner: id)
        }
    }

    private func run(_ statement: SQLiteStatement, writing snapshot: DefaultSnapshot, layout: EntityLayout) throws {
        do {
            try statement.run()
        } catch let error as DataStoreError where error.code == .uniqueConstraintViolation {
            throw uniqueViolation(error, snapshot: snapshot, layout: layout)
        }
    }

    /// Whether two values are stored the same, bit for bit: `-0.0` differs from `0.0`, and two
    /// canonically equivalent spellings of a string differ (Swift's `==` would call them equal, and
    /// the change between them would be lost). Composite values always count as changed.
    static func identical(_ a: StoreValue, _ b: StoreValue) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern || (x.isNaN && y.isNaN)
        case (.string, .string), (.url, .url): return a.isIdentical(to: b)
        case (.array, _), (.dictionary, _), (.decimal, _): return false
        default: return a == b
        }
    }

    /// Before updates that may swap unique values among themselves, clears the unique columns of
    /// the updated rows that change them, so SQLite's per-row checks see only the final values.
    /// Rows that keep their unique values as `stored` holds them (read in this transaction) are left
    /// alone: a value another row takes from one of them would clash with it at the end as well.
    /// Only two or more changing rows of an entity can swap. Returns the rows it cleared.
    private func vacateUniqueValues(
        of snapshots: [DefaultSnapshot], stored: [PersistentIdentifier: DefaultSnapshot]
    ) throws -> Set<PersistentIdentifier> {
        // One row cannot swap a value with another: nothing to clear (the common one-model save).
        guard snapshots.count > 1 else { return [] }
        var vacated: Set<PersistentIdentifier> = []
        var byEntity: [String: [(id: PersistentIdentifier, key: Int64)]] = [:]
        for snapshot in snapshots where !snapshot.entity.uniquenessConstraints.isEmpty {
            let id = snapshot.persistentIdentifier
            guard let key = localKey(id) else { continue }
            if let old = stored[id],
                snapshot.entity.uniquenessConstraints.joined().allSatisfy({ name in
                    snapshot.entity.slot(of: name).map { Self.identical(old.values[$0], snapshot.values[$0]) } ?? false
                })
            {
                continue
            }
            byEntity[snapshot.entity.name, default: []].append((id, key))
        }
        for (name, rows) in byEntity where rows.count > 1 {
            let layout = try layout(name)
            let columns = Set(layout.entity.uniquenessConstraints.joined())
            let statement = try connection.statement(
                "UPDATE \(layout.table) SET " + columns.sorted().map { "\(quote($0)) = NULL" }.joined(separator: ", ")
                    + " WHERE \(EntityLayout.primaryKey) IN (SELECT value FROM json_each(?))")
            statement.bind(1, Self.jsonArray(rows.map(\.key)))
            try statement.run()
            vacated.formUnion(rows.map(\.id))
        }
        return vacated
    }

    /// The cipher of the external files of an encrypted database (`nil` for a plaintext one), read
    /// or made once per write.
    private func externalSealer() throws -> AES256GCM? {
        if let known = files.sealer { return known }
        let sealer = try connection.externalFileCipher(creating: true)
        files.sealer = .some(sealer)
        return sealer
    }

    /// The SQL value of a column of a snapshot.
    func value(of snapshot: DefaultSnapshot, _ column: EntityLayout.Column, layout: EntityLayout) throws -> SQLValue {
        let value = snapshot.values[column.slot]
        if column.isExternal, let folder, case .data(let bytes) = value, ExternalValueFolder.isExternal(bytes) {
            return .text(try folder.store(bytes, changes: files, sealer: try externalSealer()))
        }
        if let kind = column.kind { return try kind.encode(value, optional: column.isOptional) }
        switch value {
        case .null: return .null
        case .reference(let target):
            return .integer(try targetKey(target, owner: snapshot.persistentIdentifier, property: column.name))
        default:
            throw DataStoreError(
                .invalidValue, "'\(layout.entity.name).\(column.name)' holds a \(value.kindName), not a reference",
                entityName: layout.entity.name, propertyNames: [column.name])
        }
    }

    private func targetKey(_ target: PersistentIdentifier, owner: PersistentIdentifier, property: String) throws
        -> Int64
    {
        if target.isTemporary {
            throw DataStoreError(
                .notFound,
                "\(owner) refers through '\(owner.entityName).\(property)' to a new model that the save does "
                    + "not insert",
                remedy: "Insert the related model into the context before saving", entityName: owner.entityName,
                propertyNames: [property])
        }
        guard let key = localKey(target) else {
            throw DataStoreError(
                .unsupportedFeature,
                "\(owner) refers through '\(owner.entityName).\(property)' to \(target), a model of another store",
                remedy: "Keep related models in the same SQLite store", entityName: owner.entityName,
                propertyNames: [property])
        }
        return key
    }

    /// Replaces the join rows of one owner (`nil`: removes them).
    private func replaceTargets(
        of key: Int64, in join: EntityLayout.JoinTable, with value: StoreValue?, owner: PersistentIdentifier? = nil
    ) throws {
        let clear = try connection.statement("DELETE FROM \(join.table) WHERE owner = ?")
        clear.bind(1, key)
        try clear.run()
        guard let value, let owner else { return }
        let targets = value.referencedIdentifiers
        guard !targets.isEmpty else { return }
        let insert = try connection.statement("INSERT INTO \(join.table) (owner, position, target) VALUES (?, ?, ?)")
        for (position, target) in targets.enumerated() {
            insert.reset()
            insert.bind(1, key)
            insert.bind(2, Int64(position))
            insert.bind(3, try targetKey(target, owner: owner, property: join.name))
            try insert.run()
        }
    }

    private func uniqueViolation(_ error: DataStoreError, snapshot: DefaultSnapshot, layout: EntityLayout)
        -> DataStoreError
    {
        let names = layout.constraint(inMessage: error.message) ?? layout.entity.uniquenessConstraints.first ?? []
        return DataStoreError(
            .uniqueConstraintViolation,
            "another '\(layout.entity.name)' already has the same " + names.map { "'\($0)'" }.joined(separator: ", "),
            remedy: "Change the value, or fetch and update the existing model instead of inserting one",
            entityName: layout.entity.name, propertyNames: names,
            conflictingValues: names.compactMap { snapshot[$0] }, underlyingError: error)
    }

    // MARK: Referential integrity

    /// Clears references to models that no longer exist: those deleted here, and any that the
    /// changed snapshots name but the store does not have. Returns the rewritten snapshots.
    func clearDanglingReferences(
        changed: [DefaultSnapshot], deleted: [PersistentIdentifier]
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        var deletedKeys: [String: [Int64]] = [:]
        for id in deleted { if let key = localKey(id) { deletedKeys[id.entityName, default: []].append(key) } }
        return try clearDanglingReferences(changed: changed, deletedKeys: deletedKeys)
    }

    /// ``clearDanglingReferences(changed:deleted:)`` with the deleted rows' keys by entity name.
    func clearDanglingReferences(
        changed: [DefaultSnapshot], deletedKeys: [String: [Int64]]
    ) throws -> [PersistentIdentifier: DefaultSnapshot] {
        var owners: Set<PersistentIdentifier> = []
        for (entityName, keys) in deletedKeys where isReferenced(entityName) {
            try clearReferences(to: entityName, keys: keys, owners: &owners)
        }
        // The changed rows are stored (written by this write), so a reference to one of them needs
        // no look-up; the other targets are looked up once each, a batch per entity.
        var written: [String: Set<Int64>]?
        var unknown: [String: Set<Int64>] = [:]
        for snapshot in changed {
            for relationship in snapshot.entity.relationships {
                for target in snapshot.values[relationship.slot].referencedIdentifiers {
                    guard let key = localKey(target), layouts[target.entityName] != nil else { continue }
                    if written == nil {
                        var keys: [String: Set<Int64>] = [:]
                        for row in changed {
                            if let rowKey = localKey(row.persistentIdentifier) {
                                keys[row.persistentIdentifier.entityName, default: []].insert(rowKey)
                            }
                        }
                        written = keys
                    }
                    guard written?[target.entityName]?.contains(key) != true else { continue }
                    unknown[target.entityName, default: []].insert(key)
                }
            }
        }
        var missing: [String: Set<Int64>] = [:]
        for (entityName, keys) in unknown {
            guard let layout = layouts[entityName] else { continue }
            let absent = try absentKeys(keys, layout: layout)
            if !absent.isEmpty { missing[entityName] = absent }
        }
        for (entityName, keys) in missing {
            try clearReferences(to: entityName, keys: Array(keys), owners: &owners)
        }
        var repaired: [PersistentIdentifier: DefaultSnapshot] = [:]
        for owner in owners {
            guard let key = localKey(owner), let layout = layouts[owner.entityName],
                let snapshot = try reader.snapshot(key, layout: layout)
            else { continue }
            repaired[owner] = snapshot
        }
        return repaired
    }

    /// Which of `keys` the entity's table lacks: a look-up per key for a few, else one statement
    /// for all of them.
    private func absentKeys(_ keys: Set<Int64>, layout: EntityLayout) throws -> Set<Int64> {
        if keys.count <= 4 {
            return try keys.filter { try !reader.exists($0, layout: layout) }
        }
        let lookup = try connection.statement(
            "SELECT \(EntityLayout.primaryKey) FROM \(layout.table) WHERE \(EntityLayout.primaryKey) IN "
                + "(SELECT value FROM json_each(?))")
        defer { lookup.reset() }
        lookup.bind(1, Self.jsonArray(Array(keys)))
        var absent = keys
        while try lookup.step() { absent.remove(lookup.int64(0)) }
        return absent
    }

    /// Whether any to-one column or join table of the store can refer to the entity's rows.
    func isReferenced(_ entityName: String) -> Bool {
        layouts.values.contains { layout in
            layout.columns.contains { $0.destination == entityName }
                || layout.joinTables.contains { $0.destination == entityName }
        }
    }

    private func clearReferences(to entityName: String, keys: [Int64], owners: inout Set<PersistentIdentifier>) throws {
        let list = Self.jsonArray(keys)
        for layout in layouts.values {
            for column in layout.columns where column.destination == entityName {
                let condition = "\(quote(column.name)) IN (SELECT value FROM json_each(?))"
                let select = try connection.statement(
                    "SELECT \(EntityLayout.primaryKey) FROM \(layout.table) WHERE \(condition)")
                select.bind(1, list)
                var found: [Int64] = []
                while try select.step() { found.append(select.int64(0)) }
                try noteOwners(found, layout: layout, in: &owners)
                let update = try connection.statement(
                    "UPDATE \(layout.table) SET \(quote(column.name)) = NULL WHERE \(condition)")
                update.bind(1, list)
                try update.run()
            }
            for join in layout.joinTables where join.destination == entityName {
                let condition = "target IN (SELECT value FROM json_each(?))"
                let select = try connection.statement("SELECT DISTINCT owner FROM \(join.table) WHERE \(condition)")
                select.bind(1, list)
                var found: [Int64] = []
                while try select.step() { found.append(select.int64(0)) }
                try noteOwners(found, layout: layout, in: &owners)
                let delete = try connection.statement("DELETE FROM \(join.table) WHERE \(condition)")
                delete.bind(1, list)
                try delete.run()
            }
        }
    }

    /// Adds rows whose references are about to be cleared to `owners`, keeping their states for
    /// the undo log first.
    private func noteOwners(_ keys: [Int64], layout: EntityLayout, in owners: inout Set<PersistentIdentifier>) throws {
        for key in keys {
            let id = reader.identifier(layout.entity.name, key)
            try undoLog?.record(id, key: key, layout: layout, reader: reader)
            owners.insert(id)
        }
    }

    /// Which of a batch's keys an entity's table holds.
    struct ExistingKeys {
        /// How many of the keys (counted once each) the table holds.
        let count: Int
        /// Whether the keys name every row of the table, and it has one.
        let isEveryRow: Bool
        /// The keys the table lacks.
        let missing: Set<Int64>

        /// Whether the table holds `key`, one of the keys asked about.
        func contains(_ key: Int64) -> Bool { !missing.contains(key) }
    }

    /// Which of `keys` the table holds, and whether they are every row it holds: one scan of the
    /// keys when the list is a large part of the table, else one lookup per key in SQL.
    ///
    /// Keys in ascending order (as a fetch of identifiers returns them) are matched against the
    /// scan, which reads the keys in the same order, without hashing any.
    func existingKeys(_ keys: [Int64], layout: EntityLayout) throws -> ExistingKeys {
        let total = try connection.statement("SELECT count(*) FROM \(layout.table)")
        try total.step()
        let rows = Int(total.int64(0))
        total.reset()
        let ascending = zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }
        if keys.count * 8 >= rows && ascending {
            // In key order: without `ORDER BY`, SQLite may read the keys from a smaller index, in its order.
            let scan = try connection.statement(
                "SELECT \(EntityLayout.primaryKey) FROM \(layout.table) ORDER BY \(EntityLayout.primaryKey)")
            defer { scan.reset() }
            var next = 0
            var count = 0
            var missing = Set<Int64>()
            while next < keys.count, try scan.step() {
                let key = scan.int64(0)
                while next < keys.count && keys[next] < key {
                    missing.insert(keys[next])
                    next += 1
                }
                if next < keys.count && keys[next] == key {
                    count += 1
                    next += 1
                }
            }
            missing.formUnion(keys[next...])
            return ExistingKeys(count: count, isEveryRow: rows > 0 && count == rows, missing: missing)
        }
        var found = Set<Int64>(minimumCapacity: min(keys.count, rows))
        if keys.count * 8 >= rows {
            let wanted = Set(keys)
            let scan = try connection.statement("SELECT \(EntityLayout.primaryKey) FROM \(layout.table)")
            defer { scan.reset() }
            while try scan.step() {
                let key = scan.int64(0)
                if wanted.contains(key) { found.insert(key) }
            }
        } else {
            let lookup = try connection.statement(
                "SELECT \(EntityLayout.primaryKey) FROM \(layout.table) WHERE \(EntityLayout.primaryKey) IN "
                    + "(SELECT value FROM json_each(?))")
            defer { lookup.reset() }
            lookup.bind(1, Self.jsonArray(keys))
            while try lookup.step() { found.insert(lookup.int64(0)) }
        }
        return ExistingKeys(
            count: found.count, isEveryRow: rows > 0 && found.count == rows, missing: Set(keys).subtracting(found))
    }

    /// The keys of every row of an entity's table, as ``keys(of:)`` reads them.
    struct TableKeys {
        /// The keys from the smallest to the largest, when the table holds exactly that run of keys.
        let range: ClosedRange<Int64>?
        /// The keys, in no particular order, when they are not one run (empty for a run).
        let list: [Int64]

        /// How many rows the table holds.
        var count: Int { range?.count ?? list.count }

        /// Every key as an array (a run is written out only here).
        var array: [Int64] { range.map { Array($0) } ?? list }
    }

    /// Every key the entity's table holds.
    ///
    /// Keys minted in a run (a table filled and never thinned) are one range: when the table's
    /// count equals the span from its smallest to its largest key, the keys are that range, found
    /// with two steps down the table's b-tree and a count of its pages' cells, without reading a
    /// row or writing out a key. Otherwise SQLite reads them from whichever of the table's b-trees
    /// is smallest.
    func keys(of layout: EntityLayout) throws -> TableKeys {
        let key = EntityLayout.primaryKey
        let bounds = try connection.statement(
            "SELECT (SELECT min(\(key)) FROM \(layout.table)), (SELECT max(\(key)) FROM \(layout.table)), "
                + "(SELECT count(*) FROM \(layout.table))")
        try bounds.step()
        let (low, high, count) = (bounds.int64(0), bounds.int64(1), bounds.int64(2))
        bounds.reset()
        guard count > 0 else { return TableKeys(range: nil, list: []) }
        if high.subtractingReportingOverflow(low) == (count - 1, false) {
            return TableKeys(range: low...high, list: [])
        }
        let statement = try connection.statement("SELECT \(key) FROM \(layout.table)")
        defer { statement.reset() }
        var keys: [Int64] = []
        keys.reserveCapacity(Int(count))
        while try statement.step() { keys.append(statement.int64(0)) }
        return TableKeys(range: nil, list: keys)
    }

    func countsEveryRow(_ list: String, layout: EntityLayout) throws -> Bool {
        let total = try connection.statement("SELECT count(*) FROM \(layout.table)")
        try total.step()
        let rows = total.int64(0)
        total.reset()
        let named = try connection.statement(
            "SELECT count(*) FROM \(layout.table) WHERE \(EntityLayout.primaryKey) IN (SELECT value FROM json_each(?))")
        named.bind(1, list)
        try named.step()
        let found = named.int64(0)
        named.reset()
        return rows > 0 && found == rows
    }

    /// `[1,2,3]`: keys for `IN (SELECT value FROM json_each(?))`, one parameter however many.
    static func jsonArray(_ keys: some Sequence<Int64>) -> String {
        // Digits written straight into one buffer: a string per key costs ten times as much.
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(keys.underestimatedCount * 8 + 2)
        for key in keys {
            if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
            appendDecimal(key, to: &bytes)
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `value` in decimal (a leading `-` when negative), as `String(value)` writes it.
    static func appendDecimal(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // Digits from the last, then turned around in place.
        let start = bytes.count
        var rest = value.magnitude
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        bytes[start...].reverse()
    }
}
