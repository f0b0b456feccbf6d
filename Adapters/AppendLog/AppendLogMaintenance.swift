import Foundation
import ModelStore
import ModelStoreCrypto
import ModelStoreTooling

/// What the append log offers tools such as `modelstore`: inspection and verification without
/// opening the log, repair, and compaction into a new checkpoint. The `log:` scheme registers it.
public struct AppendLogMaintenance: DataStoreMaintenance {
    /// The append log's maintenance.
    public init() {}

    /// The schema in the newest segment's or checkpoint's header (``AppendLogStore/storedSchema(at:)``).
    public func storedSchema(_ request: StoreMaintenanceRequest) throws -> Schema.Description {
        try AppendLogStore.storedSchema(at: request.location)
    }

    /// The configuration with manual compaction: a background compaction would race with the tool.
    public func configurationForMaintenance(
        _ configuration: any DataStoreConfiguration
    ) -> any DataStoreConfiguration {
        guard var log = configuration as? AppendLogStoreConfiguration else { return configuration }
        log.compaction = .manual
        return log
    }

    /// Closes the log at once, releasing its lock.
    public func close(_ store: any DataStore) {
        (store as? AppendLogStore)?.close()
    }

    /// The log read without opening it (no lock): counts, checkpoint, segments, history and dead
    /// fraction, and the damage met. Throws ``DataStoreError/Code/corrupted`` when nothing can be read.
    public func inspect(_ request: StoreMaintenanceRequest) throws -> StoreInspection? {
        let verification = try AppendLogStore.verify(at: request.location, encryption: request.encryption)
        guard let info = verification.info else {
            throw DataStoreError(
                .corrupted,
                "the append log '\(request.location.path)' cannot be inspected: "
                    + verification.problems.map(\.description).joined(separator: "; "),
                remedy: "Run 'modelstore repair \(request.name)'")
        }
        return StoreInspection(
            storeIdentifier: info.storeIdentifier, schemaVersion: info.schemaVersion,
            entities: info.entities.map { StoreEntityCount(name: $0.name, modelCount: $0.modelCount) },
            details: StoreReportDetails(key: "log", lines: info.reportLines, value: info),
            damage: verification.problems.map(\.problem))
    }

    /// Every file of the log checked without opening it (``AppendLogStore/verify(at:)``); complete.
    public func verify(_ request: StoreMaintenanceRequest) throws -> StoreVerification {
        let verification = try AppendLogStore.verify(at: request.location, encryption: request.encryption)
        return StoreVerification(
            problems: verification.problems.map(\.problem),
            entities: verification.info?.entities.map { StoreEntityCount(name: $0.name, modelCount: $0.modelCount) },
            note: verification.tornTail?.description,
            remedy: "Run 'modelstore repair \(request.name)': it keeps every transaction before the damage "
                + "and moves the rest aside into 'damaged/'",
            schemaVersion: (try? AppendLogStore.storedSchema(at: request.location))?.version, isComplete: true)
    }

    /// The damaged place an ``AppendLogDamage`` names.
    public func problem(describing error: DataStoreError, _ request: StoreMaintenanceRequest) -> StoreProblem? {
        (error.underlyingError as? AppendLogDamage)?.problem
    }

    /// ``AppendLogStore/repair(at:)``: keeps every transaction before the first damage and moves the
    /// rest into `damaged/`.
    public func repair(_ request: StoreMaintenanceRequest) throws -> StoreMaintenanceReport {
        let report = try AppendLogStore.repair(at: request.location, encryption: request.encryption)
        let heading = report.changedAnything ? "Repaired \(request.name):" : "\(request.name):"
        return StoreMaintenanceReport(
            text: ([heading] + report.description.split(separator: "\n").map { "  \($0)" }).joined(separator: "\n"),
            details: RepairDetails(report))
    }

    /// Opens the log with the schema it records (taking its lock) and writes a new checkpoint
    /// (``AppendLogStore/compact()``).
    public func compact(_ request: StoreMaintenanceRequest) throws -> StoreMaintenanceReport {
        let before = try AppendLogStore.inspect(at: request.location, encryption: request.encryption)
        let schema = try Schema(try storedSchema(request))
        let container = try ModelContainer(
            for: schema, configurations: [configurationForMaintenance(request.configuration)])
        guard let store = container.stores.first as? AppendLogStore else {
            throw DataStoreError(
                .unsupportedFeature, "'\(request.name)' did not open as an append log", remedy: "Use 'log:DIR'")
        }
        defer { store.close() }
        let report = try store.compact()
        let after = store.info
        let details = CompactDetails(
            checkpoint: report.checkpoint, modelCount: report.modelCount, lastTransaction: report.lastTransaction,
            byteCountBefore: before.logByteCount, byteCountAfter: after.logByteCount,
            deadFractionBefore: before.deadFraction, deadFractionAfter: after.deadFraction,
            archivedSegments: report.archivedSegments)
        return StoreMaintenanceReport(text: details.text(name: request.name), details: details)
    }

    /// Throws ``DataStoreError/Code/unsupportedFeature``: every record carries its own checksum.
    public func seal(_ request: StoreMaintenanceRequest) throws -> StoreMaintenanceReport {
        throw DataStoreError(
            .unsupportedFeature, "'\(request.name)' is not a JSON store, and only JSON stores are sealed",
            remedy: "An append log checks every record with its own checksum; use 'modelstore verify'")
    }
}

extension AppendLogDamage {
    /// The damage as a store problem.
    var problem: StoreProblem { StoreProblem(file: file, offset: offset, reason: reason) }
}

extension AppendLogInfo {
    /// The parts of the log and how much of it is dead, as `inspect` prints them.
    var reportLines: [String] {
        var lines = ["Log: \(ReportFormat.count(Int(transactionCount), "transaction")), format \(formatVersion)"]
        var rows: [[String]] = []
        if let checkpoint {
            rows.append([
                checkpoint.fileName, ReportFormat.bytes(checkpoint.byteCount),
                "\(ReportFormat.count(checkpoint.modelCount, "model")) through transaction "
                    + "\(checkpoint.lastTransaction)",
            ])
        }
        for segment in segments {
            let last = segment.firstTransaction + UInt64(segment.transactionCount) - 1
            let span =
                segment.transactionCount == 0
                ? "no transactions yet"
                : segment.transactionCount == 1
                    ? "transaction \(segment.firstTransaction)" : "transactions \(segment.firstTransaction)–\(last)"
            rows.append([segment.fileName, ReportFormat.bytes(segment.byteCount), span])
        }
        lines += ReportFormat.table(rows)
        if !historySegments.isEmpty {
            lines.append(
                "  history: \(ReportFormat.count(historySegments.count, "segment")), "
                    + ReportFormat.bytes(historyByteCount))
        }
        lines.append(
            "  dead fraction \(ReportFormat.percent(deadFraction)): about \(ReportFormat.bytes(liveByteCount)) "
                + "of live data in \(ReportFormat.bytes(logByteCount)) read on open")
        return lines
    }
}

/// What `repair` reports as data.
struct RepairDetails: Encodable {
    struct SetAside: Encodable {
        let file: String
        let offset: Int
        let byteCount: Int
        let savedAs: String
        let intactRecordCount: Int
        let firstTransaction: UInt64?
        let lastTransaction: UInt64?
    }

    let changed: Bool
    let damage: StoreProblem?
    let historyDamage: [StoreProblem]
    let lastKeptTransaction: UInt64
    let setAside: [SetAside]
    let tornTail: String?
    let rebuiltManifest: Bool
    let rebuiltFromHistory: Bool

    init(_ report: AppendLogRepairReport) {
        changed = report.changedAnything
        damage = report.damage?.problem
        historyDamage = report.historyDamage.map(\.problem)
        lastKeptTransaction = report.lastKeptTransaction
        setAside = report.setAside.map {
            SetAside(
                file: $0.file, offset: $0.offset, byteCount: $0.byteCount, savedAs: $0.savedAs,
                intactRecordCount: $0.intactRecordCount, firstTransaction: $0.transactions?.lowerBound,
                lastTransaction: $0.transactions?.upperBound)
        }
        tornTail = report.tornTail?.description
        rebuiltManifest = report.rebuiltManifest
        rebuiltFromHistory = report.rebuiltFromHistory
    }
}

/// What `compact` reports as data.
struct CompactDetails: Encodable {
    /// The new checkpoint's file name.
    let checkpoint: String
    let modelCount: Int
    /// The last transaction the checkpoint includes.
    let lastTransaction: UInt64
    /// What opening the log read before and after: the checkpoint and the live segments.
    let byteCountBefore: Int
    let byteCountAfter: Int
    let deadFractionBefore: Double
    let deadFractionAfter: Double
    /// The segments moved to `history/`.
    let archivedSegments: [String]

    func text(name: String) -> String {
        [
            "Compacted \(name): wrote '\(checkpoint)' with \(ReportFormat.count(modelCount, "model")) "
                + "through transaction \(lastTransaction).",
            "  log read on open: \(ReportFormat.bytes(byteCountBefore)) -> \(ReportFormat.bytes(byteCountAfter))",
            "  dead fraction: \(ReportFormat.percent(deadFractionBefore)) -> "
                + ReportFormat.percent(deadFractionAfter),
            "  moved to history/: "
                + (archivedSegments.isEmpty ? "nothing" : archivedSegments.map { "'\($0)'" }.joined(separator: ", ")),
        ].joined(separator: "\n")
    }
}

extension AppendLogMaintenance {
    /// Rewrites the log under the key `target` names (``AppendLogStore/changeEncryption(at:from:to:progress:)``).
    public func changeEncryption(
        _ request: StoreMaintenanceRequest, to target: StoreMaintenanceRequest,
        progress: (_ done: Int, _ total: Int) -> Void
    ) throws -> StoreMaintenanceReport {
        try AppendLogStore.changeEncryption(
            at: request.location, from: request.encryption, to: target.encryption, progress: progress)
        return StoreMaintenanceReport(
            text: "\(request.name): " + EncryptionChangeDetails(from: request.encryption, to: target.encryption).text,
            details: EncryptionChangeDetails(from: request.encryption, to: target.encryption))
    }
}

/// What `encrypt`, `decrypt` and `rekey` report as data.
struct EncryptionChangeDetails: Encodable {
    /// Whether the store was encrypted before.
    let wasEncrypted: Bool
    /// Whether it is encrypted now.
    let isEncrypted: Bool

    init(from: EncryptionKeySource?, to: EncryptionKeySource?) {
        wasEncrypted = from != nil
        isEncrypted = to != nil
    }

    var text: String {
        switch (wasEncrypted, isEncrypted) {
        case (false, _): "encrypted (AES-256-GCM); it now opens only with its key"
        case (true, false): "decrypted; it now opens without a key"
        case (true, true): "re-encrypted under the new key; the old key no longer opens it"
        }
    }
}

extension StoreMaintenanceRequest {
    /// The key source of the log the request names (from its URL's `key-env`, `key-file` or
    /// `passphrase-env`), if any.
    fileprivate var encryption: EncryptionKeySource? {
        (configuration as? AppendLogStoreConfiguration)?.encryption
    }
}
