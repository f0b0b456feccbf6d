import Foundation
import ModelStore
import ModelStoreSync
import ModelStoreTestSupport

/// Random offline edits on several replicas of one shared store, synced at random points, and the
/// check that afterwards every replica and the shared store hold what ``MergeModel`` says.
///
/// The stores come from the caller, so one run covers a shared SQLite store in this package and a
/// shared PostgreSQL store in the PostgreSQL package. Seeded; a failure shrinks to a short sequence.
public enum SyncRandomRun {
    /// One thing a replica does.
    public enum Step: CustomStringConvertible, Sendable {
        case insert(replica: Int, name: String, budget: Int)
        case setBudget(replica: Int, pick: Int, budget: Int)
        case setNotes(replica: Int, pick: Int, notes: String)
        case delete(replica: Int, pick: Int)
        case sync(replica: Int)
        /// A round that pushes first, as one after a local save does.
        case syncPushingFirst(replica: Int)

        /// The step in a few words, for a failure's report.
        public var description: String {
            switch self {
            case .insert(let r, let name, let budget): "r\(r) insert \(name) \(budget)"
            case .setBudget(let r, let pick, let budget): "r\(r) budget #\(pick) = \(budget)"
            case .setNotes(let r, let pick, let notes): "r\(r) notes #\(pick) = \(notes)"
            case .delete(let r, let pick): "r\(r) delete #\(pick)"
            case .sync(let r): "r\(r) sync"
            case .syncPushingFirst(let r): "r\(r) sync pushing first"
            }
        }
    }

    /// The stores of one run: the shared store's host, the replicas (each with the given
    /// configuration), and whatever must stay alive while they are used (a temporary directory).
    public struct Stores {
        /// The shared store's host.
        public var host: SyncHost
        /// The replicas.
        public var replicas: [Replica]
        /// Kept alive for the run.
        public var keep: [AnyObject]

        /// Stores for one run.
        public init(host: SyncHost, replicas: [Replica], keep: [AnyObject] = []) {
            self.host = host
            self.replicas = replicas
            self.keep = keep
        }
    }

    /// `count` random steps for `replicas` replicas from `seed`.
    public static func steps(seed: UInt64, count: Int, replicas: Int = 4) -> [Step] {
        var random = SplitMix64(seed: seed)
        var names = 0
        return (0..<count).map { _ in
            let replica = random.below(replicas)
            switch random.below(10) {
            case 0, 1:
                names += 1
                return .insert(replica: replica, name: "j\(names)", budget: random.below(5))
            case 2, 3: return .setBudget(replica: replica, pick: random.below(8), budget: random.below(5))
            case 4: return .setNotes(replica: replica, pick: random.below(8), notes: random.pick(["a", "b", "c"]))
            case 5: return .delete(replica: replica, pick: random.below(8))
            case 6, 7: return .sync(replica: replica)
            default: return .syncPushingFirst(replica: replica)
            }
        }
    }

    /// Runs `runs` seeds from `firstSeed` of `length` steps each on fresh stores; the first failure,
    /// shrunk, as a message, or `nil` when every run agreed with the model.
    public static func firstFailure(
        firstSeed: UInt64, runs: Int, length: Int, replicas: Int = 4,
        stores: (SyncConfiguration) throws -> Stores
    ) async throws -> String? {
        for seed in firstSeed..<(firstSeed + UInt64(runs)) {
            let steps = Self.steps(seed: seed, count: length, replicas: replicas)
            guard let failure = try await run(steps, stores: stores) else { continue }
            let shortest = try await shrink(steps) { try await run($0, stores: stores) != nil }
            let shortFailure = try await run(shortest, stores: stores) ?? "?"
            return
                "seed \(seed): \(failure)\nshrunk to \(shortest.count) steps: \(shortest)\nfails with: \(shortFailure)"
        }
        return nil
    }

    /// Runs the steps on real stores and on the model; the first difference, or `nil`.
    /// The sequence left after dropping runs of steps, halving the run length down to single steps,
    /// while `fails` still says it fails: `Shrinker.shrink` for a check that has to await.
    public static func shrink<Element>(_ steps: [Element], fails: ([Element]) async throws -> Bool) async rethrows
        -> [Element]
    {
        var shortest = steps
        var chunk = max(shortest.count / 2, 1)
        while chunk >= 1 {
            var start = 0
            var removed = false
            while start < shortest.count {
                var candidate = shortest
                candidate.removeSubrange(start..<min(start + chunk, candidate.count))
                if try await fails(candidate) {
                    shortest = candidate
                    removed = true
                } else {
                    start += chunk
                }
            }
            if !removed { chunk /= 2 }
        }
        return shortest
    }

    public static func run(_ steps: [Step], stores: (SyncConfiguration) throws -> Stores) async throws -> String? {
        var configuration = SyncConfiguration()
        configuration.defaultPolicy = .remoteWins
        // Pages of a few models, so pushes and pulls of a run take several pages (a model changed in
        // several transactions comes in more than one page of a pull) at the sizes a run reaches.
        configuration.pageSize = 3
        let made = try stores(configuration)
        let replicas = made.replicas
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
                guard let journey = try journey(named: name, in: context) else { return "r\(r) has no \(name)" }
                journey.budget = budget
                try context.save()
                model.local[r][name]?.budget = budget
            case .setNotes(let r, let pick, let notes):
                guard let name = model.pick(r, pick) else { continue }
                let context = replicas[r].context()
                guard let journey = try journey(named: name, in: context) else { return "r\(r) has no \(name)" }
                journey.notes = notes
                try context.save()
                model.local[r][name]?.notes = notes
            case .delete(let r, let pick):
                guard let name = model.pick(r, pick) else { continue }
                let context = replicas[r].context()
                guard let journey = try journey(named: name, in: context) else { return "r\(r) has no \(name)" }
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
            case .syncPushingFirst(let r):
                do {
                    try await replicas[r].engine.syncNow(pushFirst: true)
                } catch {
                    return "r\(r) sync pushing first failed: \(error)"
                }
                model.syncPushingFirst(r)
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
        let shared = try ModelContext(made.host.container).fetch(FetchDescriptor<Journey>()).map {
            "\($0.name): \($0.budget) \($0.notes) []"
        }.sorted()
        let expected = model.server.map { "\($0.key): \($0.value.budget) \($0.value.notes) []" }.sorted()
        if shared != expected { return "the shared store holds \(shared), the model says \(expected)" }
        return nil
    }

    private static func journey(named name: String, in context: ModelContext) throws -> Journey? {
        try context.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == name })).first
    }
}
