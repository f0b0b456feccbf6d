import Foundation
import ModelStore

/// The adapter's declarations match what its store does.
enum DeclarationCases {
    /// A capability the store's protocol conformances show, with the case that checks its declaration.
    struct Observable: Sendable {
        let id: String
        let capability: ConformanceCapabilities
        /// The capability's name in the declaration (`.batching`) and in prose.
        let name: String, prose: String
        let protocolName: String
        /// The cases the store would miss if the declaration were left out.
        let skipped: String
        let conforms: @Sendable (any DataStore) -> Bool
    }

    static let observable: [Observable] = [
        Observable(
            id: "batchingMatchesConformance", capability: .batching, name: "batching", prose: "batching",
            protocolName: "DataStoreBatching", skipped: "batch cases", conforms: { $0 is any DataStoreBatching }),
        Observable(
            id: "twoPhaseSavesMatchConformance", capability: .twoPhaseSaves, name: "twoPhaseSaves",
            prose: "two-phase saves", protocolName: "DataStoreTwoPhaseSaving", skipped: "two-phase cases",
            conforms: { $0 is any DataStoreTwoPhaseSaving }),
        Observable(
            id: "historyMatchesConformance", capability: .history, name: "history", prose: "history",
            protocolName: "HistoryProviding", skipped: "history cases", conforms: { $0 is any HistoryProviding }),
    ]

    static let all: [CaseDefinition] =
        observable.map { item in
            CaseDefinition(
                .declarations, item.id,
                "A store declaring \(item.prose) conforms to \(item.protocolName), and one that conforms declares it."
            ) { env in
                try checkDeclaration(env, item)
            }
        } + [
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

    /// Fails unless the adapter declares the capability exactly when its store conforms to the protocol.
    static func checkDeclaration(_ env: CaseEnvironment, _ item: Observable) throws {
        let conforming = item.conforms(try env.openStore())
        let declares = env.adapter.capabilities.contains(item.capability)
        try env.check(
            !declares || conforming,
            "the adapter declares .\(item.name), but its store does not conform to \(item.protocolName)")
        try env.check(
            declares || !conforming,
            "the store conforms to \(item.protocolName), but the adapter does not declare .\(item.name), so its "
                + "\(item.skipped) would be skipped: declare it")
    }
}
