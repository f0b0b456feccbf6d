import Foundation
import ModelStore
import ModelStoreAppendLog

/// `modelstore inspect URL`: what a store holds and what it occupies on disk.
enum InspectCommand: Command {
    static let name = "inspect"
    static let arguments = ["URL"]
    static let summary = "entities, counts, schema version and sizes on disk; for a log, segments and dead fraction"
    static let details = """
        Reads the store's schema from its own files, so no model types are needed, and changes
        nothing (opening a JSON file creates its empty .lock file if it is missing). A JSON file is
        opened and counted; an append log is read without opening it (no lock is
        taken, so it can be inspected while an app has it open), and its checkpoint, segments,
        history and dead fraction (the share of the log that no longer describes live models) are
        listed. Damage met while reading is reported; 'modelstore verify' locates all of it.

        Examples:
          modelstore inspect json:trips.json
          modelstore inspect log:trips-log --json
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let reference = try StoreReference(invocation.arguments[0])
        let path = try reference.existingPath(for: name)
        let progress = console.progress()
        defer { progress.finish() }
        if reference.isAppendLog {
            progress.phase("reading the log")
            let verification = try AppendLogStore.verify(at: path)
            guard let info = verification.info else {
                throw DataStoreError(
                    .corrupted,
                    "the append log '\(path.path)' cannot be inspected: "
                        + verification.problems.map(\.description).joined(separator: "; "),
                    remedy: "Run 'modelstore repair \(reference.string)'")
            }
            return InspectReport(
                reference: reference, storeIdentifier: info.storeIdentifier,
                schemaVersion: info.schemaVersion?.description,
                entities: info.entities.map { EntityCount(name: $0.name, modelCount: $0.modelCount) },
                log: LogDetails(info), damage: verification.problems.map {
                    Problem(file: $0.file, offset: $0.offset, reason: $0.reason)
                })
        }
        progress.phase("opening")
        let description = try reference.storedSchema(for: name)
        let store = try reference.open(schema: try Schema(description))
        defer { store.close() }
        return InspectReport(
            reference: reference, storeIdentifier: store.identifier, schemaVersion: description.version.description,
            entities: try EntityCount.all(in: store, progress: progress), log: nil, damage: [])
    }
}

/// What `inspect` reports.
struct InspectReport: CommandReport {
    let url: String
    let scheme: String
    let storeIdentifier: String
    let schemaVersion: String?
    let entities: [EntityCount]
    let modelCount: Int
    let files: [StoredFile]
    let byteCount: Int
    /// For an append log: its files and how much of it is dead.
    let log: LogDetails?
    /// Damage met while reading (append logs); `verify` locates all of it.
    let damage: [Problem]

    init(
        reference: StoreReference, storeIdentifier: String, schemaVersion: String?, entities: [EntityCount],
        log: LogDetails?, damage: [Problem]
    ) {
        url = reference.string
        scheme = reference.scheme.name
        self.storeIdentifier = storeIdentifier
        self.schemaVersion = schemaVersion
        self.entities = entities
        modelCount = entities.reduce(0) { $0 + $1.modelCount }
        files = reference.filesOnDisk()
        byteCount = files.reduce(0) { $0 + $1.byteCount }
        self.log = log
        self.damage = damage
    }

    var text: String {
        var lines = ["\(url)  (store '\(storeIdentifier)', schema version \(schemaVersion ?? "unknown"))", ""]
        lines += ["Entities:"] + EntityCount.lines(entities)
        lines += ["", "On disk: \(Formatting.count(files.count, "file")), \(Formatting.bytes(byteCount))"]
        lines += Formatting.table(files.map { [$0.path, Formatting.bytes($0.byteCount)] })
        if let log { lines += [""] + log.lines }
        if !damage.isEmpty {
            lines += ["", "Damaged (run 'modelstore verify \(url)' for details):"] + damage.map { "  \($0)" }
        }
        return lines.joined(separator: "\n")
    }

    var status: ExitStatus { damage.isEmpty ? .success : .damaged }
}

/// The parts of an append log, and how much of it is dead.
struct LogDetails: Encodable {
    struct Checkpoint: Encodable {
        let file: String
        let byteCount: Int
        let lastTransaction: UInt64
        let modelCount: Int
        let created: Date
    }

    struct Segment: Encodable {
        let file: String
        let byteCount: Int
        let firstTransaction: UInt64
        let transactionCount: Int
    }

    let formatVersion: Int
    let transactionCount: UInt64
    let checkpoint: Checkpoint?
    let segments: [Segment]
    let historySegments: [StoredFile]
    let logByteCount: Int
    let liveByteCount: Int
    let deadFraction: Double

    init(_ info: AppendLogInfo) {
        formatVersion = info.formatVersion
        transactionCount = info.transactionCount
        checkpoint = info.checkpoint.map {
            Checkpoint(
                file: $0.fileName, byteCount: $0.byteCount, lastTransaction: $0.lastTransaction,
                modelCount: $0.modelCount, created: $0.created)
        }
        segments = info.segments.map {
            Segment(
                file: $0.fileName, byteCount: $0.byteCount, firstTransaction: $0.firstTransaction,
                transactionCount: $0.transactionCount)
        }
        historySegments = info.historySegments.map { StoredFile(path: $0.fileName, byteCount: $0.byteCount) }
        logByteCount = info.logByteCount
        liveByteCount = info.liveByteCount
        deadFraction = info.deadFraction
    }

    var lines: [String] {
        var lines = ["Log: \(Formatting.count(Int(transactionCount), "transaction")), format \(formatVersion)"]
        var rows: [[String]] = []
        if let checkpoint {
            rows.append([
                checkpoint.file, Formatting.bytes(checkpoint.byteCount),
                "\(Formatting.count(checkpoint.modelCount, "model")) through transaction \(checkpoint.lastTransaction)",
            ])
        }
        for segment in segments {
            let last = segment.firstTransaction + UInt64(segment.transactionCount) - 1
            let span = segment.transactionCount == 0
                ? "no transactions yet"
                : segment.transactionCount == 1
                    ? "transaction \(segment.firstTransaction)" : "transactions \(segment.firstTransaction)–\(last)"
            rows.append([segment.file, Formatting.bytes(segment.byteCount), span])
        }
        lines += Formatting.table(rows)
        if !historySegments.isEmpty {
            let bytes = historySegments.reduce(0) { $0 + $1.byteCount }
            lines.append("  history: \(Formatting.count(historySegments.count, "segment")), \(Formatting.bytes(bytes))")
        }
        lines.append(
            "  dead fraction \(Formatting.percent(deadFraction)): about \(Formatting.bytes(liveByteCount)) "
                + "of live data in \(Formatting.bytes(logByteCount)) read on open")
        return lines
    }
}
