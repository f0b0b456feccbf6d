import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreAppendLog

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The writer: saves the workload's transactions one after another until it is killed, and
/// acknowledges each (its number on a line of the acknowledgement file, synced) once `save()` returned.
struct CrashWriter {
    let url: String
    let acknowledgements: String
    /// Compacts an append log after every this many transactions (0: never).
    let compactionInterval: Int

    func run() throws -> Never {
        // Opened first, so that with few file descriptors (the open-files test) the store meets the limit.
        let log = open(acknowledgements, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard log >= 0 else { throw CrashTestError("cannot open '\(acknowledgements)'") }
        let container = try ModelContainer(for: crashSchema, url: url, registry: .shared)
        let context = ModelContext(container)
        let meta =
            try context.fetch(FetchDescriptor<CrashMeta>()).first
            ?? {
                let meta = CrashMeta()
                context.insert(meta)
                return meta
            }()
        var accounts = Dictionary(
            uniqueKeysWithValues: try context.fetch(FetchDescriptor<CrashAccount>()).map { ($0.key, $0) })
        var entries = Dictionary(
            uniqueKeysWithValues: try context.fetch(FetchDescriptor<CrashEntry>()).map { ($0.key, $0) })
        var state = CrashState.replayed(through: meta.lastTransaction)
        let store = container.stores.first as? AppendLogStore
        var number = meta.lastTransaction
        // What the store holds now was checked: acknowledge it, so the transaction in flight is the next one.
        try acknowledge(number, to: log)
        while true {
            number += 1
            let operations = state.plan(number)
            for operation in operations {
                switch operation {
                case .insertAccount(let key, let name):
                    let account = CrashAccount()
                    account.key = key
                    account.name = name
                    context.insert(account)
                    accounts[key] = account
                case .renameAccount(let key, let name):
                    accounts[key]?.name = name
                case .deleteAccount(let key):
                    if let account = accounts.removeValue(forKey: key) {
                        for entry in account.entries { entries[entry.key] = nil }
                        context.delete(account)
                    }
                case .insertEntry(let key, let amount, let note, let accountKey):
                    let entry = CrashEntry()
                    entry.key = key
                    entry.amount = amount
                    entry.note = note
                    context.insert(entry)
                    entry.account = accounts[accountKey]
                    accounts[accountKey]?.total += amount
                    entries[key] = entry
                case .deleteEntry(let key):
                    if let entry = entries.removeValue(forKey: key) {
                        if let account = entry.account { account.total -= entry.amount }
                        context.delete(entry)
                    }
                }
            }
            meta.lastTransaction = number
            try context.save()
            state.apply(operations, number: number)
            try acknowledge(number, to: log)
            if let store, compactionInterval > 0, number % compactionInterval == 0 { _ = try store.compact() }
        }
    }
}

/// Appends transaction `number` to the acknowledgement file and syncs it.
private func acknowledge(_ number: Int, to file: Int32) throws {
    let line = Array("\(number)\n".utf8)
    guard write(file, line, line.count) == line.count, fsync(file) == 0 else {
        throw CrashTestError("cannot write the acknowledgement file")
    }
}

/// A failure of the harness itself (not of the store under test).
struct CrashTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
