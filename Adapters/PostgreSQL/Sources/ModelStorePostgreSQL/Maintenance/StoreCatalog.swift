import Foundation
import ModelStore
import PostgresNIO

/// What the server's catalog says about a store's namespace, read on one connection without
/// changing anything: the meta table, the tables with their sizes and row estimates, the indexes,
/// the columns and foreign keys, and bounded or exact row counts. ``PostgreSQLMaintenance`` builds
/// its reports from it.
struct StoreCatalog: Sendable {
    let session: Session
    let namespace: String
    /// The store's URL without its password, for messages.
    let url: String

    /// Counts up to this many rows are exact; past it a count that is not asked to be exact is the
    /// table's estimate (see ``rowCount(ofTable:exactly:)``), so no report reads a large table whole.
    static let exactCountLimit = 10_000

    /// A table of the namespace, as `pg_class` describes it.
    struct Table: Sendable {
        let name: String
        /// The planner's row estimate (`reltuples`); negative when the table was never analyzed.
        let estimatedRows: Double
        /// The table with its indexes and TOAST data, in bytes.
        let byteCount: Int
        /// Its indexes alone, in bytes.
        let indexByteCount: Int
    }

    /// An index of a table of the namespace.
    struct Index: Sendable {
        let name: String
        let table: String
        let isUnique: Bool
        /// Whether the server may use it (`indisvalid`; an interrupted build leaves an invalid one).
        let isValid: Bool
        let byteCount: Int
    }

    /// A row count, exact or estimated.
    struct RowCount: Sendable {
        let rows: Int
        let isEstimate: Bool
    }

    /// `"ns"."name"`, for SQL.
    func qualified(_ name: String) -> String { quote(namespace) + "." + quote(name) }

    /// `ns.name`, for reports: where a problem is.
    func place(_ name: String) -> String { namespace + "." + name }

    private var namespaceBinding: PostgresBindings {
        var binds = PostgresBindings()
        binds.append(namespace)
        return binds
    }

    // MARK: The store's records

    /// The rows of `modelstore_meta`; throws ``DataStoreError/Code/notFound`` when the namespace has
    /// no store.
    func meta() async throws -> [String: String] {
        guard let meta = try await StoreOpener.readMeta(session, namespace: namespace) else {
            throw DataStoreError(
                .notFound,
                "there is no store in the namespace '\(namespace)' of the PostgreSQL database '\(url)': it has no "
                    + "'modelstore_meta' table",
                remedy: "Check the URL's database and its '?namespace=' option (default 'public'); an app creates "
                    + "the store when it first opens it")
        }
        return meta
    }

    /// The schema the store records.
    func storedSchema(_ meta: [String: String]) throws -> Schema.Description {
        try StoreOpener.decodeSchema(meta["schema"], url: url)
    }

    // MARK: Catalog

    /// The namespace's tables, by name.
    func tables() async throws -> [String: Table] {
        let rows = try await session.query(
            "SELECT c.relname::text, c.reltuples::float8, pg_total_relation_size(c.oid), pg_indexes_size(c.oid) "
                + "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname = $1 AND c.relkind IN ('r', 'p')", namespaceBinding)
        var tables: [String: Table] = [:]
        for row in rows {
            let (name, estimate, size, indexSize) = try row.decode((String, Double, Int64, Int64).self)
            tables[name] = Table(
                name: name, estimatedRows: estimate, byteCount: Int(size), indexByteCount: Int(indexSize))
        }
        return tables
    }

    /// The namespace's indexes, by table then name.
    func indexes() async throws -> [Index] {
        let rows = try await session.query(
            "SELECT i.relname::text, t.relname::text, x.indisunique, x.indisvalid, pg_relation_size(i.oid) "
                + "FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid "
                + "JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = $1 ORDER BY 2, 1",
            namespaceBinding)
        return try rows.map { row in
            let (name, table, unique, valid, size) = try row.decode((String, String, Bool, Bool, Int64).self)
            return Index(name: name, table: table, isUnique: unique, isValid: valid, byteCount: Int(size))
        }
    }

    /// The columns of the namespace's tables with their SQL types (`format_type`), by table.
    func columns() async throws -> [String: [String: String]] {
        let rows = try await session.query(
            "SELECT c.relname::text, a.attname::text, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
                + "JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped",
            namespaceBinding)
        var columns: [String: [String: String]] = [:]
        for row in rows {
            let (table, column, type) = try row.decode((String, String, String).self)
            columns[table, default: [:]][column] = type
        }
        return columns
    }

    /// The foreign keys of the namespace's tables: table, its first key column, and the table it refers to.
    func foreignKeys() async throws -> Set<[String]> {
        let rows = try await session.query(
            "SELECT t.relname::text, a.attname::text, r.relname::text FROM pg_constraint k "
                + "JOIN pg_class t ON t.oid = k.conrelid JOIN pg_namespace n ON n.oid = t.relnamespace "
                + "JOIN pg_class r ON r.oid = k.confrelid "
                + "JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1] "
                + "WHERE n.nspname = $1 AND k.contype = 'f'", namespaceBinding)
        return Set(
            try rows.map { row in
                let (table, column, target) = try row.decode((String, String, String).self)
                return [table, column, target]
            })
    }

    // MARK: Counting

    /// The rows of a table: counted when `exactly`, or when there are at most ``exactCountLimit``
    /// (which reads at most that many rows); otherwise the table's estimate, never below what was
    /// counted.
    func rowCount(ofTable name: String, estimate: Double?, exactly: Bool) async throws -> RowCount {
        let table = qualified(name)
        if exactly {
            return RowCount(
                rows: Int(try await session.integer("SELECT count(*) FROM \(table)") ?? 0), isEstimate: false)
        }
        let limit = Self.exactCountLimit
        let seen = Int(
            try await session.integer("SELECT count(*) FROM (SELECT 1 FROM \(table) LIMIT \(limit + 1)) AS bounded")
                ?? 0)
        guard seen > limit else { return RowCount(rows: seen, isEstimate: false) }
        let estimated: Double
        if let estimate, estimate >= 0 {
            estimated = estimate
        } else {
            estimated = try await plannerEstimate(ofTable: table)
        }
        return RowCount(rows: max(Int(estimated.rounded()), seen), isEstimate: true)
    }

    /// The planner's estimate of a table's rows (`EXPLAIN`'s `Plan Rows`), which it derives from the
    /// table's size when the table was never analyzed.
    private func plannerEstimate(ofTable table: String) async throws -> Double {
        let rows = try await session.query("EXPLAIN (FORMAT JSON) SELECT 1 FROM \(table)")
        guard let cell = rows.first?.makeRandomAccess()[0], let bytes = cell.bytes else { return 0 }
        let text = String(buffer: bytes)
        guard let range = text.range(of: "\"Plan Rows\":") else { return 0 }
        let digits = text[range.upperBound...].drop { $0 == " " }.prefix { $0.isNumber || $0 == "." }
        return Double(digits) ?? 0
    }

    /// The history's oldest and newest transaction numbers, or `nil` when it has none (or no table).
    func historyRange(_ tables: [String: Table]) async throws -> (oldest: Int64, newest: Int64)? {
        guard tables["modelstore_history"] != nil else { return nil }
        let rows = try await session.query(
            "SELECT min(number), max(number) FROM \(qualified("modelstore_history"))")
        guard let row = rows.first else { return nil }
        let (oldest, newest) = try row.decode((Int64?, Int64?).self)
        guard let oldest, let newest else { return nil }
        return (oldest, newest)
    }
}
