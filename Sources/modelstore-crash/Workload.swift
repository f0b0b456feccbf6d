/// The workload: transaction `k` is a list of operations chosen from the state after transaction
/// `k − 1` with a generator seeded by `k`, so the writer and the checker compute the same ones.
enum Operation: Equatable {
    case insertAccount(key: Int, name: String)
    case renameAccount(key: Int, name: String)
    case deleteAccount(key: Int)
    case insertEntry(key: Int, amount: Int, note: String, account: Int)
    case deleteEntry(key: Int)
}

/// What a store should hold: plain Swift, the oracle the checker compares the store with.
struct CrashState: Equatable, CustomStringConvertible {
    struct Account: Equatable {
        var name: String
        var total: Int
    }

    struct Entry: Equatable {
        var amount: Int
        var note: String
        var account: Int
    }

    var accounts: [Int: Account] = [:]
    var entries: [Int: Entry] = [:]
    var lastTransaction = 0

    var description: String {
        "transaction \(lastTransaction), \(accounts.count) accounts, \(entries.count) entries"
    }

    /// The state after transactions 1 through `last`.
    static func replayed(through last: Int) -> CrashState {
        var state = CrashState()
        for number in stride(from: 1, through: last, by: 1) { state.apply(state.plan(number), number: number) }
        return state
    }

    /// Applies transaction `number`'s operations, keeping every account's total the sum of its entries.
    mutating func apply(_ operations: [Operation], number: Int) {
        for operation in operations {
            switch operation {
            case .insertAccount(let key, let name): accounts[key] = Account(name: name, total: 0)
            case .renameAccount(let key, let name): accounts[key]?.name = name
            case .deleteAccount(let key):
                accounts[key] = nil
                entries = entries.filter { $0.value.account != key }
            case .insertEntry(let key, let amount, let note, let account):
                entries[key] = Entry(amount: amount, note: note, account: account)
                accounts[account]?.total += amount
            case .deleteEntry(let key):
                if let entry = entries.removeValue(forKey: key) { accounts[entry.account]?.total -= entry.amount }
            }
        }
        lastTransaction = number
    }

    /// The operations of transaction `number`: inserts with relationships, updates and deletes
    /// (cascading ones too), of varied sizes.
    func plan(_ number: Int) -> [Operation] {
        var random = SplitMix(seed: UInt64(number))
        var operations: [Operation] = []
        var accountKeys = accounts.keys.sorted()
        if accountKeys.count < 3 || random.below(10) == 0 {
            let key = number * 1000
            operations.append(.insertAccount(key: key, name: "account \(key)"))
            accountKeys.append(key)
        }
        if accountKeys.count > 4 && random.below(20) == 0 {
            let key = accountKeys.remove(at: random.below(accountKeys.count - 1))
            operations.append(.deleteAccount(key: key))
        }
        if random.below(4) == 0 {
            let key = accountKeys[random.below(accountKeys.count)]
            operations.append(.renameAccount(key: key, name: "account \(key) renamed in \(number)"))
        }
        let inserts = 1 + random.below(random.below(8) == 0 ? 40 : 5)
        for index in 0..<inserts {
            let note = String(repeating: "n", count: random.below(200))
            operations.append(
                .insertEntry(
                    key: number * 1000 + 1 + index, amount: random.below(201) - 100, note: note,
                    account: accountKeys[random.below(accountKeys.count)]))
        }
        if entries.count > 120 {
            let keys = entries.keys.sorted()
            var chosen: Set<Int> = []
            for _ in 0..<(1 + random.below(inserts + 3)) { chosen.insert(keys[random.below(keys.count)]) }
            operations += chosen.sorted().map { .deleteEntry(key: $0) }
        }
        return operations
    }
}

/// A small, fast, seedable generator (SplitMix64).
struct SplitMix {
    private var state: UInt64

    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
