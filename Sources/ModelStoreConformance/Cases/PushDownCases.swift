import Foundation
import ModelStore

/// The differential oracle: every corpus query, run pushed to the adapter, forced through the
/// context's in-memory fallback, and on the reference store, must select what Swift selects.
enum PushDownCases {
    /// The three containers the oracle compares, each seeded.
    struct Runs {
        let labelled: [(label: String, container: ModelContainer)]
        let seed: Seed

        init(_ env: CaseEnvironment) throws {
            let pushed = try env.openContainer("pushed")
            let fallback = try env.openFallbackContainer("fallback")
            let reference = try env.openReferenceContainer()
            for container in [pushed, fallback, reference] { try env.seed(container) }
            labelled = [
                ("pushed to the adapter", pushed), ("through the in-memory fallback", fallback),
                ("on the reference store", reference),
            ]
            seed = Seed.make()
        }
    }

    /// One disagreement, described for a failure message.
    static func describe(_ query: CorpusQuery, _ label: String, found: [String], expected: [String]) -> String {
        let extra = found.filter { !expected.contains($0) }
        let missing = expected.filter { !found.contains($0) }
        let culprit =
            label == "on the reference store"
            ? " (the core's own evaluator disagrees with Swift: a ModelStore bug, not the adapter's)" : ""
        if extra.isEmpty && missing.isEmpty {
            return "'\(query.name)' \(label) returned the right models in the wrong order\(culprit)"
        }
        return
            "'\(query.name)' \(label) returned \(extra.count) model(s) Swift does not select "
            + "\(extra.prefix(4)) and missed "
            + "\(missing.count) \(missing.prefix(4))\(culprit)"
    }

    /// Runs queries three ways and fails listing every disagreement with Swift's own evaluation.
    static func check(_ queries: [CorpusQuery], _ env: CaseEnvironment, offset: Int? = nil, limit: Int? = nil) throws {
        let runs = try Runs(env)
        var disagreements: [String] = []
        for query in queries {
            var expected = try query.truth(runs.seed)
            if offset != nil || limit != nil {
                let start = min(offset ?? 0, expected.count)
                expected = Array(expected[start..<(limit.map { min(start + $0, expected.count) } ?? expected.count)])
            }
            for (label, container) in runs.labelled {
                let found = try env.step("fetching '\(query.name)' \(label)") {
                    try query.fetch(env.freshContext(container), offset, limit)
                }
                let agrees = query.isOrdered ? found == expected : found.sorted() == expected.sorted()
                if !agrees { disagreements.append(describe(query, label, found: found, expected: expected)) }
            }
        }
        guard disagreements.isEmpty else {
            throw env.failure(
                "\(disagreements.count) result(s) differ from Swift's own evaluation: push-down changed a result "
                    + "(push-down may make a fetch faster, never different)",
                expected: "every query to select what Swift selects",
                found: disagreements.prefix(6).joined(separator: "; ") + (disagreements.count > 6 ? "; …" : ""))
        }
    }

    /// The case that runs one group of the corpus (``PredicateCorpus/groups``) three ways.
    static func group(_ name: String, _ queries: [CorpusQuery]) -> CaseDefinition {
        CaseDefinition(
            .pushDown, name,
            "Every \(name) predicate of the corpus (\(queries.count)) selects the same models "
                + "pushed, through the fallback, on the reference store, and in Swift."
        ) { env in
            try check(queries, env)
        }
    }

    static let all: [CaseDefinition] =
        PredicateCorpus.groups.map(group) + [
            CaseDefinition(
                .pushDown, "identifiers",
                "A predicate on persistentModelID selects the same models pushed, through the fallback and on the "
                    + "reference store."
            ) { env in
                let runs = try Runs(env)
                let wanted = ["S03", "S10", "S11"]
                for (label, container) in runs.labelled {
                    let specimens = try env.all(Specimen.self, in: container, by: \.code)
                    let ids = Set(specimens.filter { wanted.contains($0.code) }.map(\.persistentModelID))
                    let found = try env.step("fetching by identifier \(label)") {
                        try env.freshContext(container).fetch(
                            FetchDescriptor<Specimen>(
                                predicate: #Predicate { ids.contains($0.persistentModelID) })
                        ).map(\.code)
                    }
                    try env.checkEqual(
                        found.sorted(), wanted, "'ids.contains(persistentModelID)' \(label) selected the wrong models")
                }
            },
            CaseDefinition(
                .pushDown, "sortedResults",
                "Sorted corpus queries (collation, descending, nil placement, several keys) return the same order "
                    + "three ways and in Swift."
            ) { env in
                try check(PredicateCorpus.sorted, env)
            },
            CaseDefinition(
                .pushDown, "windowedResults",
                "Offset and limit over sorted corpus queries select the same slice three ways."
            ) { env in
                try check(PredicateCorpus.sorted, env, offset: 3, limit: 5)
            },
            CaseDefinition(
                .pushDown, "countsAndIdentifiers",
                "fetchCount and fetchIdentifiers of every corpus query agree with fetch, three ways."
            ) { env in
                let runs = try Runs(env)
                var disagreements: [String] = []
                for query in PredicateCorpus.queries {
                    let expected = try query.truth(runs.seed).count
                    for (label, container) in runs.labelled {
                        let count = try env.step("counting '\(query.name)' \(label)") {
                            try query.count(env.freshContext(container))
                        }
                        if count != expected {
                            disagreements.append(
                                "fetchCount '\(query.name)' \(label) returned \(count), not \(expected)")
                        }
                        let ids = try env.step("fetching identifiers '\(query.name)' \(label)") {
                            try query.identifiers(env.freshContext(container))
                        }
                        if ids.count != expected || Set(ids).count != ids.count {
                            disagreements.append(
                                "fetchIdentifiers '\(query.name)' \(label) returned \(ids.count) identifiers, "
                                    + "not \(expected)")
                        }
                    }
                }
                guard disagreements.isEmpty else {
                    throw env.failure(
                        "\(disagreements.count) count(s) or identifier list(s) disagree with fetch: count "
                            + "disagrees with fetch",
                        found: disagreements.prefix(6).joined(separator: "; "))
                }
            },
            CaseDefinition(
                .pushDown, "nativeFiltersAreNotRefused",
                "The store never asks for in-memory filtering of a predicate made only of filter kinds its "
                    + "queryCapabilities declare."
            ) { env in
                let log = SpyLog()
                let container = try env.openSpyContainer(log: log)
                // The spy reports the store's own query capabilities.
                guard let capabilities = (container.stores[0] as? any DataStoreQuerying)?.queryCapabilities else {
                    throw CaseNotApplicable(reason: "the store does not conform to DataStoreQuerying")
                }
                let runs = capabilities.filters.union(capabilities.inexactFilters)
                let queries = PredicateCorpus.queries.filter { !$0.kinds.isEmpty && runs.isSuperset(of: $0.kinds) }
                guard !queries.isEmpty else {
                    throw CaseNotApplicable(
                        reason: "the store's queryCapabilities declare no filter kind a corpus predicate needs "
                            + "(\(capabilities))")
                }
                try env.seed(container)
                var refused: [String] = []
                for query in queries {
                    log.reset()
                    try env.step("fetching '\(query.name)' through the spy") {
                        do {
                            _ = try query.fetch(env.freshContext(container), nil, nil)
                        } catch let error as DataStoreError where error.code == .preferInMemoryFilter {
                            // The spy recorded the refusal; it is reported below with every other one.
                        }
                    }
                    if log.all.contains(where: { $0.refusal == .preferInMemoryFilter }) {
                        refused.append("'\(query.name)' (\(query.kinds))")
                    }
                }
                try env.check(
                    refused.isEmpty,
                    "the store asked for in-memory filtering of \(refused.count) of \(queries.count) predicate(s) "
                        + "made only of filter kinds its queryCapabilities declare it runs: the capabilities "
                        + "overstate its push-down (declare only the kinds the store runs; the context then "
                        + "evaluates the rest in memory)",
                    expected: "no refusal within \(capabilities)",
                    found: refused.prefix(5).joined(separator: "; "))
            },
        ]
}
