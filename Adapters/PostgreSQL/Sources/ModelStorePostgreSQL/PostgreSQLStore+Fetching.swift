import Foundation
import ModelStore
import ModelStoreAdapterKit
import PostgresNIO

extension PostgreSQLStore {
    /// Fetches by the request's query (or, without one, every model of the entity); see ``PostgreSQLQueryPlan``.
    ///
    /// When SQL runs the whole query, a query's ``StoreQuery/propertiesToFetch`` is honoured: only
    /// those attributes (and every relationship) are selected, the others hold their default
    /// values, and the result says so (``DataStoreFetchResult/omitsUnrequestedProperties``).
    public func fetch<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        try database.wait { try await self.fetch(request) }
    }

    /// Fetches without blocking a thread.
    public func fetch<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) async throws -> DataStoreFetchResult<T, DefaultSnapshot> {
        let query = query(of: request)
        let (rows, partial) = try await rows(for: query, honouringPropertiesToFetch: true)
        remember(
            rows.map { ($0.snapshot.persistentIdentifier, $0.version) }, for: request.editingState, replacing: false)
        var result = DataStoreFetchResult(descriptor: request.descriptor, fetchedSnapshots: rows.map(\.snapshot))
        result.omitsUnrequestedProperties = partial
        return result
    }

    /// Counts in SQL (`count(*)`) when SQL runs the whole query.
    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws -> Int {
        try database.wait { try await self.fetchCount(request) }
    }

    /// Counts without blocking a thread.
    public func fetchCount<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) async throws -> Int {
        let query = query(of: request)
        let plan = try plan(for: query)
        guard plan.isComplete else { return try await rows(for: query).count }
        let total =
            try await database.read("counting '\(query.entityName)'") { session in
                try await session.integer("SELECT count(*) FROM \(plan.layout.table) t \(plan.whereClause)", plan.binds)
            } ?? 0
        let afterOffset = max(0, Int(total) - max(query.offset, 0))
        return query.limit.map { min(max($0, 0), afterOffset) } ?? afterOffset
    }

    /// Selects only the keys in SQL when SQL runs the whole query.
    public func fetchIdentifiers<T: PersistentModel>(_ request: DataStoreFetchRequest<T>) throws
        -> [PersistentIdentifier]
    {
        try database.wait { try await self.fetchIdentifiers(request) }
    }

    /// Lists identifiers without blocking a thread.
    public func fetchIdentifiers<T: PersistentModel>(
        _ request: DataStoreFetchRequest<T>
    ) async throws -> [PersistentIdentifier] {
        let query = query(of: request)
        let plan = try plan(for: query)
        guard plan.isComplete else { return try await rows(for: query).map(\.snapshot.persistentIdentifier) }
        let storeIdentifier = identifier
        return try await database.read("listing '\(query.entityName)'") { session in
            try await session.query(
                "SELECT t.\(TableLayout.key) FROM \(plan.layout.table) t \(plan.clause)", plan.binds
            )
            .map { row in
                .identifier(for: storeIdentifier, entityName: query.entityName, primaryKey: try row.decode(Int64.self))
            }
        }
    }

    /// The access path PostgreSQL chose for a query, from `EXPLAIN`'s first scan node (under a sort
    /// or a limit): a sequential scan, the primary key, a unique index, or another index (with the
    /// properties it is on, when it is one the store made).
    public func accessPath(for query: StoreQuery) -> StoreAccessPath? {
        guard let lines = try? queryPlan(for: query),
            let first = lines.first(where: { $0.contains("Scan") }) ?? lines.first
        else { return nil }
        guard let plan = try? PostgreSQLQueryPlan(query, layouts: layouts, storeIdentifier: identifier) else {
            return nil
        }
        if first.contains("Seq Scan") { return StoreAccessPath(kind: .scan) }
        if first.contains("_pkey") { return StoreAccessPath(kind: .identifiers) }
        for (number, names) in plan.layout.entity.uniquenessConstraints.enumerated()
        where lines.contains(where: { $0.contains(plan.layout.uniqueIndexName(number)) }) {
            return StoreAccessPath(kind: .uniqueIndex, properties: names)
        }
        for (name, properties) in plan.layout.indexedProperties
        where lines.contains(where: { $0.contains(quote(name)) }) {
            return StoreAccessPath(kind: .hashIndex, properties: properties)
        }
        if first.contains("Index") || first.contains("Bitmap") { return StoreAccessPath(kind: .hashIndex) }
        return StoreAccessPath(kind: .scan)
    }

    /// PostgreSQL's `EXPLAIN` of the SQL a query sends, one line per plan node, then what the store
    /// does on the rows afterwards.
    public func queryPlan(for query: StoreQuery) throws -> [String] {
        let plan = try plan(for: query)
        var lines = try database.wait {
            try await self.database.read("explaining '\(query.entityName)'") { session in
                try await session.query(
                    "EXPLAIN SELECT \(plan.layout.selectList) FROM \(plan.layout.table) t \(plan.clause)", plan.binds
                ).map { try $0.decode(String.self) }
            }
        }
        if let residual = plan.residual { lines.append("then evaluated by the store: \(residual)") }
        if plan.sortsInSwift { lines.append("then sorted by the store") }
        return lines
    }

    /// The query's plan, translated once per query shape (``PostgreSQLQueryCache``).
    func plan(for query: StoreQuery) throws -> PostgreSQLQueryPlan {
        try queryCache.withLock { try $0.plan(for: query, layouts: layouts, storeIdentifier: identifier) }
    }

    func query<T: PersistentModel>(of request: DataStoreFetchRequest<T>) -> StoreQuery {
        request.query ?? StoreQuery(entityName: Schema.entityName(for: T.self))
    }

    /// The rows a query selects, with their versions.
    func rows(for query: StoreQuery) async throws -> [RowReader.Versioned] {
        try await rows(for: query, honouringPropertiesToFetch: false).rows
    }

    /// The rows a query selects, with their versions; when `honouringPropertiesToFetch` and SQL runs
    /// the whole query, only the attributes of its ``StoreQuery/propertiesToFetch`` (see ``fetch(_:)``).
    /// Also returns whether the rows hold only those attributes.
    func rows(for query: StoreQuery, honouringPropertiesToFetch: Bool) async throws -> (
        rows: [RowReader.Versioned], omitsUnrequestedProperties: Bool
    ) {
        let plan = try plan(for: query)
        // Only the requested attributes when nothing in the store reads the others.
        let reading =
            honouringPropertiesToFetch && plan.isComplete
            ? query.propertiesToFetch.map { Set($0.compactMap(plan.layout.entity.slot(of:))) } : nil
        let storeIdentifier = identifier
        let url = database.url
        let rows = try await database.read("fetching '\(query.entityName)'") { session in
            try await RowReader(session: session, storeIdentifier: storeIdentifier, url: url)
                .rows(plan.layout, where: plan.clause, plan.binds, reading: reading)
        }
        let names = plan.relationshipNames
        let related = names.isEmpty ? [:] : try await relatedSnapshots(of: rows.map(\.snapshot), through: names)
        return (try plan.finish(rows, schema: schema, related: related), reading != nil)
    }

    /// The models reachable from snapshots through the named relationships, however many hops
    /// away, read a level at a time: what a residual filter through relationships reads.
    func relatedSnapshots(
        of snapshots: [DefaultSnapshot], through names: Set<String>
    ) async throws -> [PersistentIdentifier: DefaultSnapshot] {
        var known: [PersistentIdentifier: DefaultSnapshot] = [:]
        var frontier = snapshots
        while !frontier.isEmpty {
            var wanted = Set<PersistentIdentifier>()
            for snapshot in frontier {
                for name in names {
                    switch snapshot[name] {
                    case .reference(let id)?: wanted.insert(id)
                    case .references(let ids)?: wanted.formUnion(ids)
                    default: break
                    }
                }
            }
            wanted = wanted.filter { known[$0] == nil }
            guard !wanted.isEmpty else { break }
            let loaded = try await rows(for: Array(wanted)).mapValues(\.snapshot)
            known.merge(loaded) { first, _ in first }
            // Identifiers the store does not have are not loaded, and read as nil.
            frontier = Array(loaded.values)
        }
        return known
    }
}
