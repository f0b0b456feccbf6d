import Foundation
import ModelStore

/// One query of the differential oracle: a predicate and sort over a fixture entity, with the
/// store filter kinds the core pushes for it, that can run in any container and on the detached seed.
package struct CorpusQuery: Sendable {
    /// The predicate as a reader would write it, for messages.
    package let name: String
    /// The kinds of the store filter the core's translator makes of the predicate: a store whose
    /// `queryCapabilities` run all of them receives the whole predicate. Empty when nothing of it is
    /// pushed (the context evaluates it on models).
    package let kinds: StoreFilter.Kinds
    /// Whether the result order is defined (a sort whose last key is unique).
    let isOrdered: Bool
    /// Fetches the keys of the matching models in a context, with an optional window.
    package let fetch: @Sendable (ModelContext, _ offset: Int?, _ limit: Int?) throws -> [String]
    /// Counts the matches in a context.
    let count: @Sendable (ModelContext) throws -> Int
    /// Fetches the identifiers of the matches in a context, as keys (resolved through `fetch`).
    let identifiers: @Sendable (ModelContext) throws -> [PersistentIdentifier]
    /// The keys Swift itself selects from the detached seed: the ground truth.
    let truth: @Sendable (Seed) throws -> [String]
    /// The fetch as a descriptor without a window, for the spy check.
    let entityName: String

    /// A query over `T`, keyed by a unique string property of `T`.
    static func make<T: PersistentModel>(
        _ name: String, _ kinds: StoreFilter.Kinds,
        key: any KeyPath<T, String> & Sendable, models: @escaping @Sendable (Seed) -> [T],
        predicate: Predicate<T>, sortBy: [SortDescriptor<T>] = []
    ) -> CorpusQuery {
        let descriptor = FetchDescriptor<T>(predicate: predicate, sortBy: sortBy)
        let ordered = !sortBy.isEmpty
        return CorpusQuery(
            name: name, kinds: kinds, isOrdered: ordered,
            fetch: { context, offset, limit in
                var windowed = descriptor
                windowed.fetchOffset = offset
                windowed.fetchLimit = limit
                return try context.fetch(windowed).map { $0[keyPath: key] }
            },
            count: { context in try context.fetchCount(descriptor) },
            identifiers: { context in try context.fetchIdentifiers(descriptor) },
            truth: { seed in
                let matches = try models(seed).filter { try predicate.evaluate($0) }
                return (ordered ? sortedAsSwift(matches, by: sortBy) : matches).map { $0[keyPath: key] }
            },
            entityName: Schema.entityName(for: T.self))
    }

    static func specimens(
        _ name: String, _ kinds: StoreFilter.Kinds, _ predicate: Predicate<Specimen>,
        sortBy: [SortDescriptor<Specimen>] = []
    ) -> CorpusQuery {
        // A sorted query ends with the unique code, so its order is fully defined without identifiers.
        make(
            name, kinds, key: \Specimen.code, models: { $0.specimens }, predicate: predicate,
            sortBy: sortBy.isEmpty ? [] : sortBy + [SortDescriptor(\Specimen.code, comparator: .lexical)])
    }
}

/// Models in the order Swift's own `SortDescriptor`s give them: the ground truth for sorted fetches.
func sortedAsSwift<T>(_ models: [T], by descriptors: [SortDescriptor<T>]) -> [T] {
    models.sorted { lhs, rhs in
        for descriptor in descriptors {
            switch descriptor.compare(lhs, rhs) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        return false
    }
}

/// The shared predicate corpus: what every adapter must answer exactly as Swift does.
///
/// Queries are grouped by what a reader would call them (equality, optionals, arithmetic…); the
/// groups name the oracle's cases and are no capability: what a store must run to receive a query is
/// its ``CorpusQuery/kinds``, in the store's own vocabulary.
package enum PredicateCorpus {
    static let date = Seed.makeSpecimen(10).createdAt
    static let token = Seed.makeSpecimen(4).token
    static let homepage = URL(string: "https://example.com/specimens/5?q=2")!
    static let payload = Seed.makeSpecimen(6).payload
    static let price = Decimal(string: "7.75", locale: Locale(identifier: "en_US_POSIX"))!
    static let ten = Decimal(10)
    static let nearMax = UInt64.max - 10
    static let codes = ["S03", "S10", "S11", "S99"]
    static let counts = [1, 3]
    static let plant = SpecimenKind.plant
    static let high = SpecimenGrade.high

    /// The unsorted queries by group, in the order of the oracle's cases (`pushDown.<group>`).
    static let groups: [(name: String, queries: [CorpusQuery])] = [
        ("equality", equality), ("comparison", comparison), ("logical", logical), ("optionals", optionals),
        ("strings", strings), ("collections", collections), ("relationships", relationships),
        ("enumerations", enumerations), ("arithmetic", arithmetic),
    ]

    /// Every query, the sorted ones last.
    package static let queries: [CorpusQuery] = groups.flatMap(\.queries) + sorted

    /// The core's filter kinds no corpus query is pushed as, each with the reason; every other kind of
    /// `StoreFilter.Kinds.all` is pushed by at least one query (a test checks both).
    package static let uncoveredKinds: [(kinds: StoreFilter.Kinds, reason: String)] = [
        (
            .identifiers,
            "a predicate on persistentModelID needs identifiers the store mints as it saves the seed, so the corpus "
                + "cannot hold one; the case pushDown.identifiers runs one on each store"
        ),
        (
            .regex,
            "the corpus has no regular-expression predicate yet (on Linux a case-insensitive test is written as one)"
        ),
        (
            .quantifiers,
            "the corpus has no predicate over a to-many relationship (contains(where:), allSatisfy) yet"
        ),
    ]

    static let equality: [CorpusQuery] = [
        .specimens("count == 2", .equality, #Predicate { $0.count == 2 }),
        .specimens("count != 2", .equality, #Predicate { $0.count != 2 }),
        .specimens("isActive == true", .equality, #Predicate { $0.isActive == true }),
        .specimens("title == \"apple\" (case-sensitive)", .equality, #Predicate { $0.title == "apple" }),
        .specimens(
            "title == \"naïve\" (canonically equivalent forms match)", .equality, #Predicate { $0.title == "naïve" }),
        .specimens("title == \"\"", .equality, #Predicate { $0.title == "" }),
        .specimens("weight == 1.75", .equality, #Predicate { $0.weight == 1.75 }),
        .specimens("tiny == -18 (Int8)", .equality, #Predicate { $0.tiny == -18 }),
        .specimens("quadWord == UInt64.max", .equality, #Predicate { $0.quadWord == 18_446_744_073_709_551_615 }),
        .specimens("price == 7.75 (Decimal)", .equality, #Predicate { $0.price == price }),
        .specimens("createdAt == a date", .equality, #Predicate { $0.createdAt == date }),
        .specimens("token == a UUID", .equality, #Predicate { $0.token == token }),
        .specimens("homepage == a URL", .equality, #Predicate { $0.homepage == homepage }),
        .specimens("payload == some bytes", .equality, #Predicate { $0.payload == payload }),
    ]

    static let comparison: [CorpusQuery] = [
        .specimens("count > 2", .ordering, #Predicate { $0.count > 2 }),
        .specimens("count >= 2", .ordering, #Predicate { $0.count >= 2 }),
        .specimens("count < 2", .ordering, #Predicate { $0.count < 2 }),
        .specimens("count <= 0", .ordering, #Predicate { $0.count <= 0 }),
        .specimens("weight > 4.0", .ordering, #Predicate { $0.weight > 4.0 }),
        .specimens("ratio >= 4.5 (Float)", .ordering, #Predicate { $0.ratio >= 4.5 }),
        .specimens("price > 10 (Decimal)", .ordering, #Predicate { $0.price > ten }),
        .specimens("createdAt > a date", .ordering, #Predicate { $0.createdAt > date }),
        .specimens("tiny < 0 (Int8)", .ordering, #Predicate { $0.tiny < 0 }),
        .specimens("small < -500 (Int16)", .ordering, #Predicate { $0.small < -500 }),
        .specimens("large > 0 (Int64)", .ordering, #Predicate { $0.large > 0 }),
        .specimens("quadWord > UInt64.max - 10", .ordering, #Predicate { $0.quadWord > nearMax }),
        .specimens("title < \"b\" (Swift string order)", .ordering, #Predicate { $0.title < "b" }),
        .specimens("title >= \"Z\"", .ordering, #Predicate { $0.title >= "Z" }),
    ]

    static let logical: [CorpusQuery] = [
        .specimens(
            "isActive && count > 2", [.equality, .ordering],
            #Predicate { $0.isActive && $0.count > 2 }),
        .specimens(
            "count == 1 || count == 3", [.disjunction, .equality], #Predicate { $0.count == 1 || $0.count == 3 }),
        .specimens("!(count == 1)", .equality, #Predicate { !($0.count == 1) }),
        .specimens(
            "!(weight > 3) (a negated ordering stays negated)", [.negation, .ordering],
            #Predicate { !($0.weight > 3) }),
        .specimens(
            "!isActive || (weight > 3 && count < 4)", [.disjunction, .ordering, .equality],
            #Predicate { !$0.isActive || ($0.weight > 3 && $0.count < 4) }),
        .specimens(
            "series == \"north\" && serial >= 3", [.equality, .ordering],
            #Predicate { $0.series == "north" && $0.serial >= 3 }),
        .specimens("true", [], #Predicate { _ in true }),
        .specimens("false", [], #Predicate { _ in false }),
    ]

    static let optionals: [CorpusQuery] = [
        .specimens("nickname == nil", .equality, #Predicate { $0.nickname == nil }),
        .specimens("nickname != nil", .equality, #Predicate { $0.nickname != nil }),
        .specimens("nickname == \"nick1\"", .equality, #Predicate { $0.nickname == "nick1" }),
        .specimens(
            "nickname != \"nick1\" (nil is not equal: no three-valued logic)", .equality,
            #Predicate { $0.nickname != "nick1" }),
        .specimens("(rank ?? -1) > 2", .ordering, #Predicate { ($0.rank ?? -1) > 2 }),
        .specimens(
            "rank == nil || rank! < 3", [],
            #Predicate { $0.rank == nil || $0.rank! < 3 }),
        .specimens(
            "rank.flatMap { $0 > 3 } ?? false", [.equality, .ordering],
            #Predicate { $0.rank.flatMap { $0 > 3 } ?? false }),
        .specimens("reviewedAt == nil", .equality, #Predicate { $0.reviewedAt == nil }),
        .specimens("grade == nil", .equality, #Predicate { $0.grade == nil }),
    ]

    static let strings: [CorpusQuery] = [
        .specimens("title.contains(\"an\")", .textContains, #Predicate { $0.title.contains("an") }),
        .specimens("title.contains(\"É\")", .textContains, #Predicate { $0.title.contains("É") }),
        .specimens("title.starts(with: \"a\")", .textPrefix, #Predicate { $0.title.starts(with: "a") }),
        .specimens(
            "title.starts(with: \"Z\") || title.starts(with: \"z\")", [.textPrefix, .disjunction],
            #Predicate { $0.title.starts(with: "Z") || $0.title.starts(with: "z") }),
        .specimens(
            "(\"b\"...\"e\").contains(title)", .range,
            #Predicate { ("b"..."e").contains($0.title) }),
        .specimens(
            "nickname?.contains(\"1\") == true", [.textContains, .equality],
            #Predicate { $0.nickname?.contains("1") == true }),
        .specimens(
            "homepage.absoluteString.contains(\"q=2\")", [],
            #Predicate { $0.homepage.absoluteString.contains("q=2") }),
    ]

    static let collections: [CorpusQuery] = [
        .specimens(
            "[\"S03\", \"S10\", \"S11\", \"S99\"].contains(code)", .membership,
            #Predicate { codes.contains($0.code) }),
        .specimens("[1, 3].contains(count)", .membership, #Predicate { counts.contains($0.count) }),
        .specimens("tags.contains(\"t1\")", .arrayContains, #Predicate { $0.tags.contains("t1") }),
        .specimens("tags.isEmpty", [], #Predicate { $0.tags.isEmpty }),
        .specimens("tags.count == 2", [], #Predicate { $0.tags.count == 2 }),
    ]

    static let relationships: [CorpusQuery] = [
        .specimens(
            "folder?.name == \"Alpha\"", [.toOneTraversal, .equality],
            #Predicate { $0.folder?.name == "Alpha" }),
        .specimens("folder == nil", .equality, #Predicate { $0.folder == nil }),
        .specimens(
            "(folder?.position ?? -1) > 1", [.toOneTraversal, .ordering],
            #Predicate { ($0.folder?.position ?? -1) > 1 }),
        .specimens(
            "peer?.code == \"S02\" (self-reference)", [.toOneTraversal, .equality],
            #Predicate { $0.peer?.code == "S02" }),
        .make(
            "Note: folder?.name == \"beta\"", [.toOneTraversal, .equality], key: \Note.text,
            models: { $0.notes }, predicate: #Predicate { $0.folder?.name == "beta" }),
        .make(
            "Note: subject?.count == 2", [.toOneTraversal, .equality], key: \Note.text,
            models: { $0.notes }, predicate: #Predicate { $0.subject?.count == 2 }),
    ]

    static let enumerations: [CorpusQuery] = [
        .specimens("kind == .plant", .equality, #Predicate { $0.kind == plant }),
        .specimens(
            "kind.rawValue == \"animal\"", .equality, #Predicate { $0.kind.rawValue == "animal" }
        ),
        .specimens("grade == .high", .equality, #Predicate { $0.grade == high }),
        .specimens(
            "(grade?.rawValue ?? 0) >= 2", .ordering,
            #Predicate { ($0.grade?.rawValue ?? 0) >= 2 }),
    ]

    static let arithmetic: [CorpusQuery] = [
        .specimens("count * 2 > 5", [], #Predicate { $0.count * 2 > 5 }),
        .specimens("count + serial > 10", [], #Predicate { $0.count + $0.serial > 10 }),
        .specimens("weight / 2 < 1.0", [], #Predicate { $0.weight / 2 < 1.0 }),
        .specimens("count % 2 == 0", [], #Predicate { $0.count % 2 == 0 }),
    ]

    /// Sorted queries: the order must agree too, including string collation and `nil` placement.
    static let sorted: [CorpusQuery] = [
        .specimens(
            "count > 0, sorted by title (localized standard)", .ordering,
            #Predicate { $0.count > 0 }, sortBy: [SortDescriptor(\.title)]),
        .specimens(
            "isActive, sorted by title (lexical)", .equality,
            #Predicate { $0.isActive }, sortBy: [SortDescriptor(\.title, comparator: .lexical)]),
        .specimens(
            "count != 4, sorted by weight descending", .equality,
            #Predicate { $0.count != 4 }, sortBy: [SortDescriptor(\.weight, order: .reverse)]),
        .specimens(
            "tiny < 10, sorted by nickname (nil first)", .ordering,
            #Predicate { $0.tiny < 10 }, sortBy: [SortDescriptor(\.nickname)]),
        .specimens(
            "true, sorted by createdAt descending", [],
            #Predicate { _ in true }, sortBy: [SortDescriptor(\.createdAt, order: .reverse)]),
        .specimens(
            "price > 2, sorted by price then count descending", .ordering,
            #Predicate { $0.price > 2 }, sortBy: [SortDescriptor(\.price), SortDescriptor(\.count, order: .reverse)]),
        .specimens(
            "true, sorted by series, then serial descending (ties on the first key)", [],
            #Predicate { _ in true }, sortBy: [SortDescriptor(\.series), SortDescriptor(\.serial, order: .reverse)]),
        .specimens(
            "count < 4, sorted by title (lexical: case and normalization variants tie or differ), then weight "
                + "descending", .ordering,
            #Predicate { $0.count < 4 },
            sortBy: [SortDescriptor(\.title, comparator: .lexical), SortDescriptor(\.weight, order: .reverse)]),
        .specimens(
            "true, sorted by count, then nickname descending (nil last), then title", [],
            #Predicate { _ in true },
            sortBy: [
                SortDescriptor(\.count), SortDescriptor(\.nickname, order: .reverse),
                SortDescriptor(\.title, comparator: .lexical),
            ]),
        .make(
            "LogEntry: bucket == 1, sorted by sequence descending", .equality, key: \LogEntry.label,
            models: { $0.entries }, predicate: #Predicate { $0.bucket == 1 },
            sortBy: [SortDescriptor(\.sequence, order: .reverse)]),
        .make(
            "Folder: position > 0, sorted by name", .ordering, key: \Folder.name,
            models: { $0.folders }, predicate: #Predicate { $0.position > 0 },
            sortBy: [SortDescriptor(\.name, comparator: .lexical)]),
    ]
}
