import Foundation
import ModelStore

/// For stores that run store-neutral queries: what they declare, and that every filter they
/// declare is applied exactly, checked against the core's own evaluation on the same data.
enum QueryingCases {
    /// The querying store, or a reason the case does not apply.
    static func querying(_ store: any DataStore) throws -> any DataStoreQuerying {
        guard let querying = store as? any DataStoreQuerying else {
            throw CaseNotApplicable(reason: "the store does not conform to DataStoreQuerying")
        }
        return querying
    }

    /// Specimens for the exactness check: nils, ties, case and normalization variants, with and without a folder.
    static let rows: [(code: String, title: String, nickname: String?, count: Int, weight: Double, folder: String?)] = [
        ("A", "apple", nil, 0, 1.5, "Alpha"), ("B", "Apple", "nick1", 1, 3.0, "Alpha"),
        ("C", "banana", "nick2", 2, 3.0, "beta"), ("D", "naïve", nil, 3, 0.25, nil),
        ("E", "nai\u{0308}ve", "nick1", 1, 4.5, "beta"), ("F", "", "", 2, -1, "Alpha"),
        ("G", "Zebra", "Nick1", 4, 3.0, nil), ("H", "a b", nil, 0, 10, "beta"),
        ("I", "ab", "nick3", 2, 2.5, "Alpha"), ("J", "éclair", nil, 1, 3.0, nil),
    ]

    /// Filters with the semantics most often gotten wrong, and what they need.
    static let filters: [(String, StoreFilter)] = [
        ("count == 2", .compare("count", .equal, .int(2))),
        ("nickname == nil", .compare("nickname", .equal, .null)),
        ("nickname != \"nick1\" (nil is not equal)", .compare("nickname", .notEqual, .string("nick1"))),
        ("nickname > \"nick1\" (nil never orders)", .compare("nickname", .greater, .string("nick1"))),
        ("weight <= 3.0", .compare("weight", .lessOrEqual, .double(3.0))),
        ("count > 1.5 (mixed numbers)", .compare("count", .greater, .double(1.5))),
        ("title < \"b\" (Swift string order)", .compare("title", .less, .string("b"))),
        ("title == \"naïve\" (canonical equivalence)", .compare("title", .equal, .string("naïve"))),
        ("code in [A, C, Z]", .isIn("code", [.string("A"), .string("C"), .string("Z")])),
        ("count in 1..<3", .range("count", StoreRange(lower: .int(1), upper: .int(3), includesUpper: false))),
        ("weight in ...3.0", .range("weight", StoreRange(lower: nil, upper: .double(3.0), includesUpper: true))),
        ("title.contains(\"an\")", .text("title", .contains("an"))),
        ("title.contains(\"\") (every string)", .text("title", .contains(""))),
        ("title.starts(with: \"a\") (case-sensitive)", .text("title", .hasPrefix("a"))),
        ("nickname.contains(\"ick\") (nil never matches)", .text("nickname", .contains("ick"))),
        ("!(count == 1)", .not(.compare("count", .equal, .int(1)))),
        (
            "count == 0 || weight > 4",
            .or([.compare("count", .equal, .int(0)), .compare("weight", .greater, .double(4))])
        ),
        ("folder.name == \"Alpha\"", .compare(StorePath(["folder", "name"]), .equal, .string("Alpha"))),
        ("folder.name == nil (no folder reads nil)", .compare(StorePath(["folder", "name"]), .equal, .null)),
        ("false", .constant(false)),
    ]

    static let all: [CaseDefinition] = [
        CaseDefinition(
            .storeContract, "pushedFiltersAreExact",
            "Every filter a querying store declares it runs exactly selects what the core's evaluator selects "
                + "on the same data."
        ) { env in
            let store = try querying(try env.openStore())
            func open<S: DataStoreQuerying>(_ store: S) throws { try StoreDriver(store, env).checkExactFilters() }
            try open(store)
        },
        CaseDefinition(
            .storeContract, "inexactMatchesOnlyWhenAllowed",
            "A query sent to the store directly selects exactly what the core's evaluator selects for every "
                + "condition the store runs; only a query that allows inexact matches may get a superset, and "
                + "only for the conditions the store answers inexact for."
        ) { env in
            let store = try querying(try env.openStore())
            func open<S: DataStoreQuerying>(_ store: S) throws { try StoreDriver(store, env).checkInexactMatches() }
            try open(store)
        },
    ]
}

extension StoreDriver where Store: DataStoreQuerying {
    /// Saves ``QueryingCases/rows`` as specimens in folders.
    func saveRows() throws {
        var folders: [String: DefaultSnapshot] = [:]
        for name in ["Alpha", "beta"] { folders[name] = try newSnapshot("Folder", ["name": .string(name)]) }
        let specimens = try QueryingCases.rows.enumerated().map { index, row in
            try newSnapshot(
                "Specimen",
                [
                    "code": .string(row.code), "serial": .int(Int64(index)), "title": .string(row.title),
                    "nickname": row.nickname.map(StoreValue.string) ?? .null, "count": .int(Int64(row.count)),
                    "weight": .double(row.weight),
                    "folder": row.folder.flatMap { folders[$0] }.map { .reference($0.persistentIdentifier) } ?? .null,
                ])
        }
        try save(
            inserted: Array(folders.values) + specimens, "saving \(specimens.count) specimens and 2 folders directly")
    }

    /// The codes a query selects, or `nil` when the store refuses it.
    func codes(_ query: StoreQuery) throws -> [String] {
        let snapshots = try env.step("fetching '\(query)' directly") {
            try store.fetch(request(Specimen.self, query: query)).fetchedSnapshots.map(\.defaultSnapshot)
        }
        return snapshots.compactMap { if case .string(let code)? = $0["code"] { code } else { nil } }
    }

    /// Saves ``QueryingCases/rows`` in the store and in a reference store on the core's engine, and
    /// returns the reference.
    func savingRowsBesideAReference() throws -> StoreDriver<ReferenceStore> {
        try saveRows()
        let reference = StoreDriver<ReferenceStore>(
            try ReferenceStore(ReferenceStoreConfiguration(schema: Fixtures.schema), migrationPlan: nil), env)
        try reference.saveRows()
        return reference
    }

    /// Each of ``QueryingCases/filters`` the store runs (its `pushDown` answer is not `unsupported`),
    /// sent directly without and with ``StoreQuery/allowsInexactMatches``.
    func checkInexactMatches() throws {
        let answered = QueryingCases.filters.map { ($0.0, $0.1, store.pushDown($0.1, entityName: "Specimen")) }
            .filter { $0.2 != .unsupported }
        guard !answered.isEmpty else {
            throw CaseNotApplicable(reason: "the store answers unsupported for every condition of the case")
        }
        let reference = try savingRowsBesideAReference()
        var wrong: [String] = []
        for (name, filter, answer) in answered {
            var query = StoreQuery(entityName: "Specimen", filter: filter)
            let expected = try reference.codes(query).sorted()
            let exact = try codes(query).sorted()
            if exact != expected {
                wrong.append(
                    "'\(name)' (answered \(answer)) without inexact matches: expected \(expected), found \(exact)")
            }
            query.allowsInexactMatches = true
            let allowed = try codes(query).sorted()
            if answer == .exact, allowed != expected {
                wrong.append(
                    "'\(name)' (answered exact) allowing inexact matches: expected \(expected), found \(allowed)")
            } else if !Set(expected).isSubset(of: allowed) {
                let missed = Set(expected).subtracting(allowed).sorted()
                wrong.append("'\(name)' (answered inexact) allowing inexact matches missed \(missed)")
            }
        }
        try env.check(
            wrong.isEmpty,
            "\(wrong.count) condition(s) sent directly selected other models than the core's evaluator: a store "
                + "applies a query exactly unless it allows inexact matches (rule 2 of DataStoreQuerying), and even "
                + "then returns every match, approximating only what it answers inexact for",
            found: wrong.prefix(5).joined(separator: "; "))
    }

    func checkExactFilters() throws {
        let capabilities = store.queryCapabilities
        let exact = QueryingCases.filters.filter { capabilities.filters.isSuperset(of: $0.1.kinds) }
        guard !exact.isEmpty else {
            throw CaseNotApplicable(reason: "the store declares no filter kind it runs exactly")
        }
        let reference = try savingRowsBesideAReference()
        var wrong: [String] = []
        for (name, filter) in exact {
            let query = StoreQuery(entityName: "Specimen", filter: filter)
            let expected = try reference.codes(query).sorted()
            let found = try codes(query).sorted()
            if found != expected { wrong.append("'\(name)': expected \(expected), found \(found)") }
        }
        try env.check(
            wrong.isEmpty,
            "\(wrong.count) pushed filter(s) the store declares it runs exactly selected other models than the core's "
                + "evaluator: pushed filters MUST be applied exactly (declare approximations in inexactFilters)",
            found: wrong.prefix(5).joined(separator: "; "))
    }
}
