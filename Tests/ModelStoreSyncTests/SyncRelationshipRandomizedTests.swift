import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// Replicas move legs between journeys, add and delete both, offline and at random, then sync.
/// Afterwards every replica holds the same journeys, legs and links as the shared store, and every
/// link is consistent from both ends (a leg's journey lists the leg, and only its journey does).
/// Seeded; a failure shrinks to a short sequence.
@Suite struct SyncRelationshipRandomizedTests {
    enum Step: CustomStringConvertible {
        case addJourney(replica: Int, name: String)
        case addLeg(replica: Int, place: String, journey: Int)
        case move(replica: Int, leg: Int, journey: Int)
        case detach(replica: Int, leg: Int)
        case deleteLeg(replica: Int, leg: Int)
        case deleteJourney(replica: Int, journey: Int)
        case sync(replica: Int)

        var description: String {
            switch self {
            case .addJourney(let r, let name): "r\(r) journey \(name)"
            case .addLeg(let r, let place, let journey): "r\(r) leg \(place) to #\(journey)"
            case .move(let r, let leg, let journey): "r\(r) move leg #\(leg) to #\(journey)"
            case .detach(let r, let leg): "r\(r) detach leg #\(leg)"
            case .deleteLeg(let r, let leg): "r\(r) delete leg #\(leg)"
            case .deleteJourney(let r, let journey): "r\(r) delete journey #\(journey)"
            case .sync(let r): "r\(r) sync"
            }
        }
    }

    static func steps(seed: UInt64, count: Int) -> [Step] {
        var random = SplitMix64(seed: seed)
        var names = 0
        return (0..<count).map { _ in
            let r = random.below(3)
            switch random.below(12) {
            case 0:
                names += 1
                return .addJourney(replica: r, name: "j\(names)")
            case 1, 2:
                names += 1
                return .addLeg(replica: r, place: "l\(names)", journey: random.below(6))
            case 3, 4: return .move(replica: r, leg: random.below(8), journey: random.below(6))
            case 5: return .detach(replica: r, leg: random.below(8))
            case 6: return .deleteLeg(replica: r, leg: random.below(8))
            case 7: return .deleteJourney(replica: r, journey: random.below(6))
            default: return .sync(replica: r)
            }
        }
    }

    @Test func linksConvergeAndStayConsistentFromBothEnds() async throws {
        let environment = ProcessInfo.processInfo.environment
        let runs = environment["MODELSTORE_SYNC_RUNS"].flatMap(Int.init) ?? 4
        let length = environment["MODELSTORE_SYNC_STEPS"].flatMap(Int.init) ?? 40
        let firstSeed = environment["MODELSTORE_SYNC_SEED"].flatMap(UInt64.init) ?? 7_000
        for seed in firstSeed..<(firstSeed + UInt64(runs)) {
            let steps = Self.steps(seed: seed, count: length)
            guard let failure = try await Self.run(steps) else { continue }
            let shortest = try await SyncRandomRun.shrink(steps) { try await Self.run($0) != nil }
            let shortFailure = try await Self.run(shortest) ?? "?"
            Issue.record(
                "seed \(seed): \(failure)\nshrunk to \(shortest.count) steps: \(shortest)\nfails with: \(shortFailure)")
            return
        }
    }

    static func run(_ steps: [Step]) async throws -> String? {
        let directory = try TemporaryDirectory()
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        var configuration = SyncConfiguration()
        configuration.defaultPolicy = .remoteWins  // decisions independent of the clock, so runs repeat
        configuration.pageSize = 3  // pushes and pulls of many pages, so links cross from page to page
        let replicas = [
            try Replica(url: "json:" + directory.path("r0.json"), host: host, configuration: configuration),
            try Replica(url: "sqlite:" + directory.path("r1.sqlite"), host: host, configuration: configuration),
            try Replica(url: "memory:", host: host, configuration: configuration),
        ]
        let finish = (0..<2).flatMap { _ in (0..<replicas.count).map { Step.sync(replica: $0) } }
        for step in steps + finish {
            switch step {
            case .addJourney(let r, let name):
                let context = replicas[r].context()
                context.insert(Journey(name))
                try context.save()
            case .addLeg(let r, let place, let pick):
                let context = replicas[r].context()
                let leg = Leg(place)
                context.insert(leg)
                leg.journey = pickModel(try context.fetch(FetchDescriptor<Journey>()), pick) { $0.name }
                try context.save()
            case .move(let r, let legPick, let journeyPick):
                let context = replicas[r].context()
                guard let leg = pickModel(try context.fetch(FetchDescriptor<Leg>()), legPick, \.place) else { continue }
                leg.journey = pickModel(try context.fetch(FetchDescriptor<Journey>()), journeyPick) { $0.name }
                try context.save()
            case .detach(let r, let legPick):
                let context = replicas[r].context()
                guard let leg = pickModel(try context.fetch(FetchDescriptor<Leg>()), legPick, \.place) else { continue }
                leg.journey = nil
                try context.save()
            case .deleteLeg(let r, let legPick):
                let context = replicas[r].context()
                guard let leg = pickModel(try context.fetch(FetchDescriptor<Leg>()), legPick, \.place) else { continue }
                context.delete(leg)
                try context.save()
            case .deleteJourney(let r, let pick):
                let context = replicas[r].context()
                guard let journey = pickModel(try context.fetch(FetchDescriptor<Journey>()), pick, \.name) else {
                    continue
                }
                context.delete(journey)
                try context.save()
            case .sync(let r):
                do {
                    try await replicas[r].engine.syncNow()
                } catch {
                    return "r\(r) sync failed: \(error)"
                }
            }
        }
        let shared = try describe(ModelContext(host.container))
        if let problem = shared.problem { return "the shared store: \(problem)" }
        for (r, replica) in replicas.enumerated() {
            let local = try describe(replica.context())
            if let problem = local.problem { return "r\(r): \(problem)" }
            if local.lines != shared.lines { return "r\(r) holds \(local.lines), the shared store \(shared.lines)" }
        }
        return nil
    }

    static func pickModel<M>(_ models: [M], _ pick: Int, _ key: (M) -> String) -> M? {
        let sorted = models.sorted { key($0) < key($1) }
        return sorted.isEmpty ? nil : sorted[pick % sorted.count]
    }

    /// Every journey with its legs and every leg with its journey, and the first link that the two
    /// ends disagree on.
    static func describe(_ context: ModelContext) throws -> (lines: [String], problem: String?) {
        let journeys = try context.fetch(FetchDescriptor<Journey>())
        let legs = try context.fetch(FetchDescriptor<Leg>())
        var lines = journeys.map { "\($0.name): \($0.legs.map(\.place).sorted())" }
        lines += legs.map { "\($0.place) -> \($0.journey?.name ?? "-")" }
        for leg in legs {
            let listing = journeys.filter { $0.legs.contains { $0 === leg } }.map(\.name)
            let expected = leg.journey.map { [$0.name] } ?? []
            if listing.sorted() != expected {
                return (lines.sorted(), "leg \(leg.place) points at \(expected) but is listed by \(listing)")
            }
        }
        return (lines.sorted(), nil)
    }
}
