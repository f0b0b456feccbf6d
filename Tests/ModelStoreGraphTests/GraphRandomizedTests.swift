import Foundation
import ModelStoreTestSupport
import Testing

/// Seeded random sessions of inserts, deletes, relationship changes, awkward values, saves,
/// rollbacks, reopens and fetches, run on every store and on the plain-Swift oracle; a failure is
/// shrunk to a short sequence and printed as code. `swift test` runs a short version; set
/// `MODELSTORE_GRAPH_SEEDS` and `MODELSTORE_GRAPH_STEPS` (or run `scripts/graph-random.sh`) for a long one.
struct GraphRandomizedTests {
    static let seeds = Int(ProcessInfo.processInfo.environment["MODELSTORE_GRAPH_SEEDS"] ?? "") ?? 50
    static let steps = Int(ProcessInfo.processInfo.environment["MODELSTORE_GRAPH_STEPS"] ?? "") ?? 80

    @Test(arguments: StoreKind.allCases)
    func randomSessionsMatchTheOracle(kind: StoreKind) throws {
        var stepsRun = 0
        for seed in 0..<UInt64(Self.seeds) {
            let steps = GraphStepGenerator.steps(seed: seed &+ 0x5EED, count: Self.steps)
            stepsRun += steps.count
            guard let difference = GraphSession.firstDifference(steps, on: kind) else { continue }
            let shrunk = Shrinker.shrink(steps) { GraphSession.firstDifference($0, on: kind) != nil }
            let reason = GraphSession.firstDifference(shrunk, on: kind) ?? difference
            Issue.record(
                """
                \(kind) store differs from the oracle (seed \(seed), \(steps.count) steps, shrunk to \(shrunk.count)):
                \(reason)
                Reproduce with:
                let steps: [GraphStep] = [
                \(shrunk.map { "    \($0)," }.joined(separator: "\n"))
                ]
                """)
            return
        }
        print("graph oracle: \(kind): \(Self.seeds) seeds, \(stepsRun) steps, no difference")
    }

    /// The reproductions of issue 12, replayed as sessions.
    @Test(arguments: StoreKind.allCases)
    func knownSequencesMatchTheOracle(kind: StoreKind) {
        let sequences: [[GraphStep]] = [
            [
                .insertToy(label: "ball"), .save, .insertPet(name: "Rex", weight: 1, owner: nil),
                .addToy(pet: 0, toy: 0, fromToySide: false), .delete(.pet, 0), .save, .reopen,
            ],
            [
                .insertPet(name: "Rex", weight: 1, owner: nil), .save, .insertToy(label: "ball"),
                .addToy(pet: 0, toy: 0, fromToySide: true), .delete(.toy, 0), .delete(.pet, 0), .save, .reopen,
            ],
            [
                .insertOwner(name: "Ann"), .insertOwner(name: "Bob"), .insertPet(name: "Rex", weight: 1, owner: 0),
                .save,
                .delete(.owner, 0), .setOwner(pet: 0, owner: 0), .rollback, .save, .reopen,
            ],
            [
                .insertPet(name: "e\u{301}mile", weight: 0.0, owner: nil), .save, .setWeight(pet: 0, -0.0),
                .setName(pet: 0, "\u{e9}mile"), .save, .reopen, .fetchPets(PetQuery(filter: .nameEquals("\u{e9}mile"))),
            ],
            [
                .insertOwner(name: "Ann"), .insertPet(name: "Rex", weight: .nan, owner: 0), .save,
                .fetchPets(PetQuery(filter: .weightNotEquals(.nan))), .fetchPets(PetQuery(filter: .weightEquals(.nan))),
                .reopen,
            ],
        ]
        for steps in sequences {
            #expect(GraphSession.firstDifference(steps, on: kind) == nil, "\(steps)")
        }
    }
}

/// Seeded generation of graph steps.
enum GraphStepGenerator {
    static let names = ["Rex", "e\u{301}mile", "\u{e9}mile", "\u{c9}mile", "emile", ""]
    static let weights: [Double] = [0.0, -0.0, 1.5, -2, .nan, .infinity, -.infinity, 1e-300]

    static func steps(seed: UInt64, count: Int) -> [GraphStep] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in step(&random) }
    }

    private static func step(_ random: inout SplitMix64) -> GraphStep {
        let index = Int(random.next() % 8)
        let other = Int(random.next() % 8)
        let flag = random.next() % 2 == 0
        let name = names[Int(random.next() % UInt64(names.count))]
        let weight = weights[Int(random.next() % UInt64(weights.count))]
        switch random.next() % 100 {
        case 0..<8: return .insertOwner(name: name)
        case 8..<22: return .insertPet(name: name, weight: weight, owner: flag ? other : nil)
        case 22..<30: return .insertToy(label: name)
        case 30..<40: return .delete(GraphKind.allCases[Int(random.next() % 3)], index)
        case 40..<44: return .setOwner(pet: index, owner: flag ? other : nil)
        case 44..<46: return .adoptPet(owner: other, pet: index)
        case 46..<48: return .releasePet(owner: other, pet: index)
        case 48..<58: return .addToy(pet: index, toy: other, fromToySide: flag)
        case 58..<63: return .removeToy(pet: index, toy: other, fromToySide: flag)
        case 63..<69: return .setWeight(pet: index, weight)
        case 69..<74: return .setName(pet: index, name)
        case 74..<84: return .save
        case 84..<88: return .rollback
        case 88..<92: return .reopen
        default:
            let filters: [PetQuery.Filter?] = [
                nil, .weightAbove(weight), .weightEquals(weight), .weightNotEquals(weight), .nameEquals(name),
                .withoutOwner,
            ]
            return .fetchPets(
                PetQuery(
                    filter: filters[Int(random.next() % UInt64(filters.count))], byName: random.next() % 2 == 0,
                    descending: flag,
                    offset: random.next() % 3 == 0 ? Int(random.next() % 3) : nil,
                    limit: random.next() % 3 == 0 ? Int(random.next() % 4) : nil))
        }
    }
}
