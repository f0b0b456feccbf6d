import Foundation
import ModelStore

/// The adapter's declarations match what its store does.
enum DeclarationCases {
    static let all: [CaseDefinition] = [
        CaseDefinition(
            .declarations, "batchingMatchesConformance",
            "A store declaring batching conforms to DataStoreBatching, and one that conforms declares it."
        ) { env in
            let store = try env.openStore()
            let conforms = store is any DataStoreBatching
            let declares = env.adapter.capabilities.contains(.batching)
            try env.check(
                !declares || conforms,
                "the adapter declares batching, but its store does not conform to DataStoreBatching")
            try env.check(
                declares || !conforms,
                "the store conforms to DataStoreBatching, but the adapter does not declare .batching, so its "
                    + "batch cases would be skipped: declare it")
        },
        CaseDefinition(
            .declarations, "twoPhaseSavesMatchConformance",
            "A store declaring two-phase saves conforms to DataStoreTwoPhaseSaving, and one that conforms declares it."
        ) { env in
            let store = try env.openStore()
            let conforms = store is any DataStoreTwoPhaseSaving
            let declares = env.adapter.capabilities.contains(.twoPhaseSaves)
            try env.check(
                !declares || conforms,
                "the adapter declares two-phase saves, but its store does not conform to DataStoreTwoPhaseSaving")
            try env.check(
                declares || !conforms,
                "the store conforms to DataStoreTwoPhaseSaving, but the adapter does not declare .twoPhaseSaves, so "
                    + "its two-phase cases would be skipped: declare it")
        },
        CaseDefinition(
            .declarations, "expectedFailuresNameRealCases",
            "Every declared expected failure names an existing case or group."
        ) { env in
            let known = Set(ConformanceSuite.caseIdentifiers).union(ConformanceGroup.allCases.map(\.rawValue))
            let unknown = env.adapter.expectedFailures.keys.filter { !known.contains($0) }.sorted()
            try env.check(
                unknown.isEmpty,
                "expectedFailures names \(unknown.count) case(s) or group(s) the suite does not have: a "
                    + "typo hides nothing, "
                    + "but the declaration protects nothing either",
                found: unknown.joined(separator: ", "))
        },
        CaseDefinition(
            .declarations, "eraseMatchesDeclaration",
            "A store that does not declare erase() throws unsupportedFeature from it; one that does, erases."
        ) { env in
            let store = try env.openStore()
            if env.adapter.capabilities.contains(.erase) {
                try env.step("calling erase() on a new store") { try store.erase() }
            } else {
                do {
                    try store.erase()
                    throw env.failure(
                        "erase() succeeded, but the adapter does not declare .erase, so its erase cases would be "
                            + "skipped: declare it")
                } catch DataStoreError.unsupportedFeature {
                }
            }
        },
    ]
}
