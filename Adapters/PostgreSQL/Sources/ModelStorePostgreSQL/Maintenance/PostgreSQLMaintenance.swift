import Foundation
import ModelStore
import ModelStoreTooling
import PostgresNIO

/// What the PostgreSQL store offers tools such as `modelstore`: its stored schema, an inspection
/// from the server's catalog (row counts, estimated for large tables unless asked to be exact,
/// tables, indexes and history with their sizes), and a check of the tables against the schema the
/// store records. The `postgres:` and `postgresql:` schemes register it.
///
/// Each operation opens one connection of its own, reads, and closes it; none writes anything. A
/// store is a namespace of a database, so there are no files: ``storesFiles`` is `false`, and the
/// operations throw ``DataStoreError/Code/notFound`` for a namespace that holds no store.
public struct PostgreSQLMaintenance: DataStoreMaintenance {
    /// The PostgreSQL store's maintenance.
    public init() {}

    /// `false`: a store is a namespace on a server.
    public var storesFiles: Bool { false }

    /// The schema in the namespace's `modelstore_meta` table.
    public func storedSchema(_ request: StoreMaintenanceRequest) throws -> Schema.Description {
        try Self.withCatalog(request, doing: "reading the schema") { catalog in
            try catalog.storedSchema(try await catalog.meta())
        }
    }

    /// The store identifier, schema version and the models of each entity (counted up to
    /// 10,000 rows a table, estimated from the table's statistics past that unless the request
    /// ``StoreMaintenanceRequest/countsExactly``), with the storage format, every table and index
    /// of the namespace with its size, and the history's transactions. A table the schema needs
    /// and the namespace lacks is reported as damage.
    public func inspect(_ request: StoreMaintenanceRequest) throws -> StoreInspection? {
        try Self.withCatalog(request, doing: "inspecting") { catalog in
            let meta = try await catalog.meta()
            let description = try catalog.storedSchema(meta)
            let tables = try await catalog.tables()
            let indexes = try await catalog.indexes()
            var entities: [StoreEntityCount] = []
            var damage: [StoreProblem] = []
            var rows: [InspectionDetails.TableRow] = []
            for table in tables.values.sorted(by: { $0.name < $1.name }) {
                let count = try await catalog.rowCount(
                    ofTable: table.name, estimate: table.estimatedRows, exactly: request.countsExactly)
                rows.append(InspectionDetails.TableRow(table: table, count: count))
            }
            let counted = Dictionary(uniqueKeysWithValues: rows.map { ($0.name, $0) })
            for entity in description.entities {
                guard let row = counted[entity.name] else {
                    damage.append(
                        StoreProblem(
                            file: catalog.place(entity.name), offset: nil,
                            reason: "the table of '\(entity.name)' is missing"))
                    continue
                }
                entities.append(
                    StoreEntityCount(name: entity.name, modelCount: row.rowCount, isEstimate: row.estimated))
            }
            let history = InspectionDetails.History(
                row: counted["modelstore_history"], range: try await catalog.historyRange(tables))
            let details = InspectionDetails(
                format: meta["format"].flatMap(Int.init) ?? 0, namespace: catalog.namespace,
                byteCount: tables.values.reduce(0) { $0 + $1.byteCount }, tables: rows,
                indexes: indexes.map(InspectionDetails.IndexRow.init), history: history)
            return StoreInspection(
                storeIdentifier: meta["identifier"] ?? "unknown", schemaVersion: description.version,
                entities: entities,
                details: StoreReportDetails(key: "postgres", lines: details.lines, value: details),
                damage: damage)
        }
    }

    /// The models of each entity: counted up to 10,000 rows a table, estimated past that from the
    /// table's statistics (`pg_class.reltuples`, or the planner's estimate for a table never
    /// analyzed), so no table is read whole.
    public func estimatedCounts(_ request: StoreMaintenanceRequest) throws -> [StoreEntityCount]? {
        try Self.withCatalog(request, doing: "counting") { catalog in
            let description = try catalog.storedSchema(try await catalog.meta())
            let tables = try await catalog.tables()
            var counts: [StoreEntityCount] = []
            for entity in description.entities {
                guard let table = tables[entity.name] else { continue }
                let count = try await catalog.rowCount(
                    ofTable: entity.name, estimate: table.estimatedRows, exactly: false)
                counts.append(StoreEntityCount(name: entity.name, modelCount: count.rows, isEstimate: count.isEstimate))
            }
            return counts
        }
    }

    /// Checks the namespace against the schema it records, from the server's catalog and the tables
    /// (see ``StoreCatalog/problems(_:meta:exactCounts:)``), counting every entity's rows exactly: the
    /// check is complete, and reads every table whole.
    public func verify(_ request: StoreMaintenanceRequest) throws -> StoreVerification {
        try Self.withCatalog(request, doing: "verifying") { catalog in
            let meta = try await catalog.meta()
            let description: Schema.Description
            do {
                description = try catalog.storedSchema(meta)
            } catch let error as DataStoreError where error.code == .corrupted {
                return StoreVerification(
                    problems: [
                        StoreProblem(file: catalog.place("modelstore_meta"), offset: nil, reason: error.message)
                    ],
                    remedy: error.remedy, isComplete: true)
            }
            let found = try await catalog.problems(description, meta: meta)
            return StoreVerification(
                problems: found.problems, entities: found.counts,
                remedy: "Restore the namespace from a backup (pg_dump --schema), or repair the tables by hand as the "
                    + "problems say", schemaVersion: description.version, isComplete: true)
        }
    }

    /// PostgreSQL's `EXPLAIN` of the query, then what the store does on the rows afterwards
    /// (``PostgreSQLStore/queryPlan(for:)``); `nil` for a store of another type.
    public func queryPlan(for query: StoreQuery, in store: any DataStore) throws -> [String]? {
        try (store as? PostgreSQLStore)?.queryPlan(for: query)
    }

    /// Closes the store's connections at once.
    public func close(_ store: any DataStore) {
        (store as? PostgreSQLStore)?.close()
    }

    /// Runs `body` on a connection of its own to the server the request names, closed afterwards;
    /// errors become `DataStoreError`s naming the store and what was being done.
    static func withCatalog<Value: Sendable>(
        _ request: StoreMaintenanceRequest, doing: String,
        _ body: @escaping @Sendable (StoreCatalog) async throws -> Value
    ) throws -> Value {
        guard let configuration = request.configuration as? PostgreSQLStoreConfiguration else {
            throw DataStoreError(
                .invalidConfiguration, "'\(request.name)' does not name a PostgreSQL store",
                remedy: "Use 'postgres://USER@HOST:PORT/DATABASE'")
        }
        try configuration.validate()
        let url = configuration.redactedURL
        return try BridgeExecutor.shared.wait(
            for: {
                let connection = try await Database.connect(configuration)
                do {
                    let catalog = StoreCatalog(
                        session: Session(connection: connection), namespace: configuration.namespace, url: url)
                    let value = try await body(catalog)
                    try? await connection.close()
                    return value
                } catch {
                    try? await connection.close()
                    throw ModelStoreErrors.translate(error, doing: doing, url: url)
                }
            }, storeURL: url)
    }
}
