import Foundation
import ModelStore

/// The adapter's declarations match what its store does.
enum DeclarationCases {
    static let all: [CaseDefinition] =
        ObservableCapability.all.map { item in
            CaseDefinition(
                .declarations, item.caseName,
                "A store whose adapter declares .\(item.name) conforms to \(item.protocolName) (the suite reads "
                    + ".\(item.name) from the store, so the declaration may be left out)."
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

    /// Fails when the adapter declares a capability its opened store does not conform to.
    static func checkDeclaration(_ env: CaseEnvironment, _ item: ObservableCapability) throws {
        guard env.adapter.capabilities.contains(item.capability) else { return }
        let store = try env.openStore()
        try env.check(
            item.conforms(type(of: store)),
            "the adapter declares .\(item.name), but its store '\(type(of: store))' does not conform to "
                + "\(item.protocolName): conform the store, or remove .\(item.name) from the adapter's capabilities "
                + "(the suite reads it from the store)")
    }
}
