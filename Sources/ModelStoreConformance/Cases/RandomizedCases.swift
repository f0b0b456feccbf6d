import Foundation
import ModelStore

/// The seeded, shrinking differential case: random inserts, updates, deletes, relationship changes,
/// batch operations, reopens and queries over the value corpus, run on the adapter and on the suite's
/// reference store, which must agree after every step. A difference is shrunk to the shortest list of
/// steps that still shows it.
///
/// A short run by default (three seeds of forty steps); `MODELSTORE_CONFORMANCE_RANDOM=long` runs a
/// hundred seeds of eighty steps, and `MODELSTORE_CONFORMANCE_SEED=N` replays one seed.
enum RandomizedCases {
    static let all: [CaseDefinition] = [
        CaseDefinition(
            .differential, "randomOperationsMatchTheReference",
            "Seeded random inserts, updates, deletes, relationship changes, batch operations, reopens, predicates and "
                + "sorts over the value corpus leave the adapter and the reference store alike after every step; a "
                + "difference fails with the shortest sequence of steps that shows it."
        ) { env in
            try run(env)
        }
    ]

    /// The seeds and the steps per seed this run uses.
    static var settings: (seeds: [UInt64], steps: Int) {
        let environment = ProcessInfo.processInfo.environment
        if let text = environment["MODELSTORE_CONFORMANCE_SEED"], let seed = UInt64(text) {
            return ([seed], environment["MODELSTORE_CONFORMANCE_RANDOM"] == "long" ? 80 : 40)
        }
        if environment["MODELSTORE_CONFORMANCE_RANDOM"] == "long" { return (Array(1...100), 80) }
        return ([1, 2, 3], 40)
    }

    static func run(_ env: CaseEnvironment) throws {
        let durable = env.capabilities.contains(.durability)
        var attempt = 0
        let (seeds, count) = settings
        for seed in seeds {
            let steps = generate(seed: seed, count: count, durable: durable)
            guard let (index, difference) = try replay(steps, env, attempt: &attempt) else { continue }
            let (shortest, last) = try shrink(Array(steps[...index]), difference, env, attempt: &attempt)
            let listing = shortest.enumerated().map { "  \($0.offset + 1). \($0.element)" }.joined(separator: "\n")
            throw env.failure(
                "the random run of seed \(seed) left the adapter and the reference store different; shortest "
                    + "reproduction (\(shortest.count) of \(index + 1) steps), replay with "
                    + "MODELSTORE_CONFORMANCE_SEED=\(seed):\n\(listing)\nafter the last step: \(last)")
        }
    }

    /// A seed's steps: a few inserts first, then a mix weighted towards inserts and queries.
    static func generate(seed: UInt64, count: Int, durable: Bool) -> [RandomStep] {
        var random = SeededGenerator(seed: seed)
        var next = 0
        var steps: [RandomStep] = []
        func insert() -> RandomStep {
            next += 1
            return .insert(number: next, row: Int.random(in: 0..<1000, using: &random))
        }
        for _ in 0..<4 { steps.append(insert()) }
        let predicates = RandomCorpus.predicates.count
        while steps.count < count {
            let target = Int.random(in: 0..<50, using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<28: steps.append(insert())
            case 28..<43: steps.append(.update(target: target, row: Int.random(in: 0..<1000, using: &random)))
            case 43..<51: steps.append(.delete(target: target))
            case 51..<59:
                let folder = Int.random(in: 0..<4, using: &random)
                steps.append(.link(target: target, folder: folder == 3 ? nil : folder))
            case 59..<64:
                steps.append(
                    .batchUpdate(
                        predicate: Int.random(in: 0..<predicates, using: &random),
                        title: Int.random(in: 0..<ValueCorpus.texts.count, using: &random)))
            case 64..<68: steps.append(.batchDelete(predicate: Int.random(in: 0..<predicates, using: &random)))
            case 68..<73 where durable: steps.append(.reopen)
            default:
                steps.append(
                    .query(
                        predicate: Int.random(in: 0..<predicates, using: &random),
                        sort: Int.random(in: 0..<RandomCorpus.sorts.count, using: &random),
                        window: Int.random(in: 0..<12, using: &random)))
            }
        }
        return steps
    }

    /// Runs the steps on fresh stores; returns the first step after which they differ, and how.
    static func replay(
        _ steps: [RandomStep], _ env: CaseEnvironment, attempt: inout Int
    ) throws -> (Int, String)? {
        attempt += 1
        let run = try DifferentialRun(env, name: "random-\(attempt)")
        for (index, step) in steps.enumerated() {
            do {
                try run.apply(step)
            } catch let difference as Difference {
                return (index, difference.description)
            }
        }
        return nil
    }

    /// Removes chunks of steps, halving their size down to one, while the stores still differ; stops after
    /// 300 replays or 30 seconds with the shortest found.
    static func shrink(
        _ steps: [RandomStep], _ difference: String, _ env: CaseEnvironment, attempt: inout Int
    ) throws -> ([RandomStep], String) {
        var shortest = steps
        var last = difference
        let deadline = Date().addingTimeInterval(30)
        var replays = 0
        var chunk = max(1, shortest.count / 2)
        while chunk >= 1 {
            var start = 0
            while start < shortest.count {
                guard replays < 300, Date() < deadline else { return (shortest, last) }
                var candidate = shortest
                candidate.removeSubrange(start..<min(start + chunk, candidate.count))
                replays += 1
                if !candidate.isEmpty, let (index, found) = try replay(candidate, env, attempt: &attempt) {
                    shortest = Array(candidate[...index])
                    last = found
                } else {
                    start += chunk
                }
            }
            chunk /= 2
        }
        return (shortest, last)
    }
}

/// SplitMix64: a small seeded generator, so a seed replays the same steps on every platform.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
