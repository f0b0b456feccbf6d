import Foundation
import ModelStore
import ModelStoreTooling

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
        let (maintenance, request) = try reference.maintenance(for: name)
        let progress = console.progress()
        defer { progress.finish() }
        progress.phase("compacting")
        return MaintenanceCommandReport(url: reference.string, report: try maintenance.compact(request))
    }
}
