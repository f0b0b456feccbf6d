import Foundation
import ModelStore
import ModelStoreSync
import ModelStoreTooling

/// `modelstore conflicts URL`: the conflicts sync kept in a store, and resolving one.
enum ConflictsCommand: Command {
    static let name = "conflicts"
    static let arguments = ["URL"]
    static let options = [
        CommandOption(name: "--all", summary: "list resolved conflicts too"),
        CommandOption(name: "--resolve", value: "ID", summary: "resolve the conflict with this identifier"),
        CommandOption(name: "--take", value: "SIDE", summary: "with --resolve: 'local' or 'remote'"),
    ]
    static let summary = "list the conflicts sync kept in a store, or resolve one"
    static let details = """
        Lists every clash the sync engine decided and has not been resolved: the model, the
        property, the value both sides last agreed on, each side's value and what the policy kept.
        '--resolve ID --take local|remote' sets the property to that side's value and marks the
        conflict resolved, in one save; the next sync pushes the change like any edit.

        Examples:
          modelstore conflicts sqlite:phone.sqlite
          modelstore conflicts sqlite:phone.sqlite --resolve 5F0C… --take local
        """

    static func run(_ invocation: Invocation, console: Console) throws -> any CommandReport {
        let reference = try StoreReference(invocation.arguments[0])
        let schema = try Schema(reference.storedSchema(for: "list conflicts of")).includingSyncMetadata()
        let container = try SyncStores.container(reference, schema: schema)
        let conflicts = try SyncConflicts(container: container)
        if let id = invocation.value("--resolve") {
            guard let side = invocation.value("--take").flatMap(SyncConflicts.Side.init(rawValue:)) else {
                throw ToolError.usage(
                    "--resolve needs '--take local' or '--take remote'", remedy: "Say which side's value to keep")
            }
            try conflicts.resolve(id, take: side)
            return ConflictsReport(store: reference.string, conflicts: [], resolved: id)
        }
        let list = try conflicts.list(includingResolved: invocation.has("--all"))
        return ConflictsReport(store: reference.string, conflicts: list.map(ConflictLine.init), resolved: nil)
    }
}

/// One conflict as the tool prints it.
struct ConflictLine: Encodable {
    let id: String
    let kind: String
    let entity: String
    let globalID: String
    let property: String
    let base: String?
    let local: String?
    let remote: String?
    let chosen: String?
    let outcome: String
    let resolved: Bool

    init(_ conflict: SyncConflict) {
        id = conflict.id
        kind = conflict.kind.rawValue
        entity = conflict.entity
        globalID = conflict.globalID
        property = conflict.property
        base = conflict.base.map { "\($0)" }
        local = conflict.local.map { "\($0)" }
        remote = conflict.remote.map { "\($0)" }
        chosen = conflict.chosen.map { "\($0)" }
        outcome = conflict.outcome
        resolved = conflict.isResolved
    }
}

/// What `conflicts` reports.
struct ConflictsReport: CommandReport {
    let store: String
    let conflicts: [ConflictLine]
    let resolved: String?

    var text: String {
        if let resolved { return "Resolved conflict \(resolved) in \(store); the next sync pushes the change." }
        guard !conflicts.isEmpty else { return "No open conflicts in \(store)." }
        var lines = ["\(ReportFormat.count(conflicts.count, "conflict")) in \(store):"]
        for conflict in conflicts {
            let property = conflict.property.isEmpty ? "" : ".\(conflict.property)"
            lines.append(
                "  \(conflict.id)  \(conflict.kind) \(conflict.entity)\(property) of \(conflict.globalID)"
                    + (conflict.resolved ? " (resolved)" : ""))
            if !conflict.property.isEmpty {
                lines.append(
                    "      base \(conflict.base ?? "none"), local \(conflict.local ?? "none"), "
                        + "remote \(conflict.remote ?? "none"): kept \(conflict.chosen ?? "none") (\(conflict.outcome))"
                )
            } else {
                lines.append("      \(conflict.outcome)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
