import Foundation
import ModelStore
import ModelStoreTooling

/// `modelstore repair URL`: mends a damaged append log, setting the damage aside.
enum RepairCommand: Command {
    static let name = "repair"
    static let arguments = ["URL"]
    static let summary = "repair an append log, moving the damaged part aside and reporting what moved"
    static let details = """
        Keeps every valid transaction before the first damage and moves the damaged record and
        everything after it into the store's damaged/ directory: nothing is deleted. An unreadable
        manifest is rebuilt, a damaged checkpoint is replaced by the segments kept in history/ when
        they reach back to the first transaction, and a torn tail is cut off. The report says
        exactly what was set aside: each file, from which byte, how many bytes, where they went, and
        how many intact records (which transactions) they hold. Transactions after the damage are
        not kept even when intact, since each may depend on the ones before it.

        The store must not be open (repair takes its lock). Only append logs are repaired; for a
        JSON file, restore its .backup or fix it at the line 'modelstore verify' names.

        Examples:
          modelstore repair log:trips-log
          modelstore repair log:trips-log --json
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let reference = try StoreReference(invocation.arguments[0])
        let (maintenance, request) = try reference.maintenance(for: name)
        let progress = console.progress()
        defer { progress.finish() }
        progress.phase("repairing")
        return MaintenanceCommandReport(url: reference.string, report: try maintenance.repair(request))
    }
}

/// What `repair`, `compact` or `seal` reports: the store's URL beside what its adapter's
/// maintenance reports (``StoreMaintenanceReport``).
struct MaintenanceCommandReport: CommandReport {
    let url: String
    let report: StoreMaintenanceReport

    var text: String { report.text }

    private enum CodingKeys: String, CodingKey { case url }

    /// The URL, and the maintenance report's own keys beside it.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(url, forKey: .url)
        try report.encode(to: encoder)
    }
}
