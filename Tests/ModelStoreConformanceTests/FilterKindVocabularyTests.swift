import ModelStore
import ModelStoreConformance
import Testing

/// The suite's filter kinds (`ConformanceFilterKind`) and the core's (`StoreFilter.Kinds`) agree both
/// ways, so neither can grow a kind the other does not account for.
struct FilterKindVocabularyTests {
    /// Every single kind of the core's vocabulary, one bit each.
    static let coreKinds: [StoreFilter.Kinds] = (0..<32).map { StoreFilter.Kinds(rawValue: 1 << $0) }.filter {
        StoreFilter.Kinds.all.contains($0)
    }

    @Test func everySuiteKindHasCoreCounterparts() {
        for kind in ConformanceFilterKind.allCases {
            if kind == .arithmetic {
                #expect(kind.storeFilterKinds.isEmpty, "arithmetic is evaluated in memory; it maps to no store kind")
            } else {
                #expect(
                    !kind.storeFilterKinds.isEmpty,
                    "the suite's filter kind '\(kind)' maps to no StoreFilter.Kinds: add its counterpart")
                #expect(StoreFilter.Kinds.all.isSuperset(of: kind.storeFilterKinds))
            }
        }
    }

    @Test func everyCoreKindIsMappedOrDeclaredUnmapped() {
        #expect(Self.coreKinds.count >= 12, "StoreFilter.Kinds.all lost kinds: \(StoreFilter.Kinds.all)")
        let mapped = ConformanceFilterKind.allCases.reduce(into: StoreFilter.Kinds()) {
            $0.formUnion($1.storeFilterKinds)
        }
        let unmapped = ConformanceFilterKind.unmappedStoreFilterKinds.reduce(into: StoreFilter.Kinds()) {
            $0.formUnion($1.kinds)
        }
        for kind in Self.coreKinds {
            #expect(
                mapped.contains(kind) || unmapped.contains(kind),
                "the core's filter kind \(kind) has no counterpart in ConformanceFilterKind nor a reason in unmappedStoreFilterKinds"
            )
            #expect(
                !(mapped.contains(kind) && unmapped.contains(kind)),
                "the core's filter kind \(kind) is both mapped and declared unmapped: remove the stale declaration")
        }
        for (kinds, reason) in ConformanceFilterKind.unmappedStoreFilterKinds {
            #expect(!reason.isEmpty && !kinds.isEmpty && StoreFilter.Kinds.all.isSuperset(of: kinds))
        }
    }
}
