import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// Seeded interleavings of reads, edits and saves from three contexts with different merge
/// policies on one store, checked step by step against a plain model of what the store, and a
/// live query over it, must hold. A failure is shrunk to a short list of steps and printed.
///
/// `MODELSTORE_MERGE_SEEDS=N` runs N seeds (the long run; `swift test` runs a few).
@MainActor
struct MergeRandomizedTests {
    static let policies: [MergePolicy] = [.mergeByProperty, .storeTrumps, .error]
    nonisolated static var seeds: [UInt64] {
        let count = ProcessInfo.processInfo.environment["MODELSTORE_MERGE_SEEDS"].flatMap(Int.init) ?? 6
        return (0..<UInt64(count)).map { 0x5EED + $0 }
    }

    enum Step: CustomStringConvertible {
        case read(context: Int)
        case edit(context: Int, trip: Int, budget: Double?, done: Bool?)
        case save(context: Int)
        case insert(trip: Int, budget: Double)

        var description: String {
            switch self {
            case .read(let c): "read(c\(c))"
            case .edit(let c, let t, let b, let d):
                "edit(c\(c), t\(t), budget: \(b.map { "\($0)" } ?? "-"), done: \(d.map { "\($0)" } ?? "-"))"
            case .save(let c): "save(c\(c))"
            case .insert(let t, let b): "insert(t\(t), budget: \(b))"
            }
        }
    }

    /// A trip's stored attributes in the model.
    struct Values: Equatable {
        var budget: Double
        var isDone: Bool
    }

    static func steps(seed: UInt64, count: Int = 60) -> [Step] {
        var random = SplitMix64(seed: seed)
        var trips = 0
        var steps: [Step] = []
        for _ in 0..<count {
            let context = Int.random(in: 0..<3, using: &random)
            let kind = Int.random(in: 0..<10, using: &random)
            switch kind {
            case 0...1 where trips < 6:
                steps.append(.insert(trip: trips, budget: Double(Int.random(in: 0..<100, using: &random))))
                trips += 1
            case 2...3: steps.append(.read(context: context))
            case 4...6 where trips > 0:
                let budget = Bool.random(using: &random) ? Double(Int.random(in: 0..<100, using: &random)) : nil
                let done = budget == nil || Bool.random(using: &random) ? Bool.random(using: &random) : nil
                steps.append(
                    .edit(context: context, trip: Int.random(in: 0..<trips, using: &random), budget: budget, done: done)
                )
            default: steps.append(.save(context: context))
            }
        }
        return steps
    }

    /// Runs the steps; returns the first step whose outcome differs from the model, with why.
    static func firstFailure(_ steps: [Step]) throws -> (index: Int, reason: String)? {
        let container = try ModelContainer(for: Trip.self, configurations: .inMemory())
        let contexts = policies.map { policy -> ModelContext in
            let context = ModelContext(container)
            context.mergePolicy = policy
            return context
        }
        let query = LiveQuery(
            FetchDescriptor<Trip>(predicate: #Predicate { $0.budget >= 50 }, sortBy: [SortDescriptor(\.budget)]),
            in: container.mainContext)
        var stored: [Int: Values] = [:]
        var read: [[Int: Values]] = Array(repeating: [:], count: contexts.count)  // what each context read
        var edited: [[Int: Values]] = Array(repeating: [:], count: contexts.count)  // its unsaved values
        func trip(_ index: Int, in context: Int) throws -> Trip? {
            try contexts[context].fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == "t\(index)" })).first
        }
        for (index, step) in steps.enumerated() {
            switch step {
            case .insert(let number, let budget):
                let context = ModelContext(container)
                context.insert(Trip(name: "t\(number)", budget: budget))
                try context.save()
                stored[number] = Values(budget: budget, isDone: false)
            case .read(let c):
                _ = try contexts[c].fetch(FetchDescriptor<Trip>())
                for (number, values) in stored where edited[c][number] == nil { read[c][number] = values }
            case .edit(let c, let number, let budget, let done):
                guard let model = try trip(number, in: c) else { continue }
                // The fetch refreshed the model unless it has unsaved changes.
                if edited[c][number] == nil { read[c][number] = stored[number] }
                var values = edited[c][number] ?? read[c][number]!
                if let budget {
                    model.budget = budget
                    values.budget = budget
                }
                if let done {
                    model.isDone = done
                    values.isDone = done
                }
                edited[c][number] = values
            case .save(let c):
                var expected = stored
                var conflict = false
                for (number, mine) in edited[c] {
                    guard let before = read[c][number], let current = stored[number] else { continue }
                    var result = mine
                    switch policies[c] {
                    case .mergeByProperty:
                        if mine.budget == before.budget { result.budget = current.budget }
                        if mine.isDone == before.isDone { result.isDone = current.isDone }
                    case .storeTrumps:
                        if current.budget != before.budget { result.budget = current.budget }
                        if current.isDone != before.isDone { result.isDone = current.isDone }
                    case .error:
                        if current != before { conflict = true }
                    case .objectTrumps: break
                    }
                    expected[number] = result
                }
                do {
                    try contexts[c].save()
                    if conflict {
                        return (index, "the save succeeded, but another context had changed a model it saved")
                    }
                    for number in edited[c].keys { read[c][number] = expected[number] }
                    edited[c] = [:]
                    stored = expected
                } catch DataStoreError.conflict {
                    if !conflict { return (index, "the save threw a conflict the model does not expect") }
                    contexts[c].rollback()
                    edited[c] = [:]
                    for number in read[c].keys { read[c][number] = nil }
                }
            }
            let actual = try ModelContext(container).fetch(FetchDescriptor<Trip>())
            let found = Dictionary(
                uniqueKeysWithValues: actual.map {
                    (Int($0.name.dropFirst())!, Values(budget: $0.budget, isDone: $0.isDone))
                })
            if found != stored { return (index, "the store holds \(found), the model \(stored)") }
            query.applyPendingChanges()
            let live = query.results.map(\.name)
            let fresh = try container.mainContext.fetch(query.descriptor).map(\.name)
            if live != fresh { return (index, "the live query shows \(live), a fetch \(fresh)") }
        }
        return nil
    }

    @Test(arguments: seeds)
    func interleavedSavesFollowTheMergePolicies(seed: UInt64) throws {
        var steps = Self.steps(seed: seed)
        guard var failure = try Self.firstFailure(steps) else { return }
        // Shrink: drop steps one at a time while the run still fails.
        steps = Array(steps[...failure.index])
        var index = 0
        while index < steps.count {
            var shorter = steps
            shorter.remove(at: index)
            if let smaller = try Self.firstFailure(shorter) {
                steps = Array(shorter[...smaller.index])
                failure = smaller
            } else {
                index += 1
            }
        }
        Issue.record("seed \(seed): \(failure.reason), after \(steps.count) steps: \(steps)")
    }
}
