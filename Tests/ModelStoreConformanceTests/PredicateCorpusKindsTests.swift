import ModelStore
import ModelStoreConformance
import Testing

/// The predicate corpus speaks the store's vocabulary: each query's `StoreFilter.Kinds` are exactly
/// what the core pushes for it, and together the queries push every kind the core has, or say why not.
struct PredicateCorpusKindsTests {
    /// Every single kind of the core's vocabulary, one bit each.
    static let coreKinds: [StoreFilter.Kinds] = (0..<32).map { StoreFilter.Kinds(rawValue: 1 << $0) }.filter {
        StoreFilter.Kinds.all.contains($0)
    }

    /// The kinds the core pushes for each corpus query, read by a spy in front of the reference store
    /// (which runs every kind, so whatever the translator makes of a predicate reaches it).
    static func pushedKinds() throws -> [(query: String, declared: StoreFilter.Kinds, pushed: StoreFilter.Kinds)] {
        let log = SpyLog()
        let container = try ModelContainer(
            for: ConformanceSuite.fixtureSchema,
            configurations: [SpyConfiguration(inner: ReferenceStoreConfiguration(), log: log)])
        return try PredicateCorpus.queries.map { query in
            log.reset()
            _ = try query.fetch(ModelContext(container), nil, nil)
            let pushed = log.all.reduce(into: StoreFilter.Kinds()) { $0.formUnion($1.filterKinds) }
            return (query.name, query.kinds, pushed)
        }
    }

    @Test func everyQueryDeclaresTheKindsTheCorePushes() throws {
        let results = try Self.pushedKinds()
        #expect(results.count == PredicateCorpus.queries.count && results.count >= 80)
        for result in results where result.declared != result.pushed {
            Issue.record(
                Comment(
                    rawValue: "the corpus query '\(result.query)' declares the kinds \(result.declared), but the core "
                        + "pushes it as \(result.pushed): correct its kinds, or the refusal check tests it on the "
                        + "wrong stores"))
        }
    }

    @Test func theCorpusPushesEveryCoreKindOrSaysWhyNot() throws {
        #expect(Self.coreKinds.count >= 13, "StoreFilter.Kinds.all lost kinds: \(StoreFilter.Kinds.all)")
        let pushed = try Self.pushedKinds().reduce(into: StoreFilter.Kinds()) { $0.formUnion($1.pushed) }
        let uncovered = PredicateCorpus.uncoveredKinds.reduce(into: StoreFilter.Kinds()) { $0.formUnion($1.kinds) }
        for kind in Self.coreKinds {
            #expect(
                pushed.contains(kind) || uncovered.contains(kind),
                Comment(
                    rawValue: "no corpus query is pushed as the core's filter kind \(kind), and "
                        + "PredicateCorpus.uncoveredKinds gives no reason: add a query that uses it"))
            #expect(
                !(pushed.contains(kind) && uncovered.contains(kind)),
                Comment(
                    rawValue: "the core's filter kind \(kind) is pushed by a corpus query but listed in "
                        + "uncoveredKinds: remove the stale reason"))
        }
        for (kinds, reason) in PredicateCorpus.uncoveredKinds {
            #expect(!reason.isEmpty && !kinds.isEmpty && StoreFilter.Kinds.all.isSuperset(of: kinds))
        }
    }
}
