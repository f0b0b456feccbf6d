import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// Seeded interleavings of reads, edits, deletes and saves from three contexts with different
/// merge policies on one store, checked step by step against a plain model of what the store, and a
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
        case delete(context: Int, trip: Int)

        var description: String {
            switch self {
            case .read(let c): "read(c\(c))"
            case .edit(let c, let t, let b, let d):
                "edit(c\(c), t\(t), budget: \(b.map { "\($0)" } ?? "-"), done: \(d.map { "\($0)" } ?? "-"))"
            case .save(let c): "save(c\(c))"
            case .insert(let t, let b): "insert(t\(t), budget: \(b))"
            case .delete(let c, let t): "delete(c\(c), t\(t))"
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
            case 7 where trips > 0:
                steps.append(.delete(context: context, trip: Int.random(in: 0..<trips, using: &random)))
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
        var deleting: [Set<Int>] = Array(repeating: [], count: contexts.count)  // its unsaved deletes
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
                // A model the context deletes is not edited; one the store lost is found only while the
                // context has unsaved changes to it (they stay until a save or a rollback).
                guard !deleting[c].contains(number), edited[c][number] != nil || stored[number] != nil else {
                    continue
                }
                guard let model = try trip(number, in: c) else {
                    return (index, "context c\(c) no longer finds t\(number)")
                }
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
            case .delete(let c, let number):
                guard !deleting[c].contains(number), edited[c][number] == nil, stored[number] != nil else { continue }
                guard let model = try trip(number, in: c) else {
                    return (index, "context c\(c) does not find t\(number), which the store holds")
                }
                contexts[c].delete(model)
                deleting[c].insert(number)
            case .save(let c):
                var expected = stored
                var conflict = false
                // A save that changes or deletes a model another context deleted stores nothing (notFound).
                var missing = false
                for number in deleting[c] {
                    if stored[number] == nil { missing = true } else { expected[number] = nil }
                }
                for (number, mine) in edited[c] {
                    guard let current = stored[number] else {
                        missing = true
                        continue
                    }
                    guard let before = read[c][number] else { continue }
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
                    if missing {
                        return (index, "the save succeeded, but another context had deleted a model it saved")
                    }
                    for number in edited[c].keys { read[c][number] = expected[number] }
                    for number in deleting[c] { read[c][number] = nil }
                    edited[c] = [:]
                    deleting[c] = []
                    stored = expected
                } catch let error as DataStoreError {
                    // With both causes present, either error is right.
                    var expectedCodes: Set<DataStoreError.Code> = []
                    if conflict { expectedCodes.insert(.conflict) }
                    if missing { expectedCodes.insert(.notFound) }
                    if !expectedCodes.contains(error.code) {
                        return (index, "the save threw \(error.code), the model expects \(expectedCodes)")
                    }
                    contexts[c].rollback()
                    edited[c] = [:]
                    deleting[c] = []
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
