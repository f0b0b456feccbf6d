import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// Four replicas (in memory, a JSON file, SQLite, an append log) make random offline edits against a shared
/// SQLite store and sync at random points. Afterwards every replica and the shared store hold what
/// a plain-Swift model of the documented merge says, and all agree. Seeded; a failure shrinks to a
/// short sequence of steps. `MODELSTORE_SYNC_RUNS` and `MODELSTORE_SYNC_STEPS` make the long run
/// (`scripts/sync-soak.sh`).
@Suite struct SyncRandomizedTests {
    enum Step: CustomStringConvertible {
        case insert(replica: Int, name: String, budget: Int)
        case setBudget(replica: Int, pick: Int, budget: Int)
        case setNotes(replica: Int, pick: Int, notes: String)
        case delete(replica: Int, pick: Int)
        case sync(replica: Int)

        var description: String {
            switch self {
            case .insert(let r, let name, let budget): "r\(r) insert \(name) \(budget)"
            case .setBudget(let r, let pick, let budget): "r\(r) budget #\(pick) = \(budget)"
            case .setNotes(let r, let pick, let notes): "r\(r) notes #\(pick) = \(notes)"
            case .delete(let r, let pick): "r\(r) delete #\(pick)"
            case .sync(let r): "r\(r) sync"
            }
        }
    }

    static func steps(seed: UInt64, count: Int) -> [Step] {
        var random = SplitMix64(seed: seed)
        var names = 0
        return (0..<count).map { _ in
            let replica = random.below(4)
            switch random.below(10) {
            case 0, 1:
                names += 1
                return .insert(replica: replica, name: "j\(names)", budget: random.below(5))
            case 2, 3: return .setBudget(replica: replica, pick: random.below(8), budget: random.below(5))
            case 4: return .setNotes(replica: replica, pick: random.below(8), notes: random.pick(["a", "b", "c"]))
            case 5: return .delete(replica: replica, pick: random.below(8))
            default: return .sync(replica: replica)
            }
        }
    }

    @Test func replicasConvergeOnWhatTheModelOfTheMergeSays() async throws {
        let environment = ProcessInfo.processInfo.environment
        let runs = environment["MODELSTORE_SYNC_RUNS"].flatMap(Int.init) ?? 4
        let length = environment["MODELSTORE_SYNC_STEPS"].flatMap(Int.init) ?? 40
        let firstSeed = environment["MODELSTORE_SYNC_SEED"].flatMap(UInt64.init) ?? 20_261_125
        for seed in firstSeed..<(firstSeed + UInt64(runs)) {
            let steps = Self.steps(seed: seed, count: length)
            guard let failure = try await Self.run(steps) else { continue }
            // Shrink: drop runs of steps while the run still fails.
            var shortest = steps
            var chunk = max(shortest.count / 2, 1)
            while chunk >= 1 {
                var start = 0
                var removed = false
                while start < shortest.count {
                    var candidate = shortest
                    candidate.removeSubrange(start..<min(start + chunk, candidate.count))
                    if try await Self.run(candidate) != nil {
                        shortest = candidate
                        removed = true
                    } else {
                        start += chunk
                    }
                }
                if !removed { chunk /= 2 }
            }
            let shortFailure = try await Self.run(shortest) ?? "?"
            Issue.record(
                "seed \(seed): \(failure)\nshrunk to \(shortest.count) steps: \(shortest)\nfails with: \(shortFailure)")
            return
        }
    }

    /// Runs the steps on real stores and on the model; the first difference, or `nil`.
    static func run(_ steps: [Step]) async throws -> String? {
        let directory = try TemporaryDirectory()
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        var configuration = SyncConfiguration()
        configuration.defaultPolicy = .remoteWins
        let replicas = [
            try Replica(url: "memory:", host: host, configuration: configuration),
            try Replica(url: "json:" + directory.path("r1.json"), host: host, configuration: configuration),
            try Replica(url: "sqlite:" + directory.path("r2.sqlite"), host: host, configuration: configuration),
            try Replica(url: "log:" + directory.path("r3-log"), host: host, configuration: configuration),
        ]
        var model = MergeModel(replicas: replicas.count)
        let finish = (0..<2).flatMap { _ in (0..<replicas.count).map { Step.sync(replica: $0) } }
        for step in steps + finish {
            switch step {
            case .insert(let r, let name, let budget):
                let context = replicas[r].context()
                context.insert(Journey(name, budget: budget))
                try context.save()
                model.insert(r, name, budget: budget)
            case .setBudget(let r, let pick, let budget):
                guard let name = model.pick(r, pick) else { continue }
                let context = replicas[r].context()
                guard
                    let journey = try context.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == name }))
                        .first
                else { return "r\(r) has no \(name)" }
                journey.budget = budget
                try context.save()
                model.local[r][name]?.budget = budget
            case .setNotes(let r, let pick, let notes):
                guard let name = model.pick(r, pick) else { continue }
                let context = replicas[r].context()
                guard
                    let journey = try context.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == name }))
                        .first
                else { return "r\(r) has no \(name)" }
                journey.notes = notes
                try context.save()
                model.local[r][name]?.notes = notes
            case .delete(let r, let pick):
                guard let name = model.pick(r, pick) else { continue }
                let context = replicas[r].context()
                guard
                    let journey = try context.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == name }))
                        .first
                else { return "r\(r) has no \(name)" }
                context.delete(journey)
                try context.save()
                model.delete(r, name)
            case .sync(let r):
                do {
                    try await replicas[r].engine.syncNow()
                } catch {
                    return "r\(r) sync failed: \(error)"
                }
                model.sync(r)
            }
        }
        for (r, replica) in replicas.enumerated() {
            let actual = try replica.journeys()
            let expected = model.local[r].map { "\($0.key): \($0.value.budget) \($0.value.notes) []" }.sorted()
            if actual != expected { return "r\(r) holds \(actual), the model says \(expected)" }
        }
        for (r, replica) in replicas.enumerated() {
            let recorded = try replica.engine.conflicts.list(includingResolved: true).count
            if recorded != model.conflicts[r] {
                return "r\(r) recorded \(recorded) conflict(s), the model met \(model.conflicts[r]) clash(es)"
            }
        }
        let shared = try ModelContext(host.container).fetch(FetchDescriptor<Journey>()).map {
            "\($0.name): \($0.budget) \($0.notes) []"
        }.sorted()
        let expected = model.server.map { "\($0.key): \($0.value.budget) \($0.value.notes) []" }.sorted()
        if shared != expected { return "the shared store holds \(shared), the model says \(expected)" }
        return nil
    }
}

/// The documented merge over plain dictionaries: what each replica and the shared store should hold.
/// Clashes go the remote's way (the policy the randomized test sets); an edit beats a delete.
struct MergeModel {
    struct Values: Equatable {
        var budget: Int
        var notes: String
    }

    var local: [[String: Values]]
    /// The values each replica last agreed on with the shared store; a key with `nil` is a model
    /// that will be pushed as new.
    var base: [[String: Values?]]
    /// Models each replica deleted and has not pushed.
    var deleted: [Set<String>]
    var cursor: [Int]
    /// The clashes each replica met: every one must be in its conflict records.
    var conflicts: [Int]
    var server: [String: Values] = [:]
    /// Which replica wrote which model, in order.
    var log: [(writer: Int, name: String)] = []

    init(replicas: Int) {
        local = Array(repeating: [:], count: replicas)
        base = Array(repeating: [:], count: replicas)
        deleted = Array(repeating: [], count: replicas)
        cursor = Array(repeating: 0, count: replicas)
        conflicts = Array(repeating: 0, count: replicas)
    }

    /// The `pick`-th model of a replica in name order, if it has any.
    func pick(_ r: Int, _ pick: Int) -> String? {
        let names = local[r].keys.sorted()
        return names.isEmpty ? nil : names[pick % names.count]
    }

    mutating func insert(_ r: Int, _ name: String, budget: Int) {
        local[r][name] = Values(budget: budget, notes: "")
    }

    mutating func delete(_ r: Int, _ name: String) {
        local[r][name] = nil
        if case .some(.some) = base[r][name] {
            deleted[r].insert(name)
        } else {
            base[r][name] = nil
        }
    }

    mutating func sync(_ r: Int) {
        while true {
            pull(r)
            if push(r) { return }
        }
    }

    private mutating func pull(_ r: Int) {
        let names = Set(log[cursor[r]...].filter { $0.writer != r }.map(\.name))
        cursor[r] = log.count
        for name in names.sorted() {
            let known = base[r].keys.contains(name)
            guard let remote = server[name] else {
                guard known else { continue }
                if deleted[r].contains(name) {
                    deleted[r].remove(name)
                    base[r][name] = nil
                } else if let mine = local[r][name], base[r][name] != .some(mine) {
                    base[r][name] = .some(nil)  // edit beats delete: pushed again as new
                    conflicts[r] += 1
                } else {
                    local[r][name] = nil
                    base[r][name] = nil
                }
                continue
            }
            if deleted[r].contains(name) {
                if base[r][name] == .some(remote) { continue }
                conflicts[r] += 1  // an edit there beats the delete here
                deleted[r].remove(name)
                local[r][name] = remote
                base[r][name] = .some(remote)
                continue
            }
            guard let mine = local[r][name] else {
                local[r][name] = remote
                base[r][name] = .some(remote)
                continue
            }
            let agreed = base[r][name] ?? nil
            var merged = mine
            merged.budget = Self.merge(agreed?.budget, mine.budget, remote.budget, clashes: &conflicts[r])
            merged.notes = Self.merge(agreed?.notes, mine.notes, remote.notes, clashes: &conflicts[r])
            local[r][name] = merged
            base[r][name] = .some(remote)
        }
    }

    /// One property, three ways: a side that did not change it takes the other's value; a clash
    /// goes the remote's way.
    static func merge<Value: Equatable>(_ agreed: Value?, _ mine: Value, _ theirs: Value, clashes: inout Int) -> Value {
        if mine == theirs { return theirs }
        if let agreed, agreed == mine { return theirs }
        if let agreed, agreed == theirs { return mine }
        clashes += 1
        return theirs
    }

    /// Pushes; `false` when the shared store refused (a model moved on there), after which the
    /// replica pulls and pushes again.
    private mutating func push(_ r: Int) -> Bool {
        var next = server
        var written: [String] = []
        for (name, mine) in local[r].sorted(by: { $0.key < $1.key }) {
            guard case .some(.some(let agreed)) = base[r][name] else {
                if let there = next[name] {
                    if there != mine { return false }
                    continue
                }
                next[name] = mine
                written.append(name)
                continue
            }
            guard var there = next[name] else { return false }
            if mine.budget != agreed.budget && there.budget != mine.budget {
                guard there.budget == agreed.budget else { return false }
                there.budget = mine.budget
            }
            if mine.notes != agreed.notes && there.notes != mine.notes {
                guard there.notes == agreed.notes else { return false }
                there.notes = mine.notes
            }
            if there != next[name] {
                next[name] = there
                written.append(name)
            }
        }
        for name in deleted[r].sorted() where next[name] != nil {
            next[name] = nil
            written.append(name)
        }
        server = next
        log += written.map { (r, $0) }
        for name in local[r].keys { base[r][name] = .some(server[name]) }
        for name in deleted[r] { base[r][name] = nil }
        deleted[r] = []
        return true
    }
}
