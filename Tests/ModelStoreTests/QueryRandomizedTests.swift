import Foundation
import ModelStore
import ModelStoreTestSupport
import Testing

/// Random data and random predicates, sorts and windows: pushed, partially pushed and in memory agree.
struct QueryRandomizedTests {
    @Test(arguments: [0x5EED_0001, 0x5EED_0002, 0x5EED_0003] as [UInt64])
    func randomPredicatesAgreeEveryWay(seed: UInt64) throws {
        let harness = try QueryHarness(seed: RandomData.seed(seed))
        var rng = SplitMix64(seed: seed &* 31)
        var translated = 0
        for round in 0..<120 {
            let shape = RandomShape.random(&rng)
            let (descriptor, label) = RandomSort.descriptor(&rng, predicate: shape.predicate)
            harness.expectAgreement("seed \(seed) round \(round): \(shape)\(label)") { _ in descriptor }
            let explanation = try ModelContext(harness.container(.pushed)).explain(descriptor)
            if explanation.conditions.allSatisfy({ $0.location == .store }) { translated += 1 }
        }
        // Most random predicates push down completely; the rest exercise the residual paths.
        #expect(translated > 60)
    }

    @Test func capabilityMixesAgree() throws {
        let mixes: [QueryCapabilities] = [
            .none,
            QueryCapabilities(
                filters: [.equality], inexactFilters: [.textContains, .textPrefix], sorting: true,
                offsetAndLimit: true),
            QueryCapabilities(filters: .all, inexactFilters: [], sorting: false, offsetAndLimit: false),
            QueryCapabilities(
                filters: [.ordering, .range, .negation], inexactFilters: [.equality, .membership], sorting: true),
        ]
        for (index, capabilities) in mixes.enumerated() {
            let harness = try QueryHarness(limited: capabilities, seed: RandomData.seed(UInt64(index) + 77))
            var rng = SplitMix64(seed: UInt64(index) &+ 1_234)
            for round in 0..<40 {
                let shape = RandomShape.random(&rng)
                let (descriptor, label) = RandomSort.descriptor(&rng, predicate: shape.predicate)
                harness.expectAgreement("mix \(index) round \(round): \(shape)\(label)") { _ in descriptor }
            }
        }
    }
}
