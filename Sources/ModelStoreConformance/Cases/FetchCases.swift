import Foundation
import ModelStore

/// Fetch semantics through a container on the adapter: predicates, stable sorts, windows, counts.
enum FetchCases {
    static let all: [CaseDefinition] = [
        CaseDefinition(
            .fetch, "predicatesFilter",
            "Fetches with predicates return exactly the models Swift's own evaluation selects."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let seed = Seed.make()
            // The whole corpus, not one query per family: a store that drops a negation or closes a
            // half-open range must fail here as well as in the push-down cases.
            for query in PredicateCorpus.queries {
                let expected = try query.truth(seed).sorted()
                let found = try env.step("fetching '\(query.name)'") {
                    try query.fetch(env.freshContext(container), nil, nil)
                }
                try env.checkEqual(
                    found.sorted(), expected,
                    "fetch with predicate '\(query.name)' returned the wrong models: the store's filtering differs "
                        + "from Swift's evaluation (push-down changed a result: the predicate was not applied exactly)")
            }
        },
        CaseDefinition(
            .fetch, "propertiesToFetchKeepsEveryValue",
            "A fetch with propertiesToFetch reads every attribute right and never saves initial values over the others."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            var partial = FetchDescriptor<Specimen>(sortBy: [SortDescriptor(\.code)])
            partial.propertiesToFetch = [\.code, \.serial]
            let whole = try env.step("fetching every specimen") {
                try env.freshContext(container).fetch(FetchDescriptor<Specimen>(sortBy: [SortDescriptor(\.code)]))
            }
            let context = env.freshContext(container)
            let fetched = try env.step("fetching specimens with propertiesToFetch [code, serial]") {
                try context.fetch(partial)
            }
            try env.checkEqual(
                fetched.map(\.code), whole.map(\.code),
                "a fetch with propertiesToFetch returned other models than the same fetch without it")
            for (found, expected) in zip(fetched, whole) {
                try SpecimenField.check(
                    found, equals: expected, "reading a specimen fetched with propertiesToFetch [code, serial]",
                    in: env)
            }
            // Change one attribute that was fetched, one that was not and a relationship, each on
            // a model of its own, then save: every other value must be stored as it was.
            let again = try env.step("fetching specimens with propertiesToFetch again") {
                try env.freshContext(container).fetch(partial)
            }
            let changer = try env.require(again.first?.modelContext, "a fetched specimen has no context")
            again[0].serial += 1000
            again[1].title += " (edited)"
            again[2].peer = nil
            try env.step("saving changes to specimens fetched with propertiesToFetch") { try changer.save() }
            whole[0].serial += 1000
            whole[1].title += " (edited)"
            let stored = try env.step("fetching every specimen after the save") {
                try env.freshContext(container).fetch(FetchDescriptor<Specimen>(sortBy: [SortDescriptor(\.code)]))
            }
            for (found, expected) in zip(stored, whole) {
                try SpecimenField.check(
                    found, equals: expected,
                    "reading a specimen saved after a fetch with propertiesToFetch [code, serial]", in: env)
            }
            try env.check(
                stored[2].peer == nil, "a relationship cleared on a model fetched with propertiesToFetch was not saved")
        },
        CaseDefinition(
            .fetch, "offsetAndLimit", "fetchOffset skips and fetchLimit caps, in the store's identifier order."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            try FetchChecks.windows(in: container, env, label: "")
        },
        CaseDefinition(
            .fetch, "offsetAndLimitThroughFallback",
            "fetchOffset and fetchLimit are applied after the in-memory fallback filters and sorts."
        ) { env in
            let container = try env.openFallbackContainer()
            try env.seed(container)
            try FetchChecks.windows(in: container, env, label: " through the in-memory fallback")
            try FetchChecks.filteredWindows(in: container, env, label: " through the in-memory fallback")
        },
        CaseDefinition(
            .fetch, "offsetAndLimitWithPredicateAndSort",
            "A window over a filtered, sorted fetch selects the right slice."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            try FetchChecks.filteredWindows(in: container, env, label: "")
        },
        CaseDefinition(
            .fetch, "sortTiesFollowIdentifierOrder",
            "Models that tie on every sort key come in identifier order, ascending or descending."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            for order in [SortOrder.forward, .reverse] {
                let context = env.freshContext(container)
                let entries = try env.step("fetching log entries sorted by 'bucket'") {
                    try context.fetch(FetchDescriptor<LogEntry>(sortBy: [SortDescriptor(\.bucket, order: order)]))
                }
                try FetchChecks.tiesAscend(
                    entries.map { ($0.bucket, $0.persistentModelID) }, env,
                    what: "sorting log entries by 'bucket' (\(order == .forward ? "ascending" : "descending"))")
            }
        },
        CaseDefinition(
            .fetch, "pagesConcatenate",
            "Paging a sorted fetch with offset and limit visits every model exactly once."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let sort = [SortDescriptor(\LogEntry.bucket)]
            let full = try env.step("fetching every log entry sorted by 'bucket'") {
                try env.freshContext(container).fetch(FetchDescriptor<LogEntry>(sortBy: sort)).map(\.sequence)
            }
            var paged: [Int] = []
            var offset = 0
            while offset < full.count + 7 {
                var descriptor = FetchDescriptor<LogEntry>(sortBy: sort)
                descriptor.fetchOffset = offset
                descriptor.fetchLimit = 7
                paged += try env.step("fetching a page at offset \(offset)") {
                    try env.freshContext(container).fetch(descriptor).map(\.sequence)
                }
                offset += 7
            }
            try env.checkEqual(
                paged, full,
                "pages of 7 log entries sorted by 'bucket' skipped or repeated entries: "
                    + "ties are not broken the same way on every fetch (unstable sort) or the window is wrong")
        },
        CaseDefinition(
            .fetch, "countAndIdentifiersAgreeWithFetch",
            "fetchCount and fetchIdentifiers agree with fetch, with and without predicates, sorts and windows."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            try FetchChecks.countsAgree(in: container, env, label: "")
        },
        CaseDefinition(
            .fetch, "countAndIdentifiersAgreeThroughFallback",
            "fetchCount and fetchIdentifiers agree with fetch when the store asks for in-memory filtering."
        ) { env in
            let container = try env.openFallbackContainer()
            try env.seed(container)
            try FetchChecks.countsAgree(in: container, env, label: " through the in-memory fallback")
        },
        CaseDefinition(
            .fetch, "sortsMatchSwift", "Sorts on several keys, descending and on optionals, order models as Swift does."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let seed = Seed.make()
            for query in PredicateCorpus.sorted {
                let expected = try query.truth(seed)
                let found = try env.step("fetching '\(query.name)'") {
                    try query.fetch(env.freshContext(container), nil, nil)
                }
                try env.checkEqual(found, expected, "fetch '\(query.name)' returned the models in the wrong order")
            }
        },
        CaseDefinition(
            .fetch, "fetchByIdentifier",
            "Models load by identifier, through model(for:) and through a predicate on persistentModelID."
        ) { env in
            let container = try env.openContainer()
            try env.seed(container)
            let specimens = try env.all(Specimen.self, in: container, by: \.code)
            let wanted = try [2, 7, 20].map { try env.element(specimens, $0, "fetching every specimen") }
            let ids = wanted.map(\.persistentModelID)
            let fresh = env.freshContext(container)
            for (id, specimen) in zip(ids, wanted) {
                let found = try env.step("loading \(id) with model(for:)") {
                    try fresh.model(for: id, as: Specimen.self)
                }
                try env.checkEqual(found?.code ?? "nil", specimen.code, "model(for: \(id)) returned the wrong model")
            }
            let idSet = Set(ids)
            let byPredicate = try env.step("fetching with a predicate on persistentModelID") {
                try env.freshContext(container).fetch(
                    FetchDescriptor<Specimen>(predicate: #Predicate { idSet.contains($0.persistentModelID) }))
            }
            try env.checkEqual(
                byPredicate.map(\.code).sorted(), wanted.map(\.code).sorted(),
                "a fetch with 'ids.contains($0.persistentModelID)' returned the wrong models")
            let folderCount = try env.step("fetching folders with the same identifier predicate") {
                try env.freshContext(container).fetchCount(FetchDescriptor<Folder>())
            }
            try env.checkEqual(folderCount, Seed.folderNames.count, "fetchCount of every folder is wrong")
        },
    ]
}

/// Checks shared by the fetch and push-down cases.
enum FetchChecks {
    /// Windows over an unsorted, unfiltered fetch of log entries, in the store's identifier order.
    static func windows(in container: ModelContainer, _ env: CaseEnvironment, label: String) throws {
        let all = try env.step("fetching every log entry\(label)") {
            try env.freshContext(container).fetch(FetchDescriptor<LogEntry>()).map(\.label)
        }
        try env.checkEqual(
            all.count, Seed.make().entries.count, "fetching every log entry\(label) returned the wrong number")
        func window(_ offset: Int?, _ limit: Int?) throws -> [String] {
            var descriptor = FetchDescriptor<LogEntry>()
            descriptor.fetchOffset = offset
            descriptor.fetchLimit = limit
            return try env.step(
                "fetching log entries with fetchOffset \(offset.map(String.init) ?? "nil") and fetchLimit "
                    + "\(limit.map(String.init) ?? "nil")\(label)"
            ) {
                try env.freshContext(container).fetch(descriptor).map(\.label)
            }
        }
        let offsetOnly = try window(2, nil)
        if offsetOnly.first == all.first {
            throw env.failure(
                "fetch with fetchOffset 2\(label) returned the first item: offset ignored",
                expected: render(Array(all.dropFirst(2).prefix(3))) + "…",
                found: render(Array(offsetOnly.prefix(3))) + "…")
        }
        try env.checkEqual(
            offsetOnly, Array(all.dropFirst(2)), "fetch with fetchOffset 2\(label) returned the wrong items")
        let limitOnly = try window(nil, 4)
        try env.check(
            limitOnly.count <= 4, "fetch with fetchLimit 4\(label) returned \(limitOnly.count) items: limit ignored",
            expected: "4 items", found: "\(limitOnly.count) items")
        try env.checkEqual(limitOnly, Array(all.prefix(4)), "fetch with fetchLimit 4\(label) returned the wrong items")
        let both = try window(5, 3)
        if both == Array(all.prefix(3)) {
            throw env.failure(
                "fetch with fetchOffset 5 and fetchLimit 3\(label) returned the first items: offset ignored",
                expected: render(Array(all[5..<8])), found: render(both))
        }
        try env.checkEqual(
            both, Array(all[5..<8]), "fetch with fetchOffset 5 and fetchLimit 3\(label) returned the wrong items")
        try env.checkEqual(
            try window(all.count + 3, 2), [],
            "fetch with fetchOffset past the end\(label) returned items")
        try env.checkEqual(
            try window(all.count - 2, 10), Array(all.suffix(2)),
            "fetch with a window running past the end\(label) returned the wrong items")
    }

    /// Windows over a filtered, sorted fetch of specimens.
    static func filteredWindows(in container: ModelContainer, _ env: CaseEnvironment, label: String) throws {
        let query = PredicateCorpus.sorted[2]
        let expected = try query.truth(Seed.make())
        for (offset, limit) in [(0, 5), (3, 4), (10, nil), (expected.count - 1, 5)] as [(Int, Int?)] {
            let found = try env.step("fetching '\(query.name)' with fetchOffset \(offset)\(label)") {
                try query.fetch(env.freshContext(container), offset, limit)
            }
            let end = limit.map { min(offset + $0, expected.count) } ?? expected.count
            let slice = Array(expected[min(offset, expected.count)..<end])
            if offset > 0 && !found.isEmpty && found.first == expected.first {
                throw env.failure(
                    "fetch '\(query.name)' with fetchOffset \(offset)\(label) returned the first item: offset ignored",
                    expected: render(slice), found: render(found))
            }
            try env.checkEqual(
                found, slice,
                "fetch '\(query.name)' with fetchOffset \(offset) and fetchLimit "
                    + "\(limit.map(String.init) ?? "nil")\(label) returned the wrong slice")
        }
    }

    /// Fails unless models that tie on the sort key come in ascending identifier order.
    static func tiesAscend<Key: Equatable>(
        _ rows: [(key: Key, id: PersistentIdentifier)], _ env: CaseEnvironment, what: String
    ) throws {
        for (lhs, rhs) in zip(rows, rows.dropFirst()) where lhs.key == rhs.key && !(lhs.id < rhs.id) {
            throw env.failure(
                "\(what) returned ties out of identifier order: unstable sort (ties MUST be broken by identifier, "
                    + "so every store and every page agree)",
                expected: "\(rhs.id) before \(lhs.id)", found: "\(lhs.id) before \(rhs.id)")
        }
    }

    /// fetchCount and fetchIdentifiers against fetch for several descriptors.
    static func countsAgree(in container: ModelContainer, _ env: CaseEnvironment, label: String) throws {
        var descriptors: [(String, FetchDescriptor<LogEntry>)] = []
        descriptors.append(("every log entry", FetchDescriptor<LogEntry>()))
        var limited = FetchDescriptor<LogEntry>()
        limited.fetchLimit = 4
        descriptors.append(("fetchLimit 4", limited))
        var offset = FetchDescriptor<LogEntry>()
        offset.fetchOffset = 25
        descriptors.append(("fetchOffset 25", offset))
        descriptors.append(("bucket == 1", FetchDescriptor<LogEntry>(predicate: #Predicate { $0.bucket == 1 })))
        var windowed = FetchDescriptor<LogEntry>(
            predicate: #Predicate { $0.bucket != 0 }, sortBy: [SortDescriptor(\.bucket)])
        windowed.fetchOffset = 3
        windowed.fetchLimit = 5
        descriptors.append(("bucket != 0 sorted by bucket, fetchOffset 3, fetchLimit 5", windowed))
        for (name, descriptor) in descriptors {
            let context = env.freshContext(container)
            let models = try env.step("fetching '\(name)'\(label)") { try context.fetch(descriptor) }
            let count = try env.step("counting '\(name)'\(label)") {
                try env.freshContext(container).fetchCount(descriptor)
            }
            try env.check(
                count == models.count,
                "fetchCount '\(name)'\(label) returned \(count) but fetch returned \(models.count) models: "
                    + "count disagrees with fetch",
                expected: "\(models.count)", found: "\(count)")
            let ids = try env.step("fetching identifiers '\(name)'\(label)") {
                try env.freshContext(container).fetchIdentifiers(descriptor)
            }
            try env.checkEqual(
                ids, models.map(\.persistentModelID),
                "fetchIdentifiers '\(name)'\(label) returned other identifiers, or another order, than fetch: "
                    + "identifiers disagree with fetch")
        }
    }
}
