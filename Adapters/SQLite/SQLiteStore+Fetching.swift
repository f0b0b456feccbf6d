import Foundation
import ModelStore
import ModelStoreAdapterKit

extension SQLiteStore {
    /// Fetches by the request's query (or, without one, every model of the entity) in SQL, reading
    /// only the rows it returns when SQL can run the whole query.
    ///
    /// When SQL runs the whole query, a query's ``StoreQuery/propertiesToFetch`` is honoured: each
    /// row is still read whole (to check its checksum), but only those attributes are decoded and
    /// no external file of another attribute is read; the result says so
    /// (``DataStoreFetchResult/omitsUnrequestedProperties``).
    public func fetch<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        let query = request.query ?? StoreQuery(entityName: Schema.entityName(for: T.self))
        let (snapshots, partial) = try database.withLock { connection -> ([DefaultSnapshot], Bool) in
            let prepared = try connection.queries.prepare(query, layouts: layouts, storeIdentifier: identifier)
            let plan = prepared.plan
            // Only the requested attributes when nothing in Swift reads the others.
            let decoded = plan.isComplete ? query.propertiesToFetch.map { plan.layout.slots(of: $0) } : nil
            // One statement reads one state of the file by itself; a fetch that also reads join
            // tables or related rows takes a read transaction, so every statement sees the same state.
            if plan.residual == nil && plan.layout.joinTables.isEmpty {
                return (
                    try self.snapshots(for: query, prepared: prepared, connection: connection, decoding: decoded),
                    decoded != nil
                )
            }
            return (
                try connection.readTransaction {
                    try self.snapshots(for: query, prepared: prepared, connection: connection, decoding: decoded)
                }, decoded != nil
            )
        }
        var result = DataStoreFetchResult(
            descriptor: request.descriptor, fetchedSnapshots: snapshots, relatedSnapshots: Self.noRelatedSnapshots)
        result.omitsUnrequestedProperties = partial
        return result
    }

    /// The related snapshots of every fetch (the store loads none along): one empty dictionary,
    /// instead of the parameter's default, which makes an empty one of a generic type on each call.
    private static let noRelatedSnapshots: [PersistentIdentifier: DefaultSnapshot] = [:]

    /// Counts in SQL (`COUNT(*)`) when SQL runs the whole query.
    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        let query = request.query ?? StoreQuery(entityName: Schema.entityName(for: T.self))
        return try database.withLock { connection in
            let prepared = try connection.queries.prepare(query, layouts: layouts, storeIdentifier: identifier)
            let plan = prepared.plan
            guard plan.isComplete else {
                return try connection.readTransaction {
                    try snapshots(for: query, prepared: prepared, connection: connection).count
                }
            }
            // One statement: it reads one state of the file without a transaction around it.
            let statement =
                try prepared.compiled.map { try connection.statement($0.count) }
                ?? connection.statement("SELECT count(*) \(plan.from)")
            statement.bind(prepared.values)
            try statement.step()
            let total = Int(statement.int64(0))
            statement.reset()
            let afterOffset = max(0, total - max(query.offset, 0))
            return query.limit.map { min(max($0, 0), afterOffset) } ?? afterOffset
        }
    }

    /// Selects only the keys in SQL when SQL runs the whole query.
    public func fetchIdentifiers<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) throws -> [PersistentIdentifier] {
        let query = request.query ?? StoreQuery(entityName: Schema.entityName(for: T.self))
        return try database.withLock { connection in
            let prepared = try connection.queries.prepare(query, layouts: layouts, storeIdentifier: identifier)
            let plan = prepared.plan
            guard plan.isComplete else {
                return try connection.readTransaction {
                    try snapshots(for: query, prepared: prepared, connection: connection).map(\.persistentIdentifier)
                }
            }
            // One statement: it reads one state of the file without a transaction around it.
            let statement =
                try prepared.compiled.map { try connection.statement($0.keys) }
                ?? connection.statement(
                    plan.selectSQL(columns: "\(SQLiteQueryPlan.alias).\(EntityLayout.primaryKey)"))
            defer { statement.reset() }
            plan.bindSelectValues(prepared.values, query: query, to: statement)
            var ids: [PersistentIdentifier] = []
            while try statement.step() {
                ids.append(.identifier(for: identifier, entityName: query.entityName, primaryKey: statement.int64(0)))
            }
            return ids
        }
    }

    /// The access path SQLite chose for a query, from `EXPLAIN QUERY PLAN`: a scan, the primary
    /// key, a unique index, an index searched by equality or by range, or an index read in sort order.
    public func accessPath(for query: StoreQuery) -> StoreAccessPath? {
        guard let lines = try? queryPlan(for: query) else { return nil }
        return AccessPathReader(layout: layouts[query.entityName]).read(lines)
    }

    /// SQLite's `EXPLAIN QUERY PLAN` for a query, one line per step, as the `sqlite3` shell prints
    /// it: what `explain` shows to say which index SQLite uses.
    public func queryPlan(for query: StoreQuery) throws -> [String] {
        try database.withLock { connection in
            let plan = try SQLiteQueryPlan(query, layouts: layouts, storeIdentifier: identifier)
            let statement = try connection.prepare("EXPLAIN QUERY PLAN " + plan.selectSQL(columns: plan.rowColumns))
            plan.bindSelectValues(plan.translatedValues, query: query, to: statement)
            var lines: [String] = []
            while try statement.step() { lines.append(statement.text(3)) }
            if plan.residual != nil { lines.append("then evaluated by the store: \(plan.residual!)") }
            if plan.sortsInSwift { lines.append("then sorted by the store") }
            return lines
        }
    }

    /// The snapshots a query selects: SQL's rows, the residual filter, a Swift sort if need be, the window.
    ///
    /// With `decoding`, only those attribute slots are decoded (see ``RowReader/read(_:layout:decoding:)``).
    func snapshots(
        for query: StoreQuery, prepared: SQLitePreparedQuery, connection: SQLiteConnection, decoding: Set<Int>? = nil
    ) throws -> [DefaultSnapshot] {
        let plan = prepared.plan
        let reader = RowReader(connection: connection, storeIdentifier: identifier)
        let evaluator = try plan.residual.map { filter in
            let resolver = RelatedRowResolver(reader: reader, layouts: layouts)
            return try SnapshotEvaluator(
                filter: filter, entity: plan.layout.entity, schema: schema, resolve: { resolver.snapshot($0) })
        }
        let statement =
            try prepared.compiled.map { try connection.statement($0.rows) }
            ?? connection.statement(plan.selectSQL(columns: plan.rowColumns))
        // Reset however the loop ends, so no statement keeps the read transaction open.
        defer { statement.reset() }
        plan.bindSelectValues(prepared.values, query: query, to: statement)
        // With a residual filter but an SQL sort, stop once the window is full.
        let wanted = plan.sortsInSwift ? nil : query.limit.map { $0 + max(query.offset, 0) }
        // Every row's identifier is of one scope: looked up once, not once a row.
        let scope = PersistentIdentifier.Scope(storeIdentifier: identifier, entityName: plan.layout.entity.name)
        var result: [DefaultSnapshot] = []
        while try statement.step() {
            let snapshot = try reader.read(statement, layout: plan.layout, decoding: decoding, scope: scope)
            if let evaluator, !evaluator.matches(snapshot) { continue }
            result.append(snapshot)
            if plan.residual != nil, let wanted, result.count >= wanted { break }
        }
        if plan.isComplete { return result }
        if plan.sortsInSwift { try SnapshotEvaluator.sort(&result, by: query.sort, entity: plan.layout.entity) }
        return SnapshotEvaluator.window(result, offset: query.offset, limit: query.limit)
    }
}

/// Reads related rows for the part of a filter the store evaluates itself.
///
/// Safety: it is used only inside one fetch, under the store's lock, on the thread that holds it;
/// `SnapshotEvaluator` requires a `@Sendable` resolver but calls it synchronously.
struct RelatedRowResolver: @unchecked Sendable {
    let reader: RowReader
    let layouts: [String: EntityLayout]

    func snapshot(_ id: PersistentIdentifier) -> DefaultSnapshot? {
        guard id.storeIdentifier == reader.storeIdentifier, let key = id.primaryKey.intValue,
            let layout = layouts[id.entityName]
        else { return nil }
        return try? reader.snapshot(key, layout: layout)
    }
}

/// Maps SQLite's `EXPLAIN QUERY PLAN` lines to a ``StoreAccessPath``.
struct AccessPathReader {
    let layout: EntityLayout?

    func read(_ lines: [String]) -> StoreAccessPath {
        guard let line = lines.first(where: { $0.contains(" t0") || $0.hasPrefix("SEARCH") || $0.hasPrefix("SCAN") })
        else { return StoreAccessPath(kind: .scan) }
        if line.contains("INTEGER PRIMARY KEY") { return StoreAccessPath(kind: .identifiers) }
        guard let indexName = indexName(in: line) else { return StoreAccessPath(kind: .scan) }
        let properties = properties(ofIndex: indexName)
        if line.hasPrefix("SCAN") { return StoreAccessPath(kind: .orderedIndexSort, properties: properties) }
        if line.contains(">") || line.contains("<") {
            return StoreAccessPath(kind: .orderedIndexRange, properties: properties)
        }
        return StoreAccessPath(kind: indexName.contains(".unique.") ? .uniqueIndex : .hashIndex, properties: properties)
    }

    /// `Entity.unique.0` from `… USING INDEX Entity.unique.0 (code=?)`.
    private func indexName(in line: String) -> String? {
        guard let range = line.range(of: "INDEX ") else { return nil }
        let rest = line[range.upperBound...]
        return rest.split(separator: " ", maxSplits: 1).first.map(String.init)
    }

    private func properties(ofIndex name: String) -> [String] {
        guard let layout else { return [] }
        let parts = name.split(separator: ".")
        // `Entity.relationship.key`: the index of a to-one column.
        if parts.count == 3, parts[2] == "key", let column = layout.column(named: String(parts[1])), column.kind == nil
        {
            return [String(parts[1])]
        }
        guard let number = parts.last.flatMap({ Int($0) }) else { return [] }
        let entity = layout.entity
        if name.contains(".unique."), number < entity.uniquenessConstraints.count {
            return entity.uniquenessConstraints[number]
        }
        if name.contains(".index."), number < entity.indices.count { return entity.indices[number] }
        return []
    }
}
