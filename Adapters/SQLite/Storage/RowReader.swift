import CModelStoreSQLiteRows
import CSQLite
import Foundation
import ModelStore

/// Reads rows into snapshots: typed column reads by the attribute's ``ColumnKind``, to-one keys
/// into identifiers, and to-many relationships from their join tables in order.
struct RowReader {
    let connection: SQLiteConnection
    let storeIdentifier: String
    /// Whether a value kept in an external file is read as its file's name (`.string`), for a
    /// writer that compares it, instead of as the file's bytes.
    var readsExternalNames = false

    /// The snapshot of the row with this key, or `nil` if there is none.
    func snapshot(_ key: Int64, layout: EntityLayout) throws -> DefaultSnapshot? {
        let statement = try connection.statement(layout.selectByKeySQL)
        defer { statement.reset() }
        statement.bind(1, key)
        guard try statement.step() else { return nil }
        return try read(statement, layout: layout)
    }

    /// Whether the row with this key holds exactly `expected` (every property's value, in slot
    /// order) as the store writes it, bit for bit, with a checksum that matches; `nil` when the
    /// table has no such row. Only for a layout that ``EntityLayout/comparesRowsInPlace``.
    ///
    /// Nothing is decoded or allocated: each column is compared with the value's stored form. Since
    /// reading a stored form back gives the value it was written from, `true` means that
    /// ``snapshot(_:layout:)`` would read a row identical to `expected`. `false` says only that this
    /// comparison could not show it (a value differs, is `NaN`, or is of a case other than the
    /// column's kind, or the row is damaged): the caller then reads the row whole, which reports
    /// damage and differences as it always does.
    func holds(_ key: Int64, layout: EntityLayout, exactly expected: [StoreValue]) throws -> Bool? {
        let statement = try connection.statement(layout.selectByKeySQL)
        defer { statement.reset() }
        statement.bind(1, key)
        guard try statement.step() else { return nil }
        guard expected.count == layout.entity.properties.count else { return false }
        let count = Int(layout.checksumIndex)
        return withUnsafeTemporaryAllocation(of: modelstore_sqlite_column.self, capacity: count + 1) { buffer in
            let columns = buffer.baseAddress!
            guard RowChecksum.read(statement, columns: layout.checksumIndex, into: columns) else { return false }
            return layout.columns.withUnsafeBufferPointer { layoutColumns in
                for offset in layoutColumns.indices {
                    let stored = columns[offset + 1]
                    let same: Bool
                    switch (layoutColumns[offset].kind, expected[layoutColumns[offset].slot]) {
                    case (_, .null): same = layoutColumns[offset].isOptional && stored.type == SQLITE_NULL
                    case (.bool, .bool(let value)):
                        same = stored.type == SQLITE_INTEGER && stored.integer == (value ? 1 : 0)
                    case (.int, .int(let value)): same = stored.type == SQLITE_INTEGER && stored.integer == value
                    case (.uint64, .uint(let value)):
                        same = stored.type == SQLITE_INTEGER && stored.integer == Int64(bitPattern: value)
                    case (.double, .double(let value)):
                        same = !value.isNaN && stored.type == SQLITE_FLOAT && stored.real.bitPattern == value.bitPattern
                    case (.date, .date(let value)):
                        same =
                            stored.type == SQLITE_FLOAT
                            && stored.real.bitPattern == value.timeIntervalSinceReferenceDate.bitPattern
                    case (.string, .string(var value)):
                        same = stored.type == SQLITE_TEXT && value.withUTF8 { Self.same(stored, $0) }
                    case (.uuid, .uuid(let value)):
                        var text = value.uuidString
                        same = stored.type == SQLITE_TEXT && text.withUTF8 { Self.same(stored, $0) }
                    default: same = false
                    }
                    if !same { return false }
                }
                return true
            }
        }
    }

    /// Whether a column read holds exactly these bytes.
    private static func same(_ stored: modelstore_sqlite_column, _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard Int(stored.length) == bytes.count else { return false }
        guard let first = stored.bytes, let second = bytes.baseAddress, bytes.count > 0 else { return true }
        return memcmp(first, second, bytes.count) == 0
    }

    /// Whether the entity has a row with this key.
    func exists(_ key: Int64, layout: EntityLayout) throws -> Bool {
        let statement = try connection.statement("SELECT 1 FROM \(layout.table) WHERE \(EntityLayout.primaryKey) = ?")
        statement.bind(1, key)
        let found = try statement.step()
        statement.reset()
        return found
    }

    /// The snapshot of the current row of a statement that selects ``EntityLayout/selectList``.
    ///
    /// With `decoding`, attributes whose slot it lacks are not decoded (nor their external files
    /// read) and hold their default values; relationships are always read. The whole row's checksum
    /// is checked either way. With `scope` (the store's and the layout's entity's), the row's
    /// identifier is made in it, without looking the scope up by their names.
    func read(
        _ statement: SQLiteStatement, layout: EntityLayout, decoding: Set<Int>? = nil,
        scope: PersistentIdentifier.Scope? = nil
    ) throws -> DefaultSnapshot {
        let count = Int(layout.checksumIndex)
        return try withUnsafeTemporaryAllocation(of: modelstore_sqlite_column.self, capacity: count + 1) { buffer in
            let columns = buffer.baseAddress!
            let matches = RowChecksum.read(statement, columns: layout.checksumIndex, into: columns)
            return try read(statement, columns, matches: matches, layout: layout, decoding: decoding, scope: scope)
        }
    }

    /// ``read(_:layout:decoding:scope:)`` over the row's columns as SQLite gave them (the key first,
    /// then ``EntityLayout/columns`` in order), whose checksum did or did not match.
    private func read(
        _ statement: SQLiteStatement, _ columns: UnsafeMutablePointer<modelstore_sqlite_column>, matches: Bool,
        layout: EntityLayout, decoding: Set<Int>?, scope: PersistentIdentifier.Scope?
    ) throws -> DefaultSnapshot {
        let entity = layout.entity
        let key = columns[0].type == SQLITE_INTEGER ? columns[0].integer : statement.int64(0)
        guard matches else {
            throw SQLiteDamage(file: connection.path, table: entity.name, row: key).error(entityName: entity.name)
        }
        // Reserved and appended: `Array(repeating:count:)` allocates through the standard library's
        // unspecialized buffer initializer, which looks the storage's generic metadata up at run time
        // on every call.
        var values: [StoreValue] = []
        values.reserveCapacity(entity.properties.count)
        for _ in 0..<entity.properties.count { values.append(.null) }
        // Through the buffer, so that each column's fields are read in place: binding a `Column` copies
        // it, retaining and releasing its strings, for every column of every row.
        try layout.columns.withUnsafeBufferPointer { layoutColumns in
            for offset in layoutColumns.indices {
                let index = Int32(offset + 1)
                let stored = columns[offset + 1]
                let slot = layoutColumns[offset].slot
                let kind = layoutColumns[offset].kind
                if let decoding, kind != nil, !decoding.contains(slot) {
                    values[slot] = layout.defaultValues[slot]
                } else if kind == .data, stored.type == SQLITE_TEXT {
                    // Text in a data column: the name of an external file.
                    let name = ColumnKind.text(stored)
                    values[slot] =
                        readsExternalNames
                        ? .string(name) : .data(try external(name, key, layoutColumns[offset], entity))
                } else if let kind {
                    let optional = layoutColumns[offset].isOptional
                    do {
                        values[slot] =
                            try kind.decode(stored, optional: optional)
                            ?? kind.decode(statement, index, optional: optional)
                    } catch {
                        let name = layoutColumns[offset].name
                        throw DataStoreError(
                            .corrupted,
                            "the stored value of '\(entity.name).\(name)' of row \(key) in the SQLite store "
                                + "'\(connection.path)' cannot be read",
                            remedy: "Repair or restore the file", entityName: entity.name, propertyNames: [name],
                            underlyingError: error)
                    }
                } else if stored.type != SQLITE_NULL {
                    let target = stored.type == SQLITE_INTEGER ? stored.integer : statement.int64(index)
                    values[slot] = .reference(identifier(layoutColumns[offset].destination!, target))
                }
            }
        }
        for join in layout.joinTables {
            values[join.slot] = .references(try targets(of: key, in: join))
        }
        return DefaultSnapshot(
            persistentIdentifier: scope?.identifier(key) ?? identifier(entity.name, key), entity: entity,
            values: values)
    }

    /// The bytes of the external file `name` of a row's column.
    private func external(_ name: String, _ key: Int64, _ column: EntityLayout.Column, _ entity: Schema.Entity) throws
        -> Data
    {
        let owner = { "'\(entity.name).\(column.name)' of row \(key) in the SQLite store '\(connection.path)'" }
        guard let folder = connection.externalValues else {
            throw DataStoreError(
                .corrupted, "\(owner()) names an external file, but an in-memory database has none",
                remedy: "Set the property to another value", entityName: entity.name, propertyNames: [column.name])
        }
        return try folder.load(name, owner: owner(), sealer: try connection.externalFileCipher(creating: false))
    }

    /// The related models of one owner through a join table, in order.
    func targets(of owner: Int64, in join: EntityLayout.JoinTable) throws -> [PersistentIdentifier] {
        let statement = try connection.statement(
            "SELECT \(EntityLayout.joinColumns), \(RowChecksum.column) FROM \(join.table) WHERE owner = ? "
                + "ORDER BY position")
        statement.bind(1, owner)
        var targets: [PersistentIdentifier] = []
        while try statement.step() {
            guard RowChecksum.matches(statement, columns: 3) else {
                throw SQLiteDamage(
                    file: connection.path, table: join.table, row: owner, position: statement.int64(1)
                ).error(entityName: nil)
            }
            targets.append(identifier(join.destination, statement.int64(2)))
        }
        return targets
    }

    func identifier(_ entityName: String, _ key: Int64) -> PersistentIdentifier {
        .identifier(for: storeIdentifier, entityName: entityName, primaryKey: key)
    }
}
