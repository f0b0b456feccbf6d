import Foundation
import ModelStore
import PostgresNIO

/// Reads rows into snapshots: typed cells by the attribute's ``ColumnType``, to-one keys into
/// identifiers, to-many relationships from their join tables in order, and each row's version.
struct RowReader: Sendable {
    let session: Session
    let storeIdentifier: String
    let url: String

    /// A snapshot and the version of the row it was read from.
    struct Versioned: Sendable {
        var snapshot: DefaultSnapshot
        var version: Int64
    }

    /// The rows of `layout`'s table that a query selects (`SELECT <selectList> FROM table t …`),
    /// with their to-many relationships, in the query's order.
    ///
    /// With `attributes` (slots), only those attributes are selected, and every relationship; the
    /// other attributes hold their default values.
    func rows(
        _ layout: TableLayout, where clause: String = "", _ binds: PostgresBindings = PostgresBindings(),
        reading attributes: Set<Int>? = nil
    ) async throws -> [Versioned] {
        let columns = layout.columns(reading: attributes)
        let list = attributes == nil ? layout.selectList : TableLayout.selectList(of: columns, alias: "t")
        // Kept prepared: the clause holds no values (see `PreparedStatements`).
        let rows = try await session.query(prepared: "SELECT \(list) FROM \(layout.table) t " + clause, binds)
        var result: [Versioned] = []
        result.reserveCapacity(rows.count)
        for row in rows { result.append(try read(row, layout: layout, columns: columns)) }
        if !layout.joinTables.isEmpty && !result.isEmpty { try await loadToMany(&result, layout: layout) }
        return result
    }

    /// The rows with these keys, by key.
    func rows(_ layout: TableLayout, keys: [Int64]) async throws -> [Int64: Versioned] {
        guard !keys.isEmpty else { return [:] }
        var binds = PostgresBindings()
        binds.append(keys)
        var result: [Int64: Versioned] = [:]
        for row in try await rows(layout, where: "WHERE t.\(TableLayout.key) = ANY($1)", binds) {
            result[row.snapshot.persistentIdentifier.primaryKey.intValue ?? 0] = row
        }
        return result
    }

    /// The keys among these that have rows.
    func existing(_ layout: TableLayout, keys: [Int64]) async throws -> Set<Int64> {
        guard !keys.isEmpty else { return [] }
        var binds = PostgresBindings()
        binds.append(keys)
        var found: Set<Int64> = []
        for row in try await session.query(
            "SELECT \(TableLayout.key) FROM \(layout.table) WHERE \(TableLayout.key) = ANY($1)", binds)
        {
            found.insert(try row.decode(Int64.self))
        }
        return found
    }

    /// The snapshot in a row's first cells, in the order of ``TableLayout/selectList`` (to-many
    /// relationships empty: ``rows(_:where:_:reading:)`` loads them), or of `columns` when the
    /// row holds only those (the other attributes then hold their default values).
    func read(_ row: PostgresRow, layout: TableLayout, columns: [TableLayout.Column]? = nil) throws -> Versioned {
        let entity = layout.entity
        let cells = row.makeRandomAccess()
        let key = try cells[0].decode(Int64.self)
        let version = try cells[1].decode(Int64.self)
        var values = layout.defaultValues
        for (offset, column) in (columns ?? layout.columns).enumerated() {
            let cell = cells[offset + 2]
            if let type = column.type {
                do {
                    values[column.slot] = try type.decode(cell)
                } catch {
                    throw DataStoreError(
                        .corrupted,
                        "the stored value of '\(entity.name).\(column.name)' of row \(key) in the PostgreSQL store "
                            + "'\(url)' cannot be read",
                        remedy: "Check the column's type; another program may have written it",
                        entityName: entity.name, propertyNames: [column.name], underlyingError: error)
                }
            } else if cell.bytes != nil {
                values[column.slot] = .reference(identifier(column.destination!, try cell.decode(Int64.self)))
            }
        }
        for join in layout.joinTables { values[join.slot] = .references([]) }
        return Versioned(
            snapshot: DefaultSnapshot(
                persistentIdentifier: identifier(entity.name, key), entity: entity, values: values),
            version: version)
    }

    /// Fills in the to-many relationships of `rows`, one query per join table.
    private func loadToMany(_ rows: inout [Versioned], layout: TableLayout) async throws {
        let keys = rows.map { $0.snapshot.persistentIdentifier.primaryKey.intValue ?? 0 }
        let positions = Dictionary(keys.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        for join in layout.joinTables {
            var binds = PostgresBindings()
            binds.append(keys)
            var targets: [Int64: [PersistentIdentifier]] = [:]
            for row in try await session.query(
                "SELECT owner, target FROM \(join.table) WHERE owner = ANY($1) ORDER BY owner, position", binds)
            {
                let (owner, target) = try row.decode((Int64, Int64).self)
                targets[owner, default: []].append(identifier(join.destination, target))
            }
            for (owner, list) in targets {
                guard let index = positions[owner] else { continue }
                rows[index].snapshot.values[join.slot] = .references(list)
            }
        }
    }

    func identifier(_ entityName: String, _ key: Int64) -> PersistentIdentifier {
        .identifier(for: storeIdentifier, entityName: entityName, primaryKey: key)
    }
}
