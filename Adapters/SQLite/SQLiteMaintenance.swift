import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreTooling

/// What the SQLite store offers tools such as `modelstore`: its stored schema, SQLite's own
/// integrity check before the store is read, and compaction (`VACUUM`). The `sqlite:` scheme
/// registers it.
public struct SQLiteMaintenance: DataStoreMaintenance {
    /// The SQLite store's maintenance.
    public init() {}

    /// The schema in the database's `modelstore_meta` table (``SQLiteStore/storedSchema(at:)``).
    public func storedSchema(_ request: StoreMaintenanceRequest) throws -> Schema.Description {
        try SQLiteStore.storedSchema(at: request.location, encryption: request.encryption)
    }

    /// The store identifier, schema version and model counts, read without opening the store or
    /// writing any file (a tool's open would create SQLite's `-wal` and `-shm`, and upgrade an older
    /// format).
    public func inspect(_ request: StoreMaintenanceRequest) throws -> StoreInspection? {
        let summary = try SQLiteStore.summary(at: request.location, encryption: request.encryption)
        return StoreInspection(
            storeIdentifier: summary.identifier, schemaVersion: summary.version,
            entities: summary.counts.map { StoreEntityCount(name: $0.entity, modelCount: $0.count) },
            details: StoreReportDetails(
                key: "sqlite", lines: ["format \(summary.format)"], value: ["format": summary.format]))
    }

    /// The models of each entity: counted up to 10,000 rows a table, estimated past that from
    /// `sqlite_stat1` where `ANALYZE` has run, else from the range of the table's keys
    /// (``SQLiteStore/estimatedCounts(at:encryption:countingUpTo:)``), so no table is read whole.
    public func estimatedCounts(_ request: StoreMaintenanceRequest) throws -> [StoreEntityCount]? {
        try SQLiteStore.estimatedCounts(at: request.location, encryption: request.encryption, countingUpTo: 10_000)
            .map { StoreEntityCount(name: $0.entity, modelCount: $0.count, isEstimate: $0.isEstimate) }
    }

    /// SQLite's integrity check, the tables against the recorded schema, every row's checksum, the
    /// relationships and the external files (``SQLiteStore/integrityProblems(at:)``), without opening
    /// the store or writing any file: the check is complete.
    public func verify(_ request: StoreMaintenanceRequest) throws -> StoreVerification {
        let file = request.location.path
        do {
            let found = try SQLiteStore.verification(at: request.location, encryption: request.encryption)
            return StoreVerification(
                problems: found.problems.map { StoreProblem(file: file, offset: nil, reason: $0) },
                entities: found.counts.map { StoreEntityCount(name: $0.entity, modelCount: $0.count) },
                remedy: "Restore the file from a backup; SQLite's own '.recover' command saves what it can read",
                schemaVersion: found.version, isComplete: true)
        } catch let error as DataStoreError where [.corrupted, .unsupportedFeature].contains(error.code) {
            return StoreVerification(
                problems: [StoreProblem(file: file, offset: nil, reason: error.message)], remedy: error.remedy,
                isComplete: true)
        }
    }

    /// SQLite's `EXPLAIN QUERY PLAN` of the query, then what the store does on the rows afterwards
    /// (``SQLiteStore/queryPlan(for:)``); `nil` for a store of another type.
    public func queryPlan(for query: StoreQuery, in store: any DataStore) throws -> [String]? {
        try (store as? SQLiteStore)?.queryPlan(for: query)
    }

    /// Opens the store with the schema it records, checkpoints its write-ahead log and rebuilds the
    /// file without free pages (``SQLiteStore/compact()``).
    public func compact(_ request: StoreMaintenanceRequest) throws -> StoreMaintenanceReport {
        let schema = try Schema(try storedSchema(request))
        let container = try ModelContainer(for: schema, configurations: [request.configuration])
        guard let store = container.stores.first as? SQLiteStore else {
            throw DataStoreError(
                .unsupportedFeature, "'\(request.name)' did not open as an SQLite store", remedy: "Use 'sqlite:PATH'")
        }
        let report = try store.compact()
        return StoreMaintenanceReport(
            text: "Compacted \(request.name) (VACUUM): \(ReportFormat.bytes(report.byteCountBefore)) -> "
                + ReportFormat.bytes(report.byteCountAfter)
                + (report.unnamedExternalFilesRemoved == 0
                    ? "" : "; removed \(report.unnamedExternalFilesRemoved) external files no model named"),
            details: CompactDetails(
                byteCountBefore: report.byteCountBefore, byteCountAfter: report.byteCountAfter,
                unnamedExternalFilesRemoved: report.unnamedExternalFilesRemoved))
    }
}

extension SQLiteMaintenance {
    /// Rewrites the database under the key `target` names (``SQLiteStore/changeEncryption(at:from:to:busyTimeout:progress:)``).
    public func changeEncryption(
        _ request: StoreMaintenanceRequest, to target: StoreMaintenanceRequest,
        progress: (_ done: Int, _ total: Int) -> Void
    ) throws -> StoreMaintenanceReport {
        let from = request.encryption
        let to = target.encryption
        try SQLiteStore.changeEncryption(at: request.location, from: from, to: to, progress: progress)
        let text =
            from == nil
            ? "encrypted (AES-256-GCM pages); it now opens only with its key"
            : to == nil ? "decrypted; it now opens without a key" : "re-encrypted under the new key"
        return StoreMaintenanceReport(
            text: "\(request.name): \(text)", details: SQLiteEncryptionDetails(isEncrypted: to != nil))
    }
}

/// What `encrypt`, `decrypt` and `rekey` report as data.
private struct SQLiteEncryptionDetails: Encodable {
    /// Whether the store is encrypted now.
    let isEncrypted: Bool
}

/// What `compact` reports as data: the database file and its write-ahead log before and after.
private struct CompactDetails: Encodable {
    let byteCountBefore: Int
    let byteCountAfter: Int
    let unnamedExternalFilesRemoved: Int
}

extension StoreMaintenanceRequest {
    /// The key the request's SQLite configuration names, or `nil`.
    fileprivate var encryption: EncryptionKeySource? { (configuration as? SQLiteStoreConfiguration)?.encryption }
}
