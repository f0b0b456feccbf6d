import Foundation
import ModelStore
import ModelStoreAppendLog
import ModelStoreSQLite

/// `modelstore compact URL`: rewrites an append log's live models as a new checkpoint.
enum CompactCommand: Command {
    static let name = "compact"
    static let arguments = ["URL"]
    static let summary = "compact an append log into a new checkpoint"
    static let details = """
        Opens the append log with the schema it records (taking its single-writer lock, so the
        app must not have it open), writes its live models to a new checkpoint and switches to it
        atomically. The segments it replaces move to history/, which compaction never deletes.
        An SQLite store is checkpointed and rebuilt without its free pages (VACUUM).
        A JSON file needs no compaction: it is rewritten whole on every save.

        Examples:
          modelstore compact log:trips-log
          modelstore compact log:trips-log --json
          modelstore compact sqlite:trips.sqlite
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let reference = try StoreReference(invocation.arguments[0])
        if reference.isSQLite { return try compactSQLite(reference) }
        guard reference.isAppendLog else {
            throw ToolError.unsupported(
                "'\(reference.string)' is not an append log, and only append logs are compacted",
                remedy: "Name one as 'log:DIR'; other stores need no compaction")
        }
        let path = try reference.existingPath(for: name)
        let progress = console.progress()
        defer { progress.finish() }
        progress.phase("reading the log")
        let before = try AppendLogStore.inspect(at: path)
        let description = try reference.storedSchema(for: name)
        progress.phase("opening the log")
        let opened = try reference.open(schema: try Schema(description))
        defer { opened.close() }
        guard let store = opened.store as? AppendLogStore else {
            throw ToolError.unsupported("'\(reference.string)' did not open as an append log", remedy: "Use 'log:DIR'")
        }
        progress.phase("compacting")
        let report = try store.compact()
        let after = store.info
        return CompactReport(
            url: reference.string, checkpoint: report.checkpoint, modelCount: report.modelCount,
            lastTransaction: report.lastTransaction, byteCountBefore: before.logByteCount,
            byteCountAfter: after.logByteCount, deadFractionBefore: before.deadFraction,
            deadFractionAfter: after.deadFraction, archivedSegments: report.archivedSegments)
    }
}

extension CompactCommand {
    /// `VACUUM` on an SQLite store opened with the schema it records.
    static func compactSQLite(_ reference: StoreReference) throws -> any CommandReport {
        _ = try reference.existingPath(for: name)
        let opened = try reference.open(schema: try Schema(try reference.storedSchema(for: name)))
        defer { opened.close() }
        guard let store = opened.store as? SQLiteStore else {
            throw ToolError.unsupported(
                "'\(reference.string)' did not open as an SQLite store", remedy: "Use 'sqlite:PATH'")
        }
        let report = try store.compact()
        return SQLiteCompactReport(
            url: reference.string, byteCountBefore: report.byteCountBefore, byteCountAfter: report.byteCountAfter)
    }
}

/// What `compact` reports for an SQLite store.
struct SQLiteCompactReport: CommandReport {
    let url: String
    /// The database file and its write-ahead log before and after.
    let byteCountBefore: Int
    let byteCountAfter: Int

    var text: String {
        "Compacted \(url) (VACUUM): \(Formatting.bytes(byteCountBefore)) -> \(Formatting.bytes(byteCountAfter))"
    }
}

/// What `compact` reports.
struct CompactReport: CommandReport {
    let url: String
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

    var text: String {
        [
            "Compacted \(url): wrote '\(checkpoint)' with \(Formatting.count(modelCount, "model")) "
                + "through transaction \(lastTransaction).",
            "  log read on open: \(Formatting.bytes(byteCountBefore)) -> \(Formatting.bytes(byteCountAfter))",
            "  dead fraction: \(Formatting.percent(deadFractionBefore)) -> \(Formatting.percent(deadFractionAfter))",
            "  moved to history/: "
                + (archivedSegments.isEmpty ? "nothing" : archivedSegments.map { "'\($0)'" }.joined(separator: ", ")),
        ].joined(separator: "\n")
    }
}
