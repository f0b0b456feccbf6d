import Foundation
import ModelStore

/// The adapter's declarations match what its store does.
enum DeclarationCases {
    static let all: [CaseDefinition] = [
        CaseDefinition(
            .declarations, "batchingMatchesConformance",
            "A store declaring batching conforms to DataStoreBatching, and one that conforms declares it."
        ) { env in
            try checkDeclaration(
                env, .batching, named: "batching", conforms: { $0 is any DataStoreBatching },
                protocolName: "DataStoreBatching", skipped: "batch cases")
        },
        CaseDefinition(
            .declarations, "twoPhaseSavesMatchConformance",
            "A store declaring two-phase saves conforms to DataStoreTwoPhaseSaving, and one that conforms declares it."
        ) { env in
            try checkDeclaration(
                env, .twoPhaseSaves, named: "twoPhaseSaves", conforms: { $0 is any DataStoreTwoPhaseSaving },
                protocolName: "DataStoreTwoPhaseSaving", skipped: "two-phase cases")
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

    /// Fails unless the adapter declares `capability` exactly when its store conforms to the protocol.
    static func checkDeclaration(
        _ env: CaseEnvironment, _ capability: ConformanceCapabilities, named name: String,
        conforms: (any DataStore) -> Bool, protocolName: String, skipped: String
    ) throws {
        let conforming = conforms(try env.openStore())
        let declares = env.adapter.capabilities.contains(capability)
        try env.check(
            !declares || conforming,
            "the adapter declares .\(name), but its store does not conform to \(protocolName)")
        try env.check(
            declares || !conforming,
            "the store conforms to \(protocolName), but the adapter does not declare .\(name), so its \(skipped) "
                + "would be skipped: declare it")
    }
}
