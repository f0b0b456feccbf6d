import Foundation
import ModelStore
import ModelStoreAdapters

/// The checker: reopens the store after the writer was killed and compares everything it holds
/// with the workload's state after the transactions it says it holds.
struct CrashChecker {
    let url: String
    let acknowledgements: String

    /// What one check found.
    struct Outcome {
        var acknowledged: Int
        var stored: Int
        var problems: [String]

        /// Acknowledged transactions the store lost.
        var lost: Int { max(0, acknowledged - stored) }
    }

    func run() throws -> Outcome {
        let text = (try? String(contentsOfFile: acknowledgements, encoding: .utf8)) ?? ""
        let acknowledged = text.split(separator: "\n").last.flatMap { Int($0) } ?? 0
        // A store a `migrate` run was killed in is either still at 1.0.0 or wholly at 2.0.0.
        // A store whose version cannot be read (a writer killed while creating it) opens as 1.0.0,
        // and the open itself decides; a migrated store opened so would fail to open, not pass.
        let migrated = (try? storedCrashSchemaVersion(url: url)) == CrashSchemaV2.versionIdentifier
        let schema = migrated ? Schema(versionedSchema: CrashSchemaV2.self) : crashSchema
        let container = try ModelContainer(for: schema, url: url, registry: .shared)
        let context = ModelContext(container)
        var problems: [String] = []
        let found = migrated ? try readMigrated(context, problems: &problems) : try read(context)
        if found.lastTransaction > acknowledged + 1 {
            problems.append(
                "the store holds transaction \(found.lastTransaction), but only \(acknowledged) were acknowledged "
                    + "and one more was in flight")
        }
        let expected = CrashState.replayed(through: found.lastTransaction)
        if found != expected { problems += differences(found, expected) }
        return Outcome(acknowledged: acknowledged, stored: found.lastTransaction, problems: problems)
    }

    /// Everything the store holds, with each account's entries checked against the inverse.
    private func read(_ context: ModelContext) throws -> CrashState {
        var state = CrashState()
        state.lastTransaction = try context.fetch(FetchDescriptor<CrashMeta>()).first?.lastTransaction ?? 0
        for account in try context.fetch(FetchDescriptor<CrashAccount>()) {
            state.accounts[account.key] = .init(name: account.name, total: account.total)
        }
        for entry in try context.fetch(FetchDescriptor<CrashEntry>()) {
            state.entries[entry.key] = .init(amount: entry.amount, note: entry.note, account: entry.account?.key ?? -1)
        }
        return state
    }

    /// Everything a migrated store holds, as the same state (`memo` read as the note), and a
    /// problem for every account whose `entryCount` the migration's custom stage did not set.
    private func readMigrated(_ context: ModelContext, problems: inout [String]) throws -> CrashState {
        var state = CrashState()
        state.lastTransaction =
            try context.fetch(FetchDescriptor<CrashSchemaV2.CrashMeta>()).first?.lastTransaction ?? 0
        for account in try context.fetch(FetchDescriptor<CrashSchemaV2.CrashAccount>()) {
            state.accounts[account.key] = .init(name: account.name, total: account.total)
            if account.entryCount != account.entries.count {
                problems.append(
                    "account \(account.key) is at version 2.0.0 with entryCount \(account.entryCount) for "
                        + "\(account.entries.count) entries: the migration's custom stage was not kept with the rest")
            }
        }
        for entry in try context.fetch(FetchDescriptor<CrashSchemaV2.CrashEntry>()) {
            state.entries[entry.key] = .init(amount: entry.amount, note: entry.memo, account: entry.account?.key ?? -1)
        }
        return state
    }

    private func differences(_ found: CrashState, _ expected: CrashState) -> [String] {
        var lines = [
            "the store's state differs from transaction \(expected.lastTransaction)'s: \(found) vs \(expected)"
        ]
        for key in Set(found.accounts.keys).union(expected.accounts.keys).sorted()
        where found.accounts[key] != expected.accounts[key] {
            lines.append(
                "account \(key): \(String(describing: found.accounts[key])) vs "
                    + String(describing: expected.accounts[key]))
        }
        for key in Set(found.entries.keys).union(expected.entries.keys).sorted()
        where found.entries[key] != expected.entries[key] {
            lines.append(
                "entry \(key): \(String(describing: found.entries[key])) vs "
                    + String(describing: expected.entries[key]))
        }
        return Array(lines.prefix(12))
    }
}
