import ModelStoreTestSupport
import Testing

@testable import ModelStore

/// `PersistentIdentifiers` against a plain array of the same identifiers: runs, gaps, other
/// entities and stores, string keys and temporary identifiers, read by position and in order.
struct PersistentIdentifiersTests {
    private static func key(_ key: Int64, entity: String = "User", store: String = "s") -> PersistentIdentifier {
        .identifier(for: store, entityName: entity, primaryKey: key)
    }

    /// Reads `ids` every way the collection allows and compares each with `expected`.
    private static func mismatch(_ ids: PersistentIdentifiers, _ expected: [PersistentIdentifier]) -> String? {
        if ids.count != expected.count { return "count \(ids.count), expected \(expected.count)" }
        for position in expected.indices where ids[position] != expected[position] {
            return "position \(position): \(ids[position]), expected \(expected[position])"
        }
        if Array(ids) != expected { return "iteration \(Array(ids)), expected \(expected)" }
        if ids.array != expected { return "array \(ids.array), expected \(expected)" }
        if ids != PersistentIdentifiers(expected) { return "not equal to the same identifiers appended" }
        if let (store, entity, runs) = ids.keyRuns {
            let rebuilt = runs.flatMap { run in run.map { key($0, entity: entity, store: store) } }
            if rebuilt != expected { return "key runs \(runs) rebuild \(rebuilt.count) identifiers" }
            if runs.count > 1,
                zip(runs, runs.dropFirst()).contains(where: {
                    $0.upperBound != .max && $0.upperBound + 1 == $1.lowerBound
                })
            {
                return "adjacent runs \(runs) were not merged"
            }
        }
        return nil
    }

    @Test func consecutiveKeysAreOneRun() throws {
        let ids = PersistentIdentifiers(storeIdentifier: "s", entityName: "User", keys: 5...1_000_004)
        #expect(ids.count == 1_000_000)
        #expect(ids[0] == Self.key(5))
        #expect(ids[999_999] == Self.key(1_000_004))
        let runs = try #require(ids.keyRuns)
        #expect(runs.keys == [5...1_000_004])
        #expect(ids.description == "[User(s:5...1000004)]")
        #expect(ids == PersistentIdentifiers(storeIdentifier: "s", entityName: "User", keys: Array(5...1_000_004)))
        #expect(PersistentIdentifiers().isEmpty)
        #expect(PersistentIdentifiers(storeIdentifier: "s", entityName: "User", keys: [Int64]()).isEmpty)
    }

    @Test func mixedIdentifiersFallBackToAList() {
        let ids: [PersistentIdentifier] = [
            Self.key(1), Self.key(2), .identifier(for: "s", entityName: "User", primaryKey: "text"), Self.key(3),
        ]
        let collection = PersistentIdentifiers(ids)
        #expect(collection.keyRuns == nil)
        #expect(Self.mismatch(collection, ids) == nil)
        let temporary = PersistentIdentifier.temporary(entityName: "User")
        #expect(Self.mismatch([temporary, Self.key(1)], [temporary, Self.key(1)]) == nil)
    }

    /// Seeded random appends (runs, gaps, keys going down, then now and then another entity, store
    /// or kind of key), shrunk to a short list on failure.
    @Test func randomAppendsReadBackAsTheArray() {
        for seed in 1...200 as ClosedRange<UInt64> {
            var random = SplitMix64(seed: seed)
            var ids: [PersistentIdentifier] = []
            var next = Int64.random(in: 0..<100, using: &random)
            for _ in 0..<Int.random(in: 0..<60, using: &random) {
                switch Int.random(in: 0..<20, using: &random) {
                case 0: ids.append(Self.key(next, entity: "Post"))
                case 1: ids.append(Self.key(next, store: "other"))
                case 2: ids.append(.identifier(for: "s", entityName: "User", primaryKey: "k\(next)"))
                case 3...5: next &+= Int64.random(in: -2...2, using: &random)
                case 6: next = Int64.max - Int64.random(in: 0...2, using: &random)
                default: break
                }
                ids.append(Self.key(next))
                next = next == .max ? .min : next + 1
            }
            let report = Shrinker.failureReport(seed: seed, ids) { Self.mismatch(PersistentIdentifiers($0), $0) }
            #expect(report == nil, "\(report ?? "")")
        }
    }

    /// Seeded random ranges appended with `append(storeIdentifier:entityName:keys:)`: ranges that
    /// follow the last run join it, others start a run, and a range of another entity or store
    /// turns the collection into a list; read back every way against the array of the same keys.
    @Test func appendedRangesReadBackAsTheArray() {
        for seed in 1...100 as ClosedRange<UInt64> {
            var random = SplitMix64(seed: seed)
            var collection = PersistentIdentifiers()
            var ids: [PersistentIdentifier] = []
            var next = Int64(random.below(50))
            for _ in 0..<random.below(12) {
                let (entity, store) =
                    random.chance(10) ? ("Post", "s") : random.chance(10) ? ("User", "other") : ("User", "s")
                if random.chance(40) { next += Int64(random.below(5)) }
                let keys = next...(next + Int64(random.below(4)))
                collection.append(storeIdentifier: store, entityName: entity, keys: keys)
                ids += keys.map { Self.key($0, entity: entity, store: store) }
                next = keys.upperBound + 1
            }
            if let problem = Self.mismatch(collection, ids) {
                Issue.record("seed \(seed): \(problem)")
            }
            if ids.allSatisfy({ $0.entityName == "User" && $0.storeIdentifier == "s" }), !ids.isEmpty {
                // One entity and store: kept as runs, adjacent ranges joined (checked by `mismatch`).
                #expect(collection.keyRuns != nil, "seed \(seed)")
            }
        }
    }
}
