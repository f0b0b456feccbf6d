import Foundation
import ModelStore
import ModelStoreAppendLog

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
        guard reference.isAppendLog else {
            let backup = reference.path.map { " '\($0.path).backup'" } ?? " its backup"
            throw ToolError.unsupported(
                "'\(reference.string)' is not an append log, and only append logs are repaired",
                remedy: "For a JSON file, restore\(backup), or fix the file at the line 'modelstore verify' names")
        }
        let path = try reference.existingPath(for: name)
        let progress = console.progress()
        defer { progress.finish() }
        progress.phase("repairing")
        return RepairReport(url: reference.string, try AppendLogStore.repair(at: path))
    }
}

/// What `repair` reports.
struct RepairReport: CommandReport {
    struct SetAside: Encodable {
        let file: String
        let offset: Int
        let byteCount: Int
        let savedAs: String
        let intactRecordCount: Int
        let firstTransaction: UInt64?
        let lastTransaction: UInt64?
    }

    let url: String
    /// Whether the repair changed anything.
    let changed: Bool
    /// The first damage found in the live log.
    let damage: Problem?
    /// Damage found in `history/`.
    let historyDamage: [Problem]
    /// The last transaction the repaired log keeps.
    let lastKeptTransaction: UInt64
    /// Everything moved into `damaged/`, in order.
    let setAside: [SetAside]
    /// The torn tail cut off, if any.
    let tornTail: String?
    let rebuiltManifest: Bool
    let rebuiltFromHistory: Bool
    /// The adapter's own account of the repair.
    private let summary: String

    init(url: String, _ report: AppendLogRepairReport) {
        self.url = url
        changed = report.changedAnything
        damage = report.damage.map { Problem(file: $0.file, offset: $0.offset, reason: $0.reason) }
        historyDamage = report.historyDamage.map { Problem(file: $0.file, offset: $0.offset, reason: $0.reason) }
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
        summary = report.description
    }

    private enum CodingKeys: String, CodingKey {
        case url, changed, damage, historyDamage, lastKeptTransaction, setAside, tornTail, rebuiltManifest
        case rebuiltFromHistory
    }

    var text: String {
        let heading = changed ? "Repaired \(url):" : "\(url):"
        return ([heading] + summary.split(separator: "\n").map { "  \($0)" }).joined(separator: "\n")
    }
}
