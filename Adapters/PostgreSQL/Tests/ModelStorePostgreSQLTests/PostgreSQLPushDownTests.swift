import Foundation
import ModelStore
import ModelStoreInMemory
import ModelStorePostgreSQL
import Testing

/// A shelf of the push-down tests: every kind of value the translator pushes, a to-one and a
/// to-many relationship.
final class Shelf: PersistentModel {
    @Attribute var serial: Int = 0
    @Attribute var name: String = ""
    @Attribute var label: String? = nil
    @Attribute var rank: Int = 0
    @Attribute var level: Int? = nil
    @Attribute var weight: Double = 0
    @Attribute var price: Decimal = 0
    @Attribute var placedAt: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var tags: [String] = []
    @Relationship var keeper: Keeper?
    @Relationship(deleteRule: .cascade, inverse: \Book.shelf) var books: [Book] = []

    let persistentBackingData = BackingData()
    init() {}
}

/// The keeper a shelf refers to (to-one).
final class Keeper: PersistentModel {
    @Attribute var number: Int = 0
    @Attribute var name: String = ""
    @Attribute var age: Int? = nil

    let persistentBackingData = BackingData()
    init() {}
}

/// A book on a shelf (to-many).
final class Book: PersistentModel {
    @Attribute var title: String = ""
    @Attribute var pages: Int = 0
    @Attribute var rating: Double = 0
    @Relationship var shelf: Shelf?

    let persistentBackingData = BackingData()
    init() {}
}

/// Differential tests of push-down: every predicate, on seeded random data full of near misses
/// (case variants, combining and precomposed characters, `NaN`, `-0.0`, `nil`, equal sort keys,
/// dates a fraction of a microsecond apart), selects the same models pushed to PostgreSQL, on the
/// in-memory store, and in Swift (`Predicate.evaluate` on detached models); and what is pushed
/// exactly really runs in SQL.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLPushDownTests {
    static let schema = Schema([Shelf.self, Keeper.self, Book.self])

    static let words = [
        "apple", "Apple", "APPLE", "é", "e\u{301}", "éa", "e\u{301}z", "q\u{301}", "q", "", "ß", "ss", "a\r\nb",
        "\r", "日本", "f", "Éclair", "eclair", "\u{0}x",
    ]
    /// More array elements: a JSON escape before a combining mark, and the spellings it could be confused with.
    static let tagWords = ["\n\u{301}", "\\ń", "n\u{301}", "ń", "/"]
    static let doubles: [Double] = [0, -0.0, 1.5, .nan, -1, .infinity, 2, 2]
    static let decimals = ["0", "1.5", "1.50", "-2", "100", "0.1"].map { Decimal(string: $0)! }
    static let dates = [0, 0.000_000_1, 0.000_000_2, 1, 1, -5].map { Date(timeIntervalSinceReferenceDate: $0) }

    /// One seeded random graph, built detached: call again for another copy of the same data.
    static func graph(seed: UInt64) -> (shelves: [Shelf], keepers: [Keeper], books: [Book]) {
        var random = SplitMix(seed: seed)
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
        let keepers = (0..<4).map { number in
            let keeper = Keeper()
            keeper.number = number
            keeper.name = pick(words)
            keeper.age = chance(30) ? nil : Int(random.next() % 5)
            return keeper
        }
        var books: [Book] = []
        let shelves = (0..<40).map { serial in
            let shelf = Shelf()
            shelf.serial = serial
            shelf.name = pick(words)
            shelf.label = chance(40) ? nil : pick(words)
            shelf.rank = Int(random.next() % 5) - 2
            shelf.level = chance(40) ? nil : Int(random.next() % 3)
            shelf.weight = pick(doubles)
            shelf.price = pick(decimals)
            shelf.placedAt = pick(dates)
            shelf.tags = (0..<Int(random.next() % 4)).map { _ in pick(words + tagWords) }
            shelf.keeper = chance(25) ? nil : pick(keepers)
            for _ in 0..<Int(random.next() % 4) {
                let book = Book()
                book.title = pick(words)
                book.pages = Int(random.next() % 300)
                book.rating = pick(doubles)
                book.shelf = shelf
                shelf.books.append(book)
                books.append(book)
            }
            return shelf
        }
        return (shelves, keepers, books)
    }

    /// The predicates, by name, with the store's answer for them: `.exact` when SQL runs all of it,
    /// `.inexact` when SQL only narrows the rows (a text test, a part), `.unsupported` when SQL runs
    /// none of it.
    static let predicates: [(name: String, answer: StorePushDown, predicate: Predicate<Shelf>)] = {
        let word = "é"
        let low = 1
        let high = 2
        let limit = 1.5
        let price = Decimal(string: "1.5")!
        let date = Date(timeIntervalSinceReferenceDate: 0.000_000_1)
        let keeperName = "Apple"
        let names = ["é", "apple", "ss"]
        let labels: [String?] = [nil, "q"]
        let nul = "\u{0}x"
        let decomposed = "n\u{301}"
        let escaped = "\n\u{301}"
        return [
            ("name == é", .exact, #Predicate<Shelf> { $0.name == word }),
            ("name in [é, apple, ss]", .exact, #Predicate<Shelf> { names.contains($0.name) }),
            ("label in [nil, q]", .exact, #Predicate<Shelf> { labels.contains($0.label) }),
            ("name < f", .exact, #Predicate<Shelf> { $0.name < "f" }),
            ("label != apple", .exact, #Predicate<Shelf> { $0.label != "apple" }),
            ("label == nil", .exact, #Predicate<Shelf> { $0.label == nil }),
            ("rank in 1...2", .exact, #Predicate<Shelf> { (low...high).contains($0.rank) }),
            ("rank in 1..<2", .exact, #Predicate<Shelf> { (low..<high).contains($0.rank) }),
            ("weight in 0...1.5", .exact, #Predicate<Shelf> { (0.0...limit).contains($0.weight) }),
            ("weight > 0", .exact, #Predicate<Shelf> { $0.weight > 0 }),
            ("!(weight > 0)", .exact, #Predicate<Shelf> { !($0.weight > 0) }),
            ("weight != 1.5", .exact, #Predicate<Shelf> { $0.weight != limit }),
            ("price >= 1.5", .exact, #Predicate<Shelf> { $0.price >= price }),
            ("price == 1.5", .exact, #Predicate<Shelf> { $0.price == price }),
            ("placedAt < date", .exact, #Predicate<Shelf> { $0.placedAt < date }),
            ("placedAt == date", .exact, #Predicate<Shelf> { $0.placedAt == date }),
            ("keeper.name == Apple", .exact, #Predicate<Shelf> { $0.keeper?.name == keeperName }),
            ("keeper == nil", .exact, #Predicate<Shelf> { $0.keeper == nil }),
            ("keeper.age == nil", .exact, #Predicate<Shelf> { $0.keeper?.age == nil }),
            ("any book pages > 100", .exact, #Predicate<Shelf> { $0.books.contains { $0.pages > 100 } }),
            ("all books rating > 1", .exact, #Predicate<Shelf> { $0.books.allSatisfy { $0.rating > 1 } }),
            ("!any book rating == 2", .exact, #Predicate<Shelf> { !$0.books.contains { $0.rating == 2 } }),
            ("tags contains é", .exact, #Predicate<Shelf> { $0.tags.contains(word) }),
            ("tags contains NUL x", .exact, #Predicate<Shelf> { $0.tags.contains(nul) }),
            ("tags contains n + acute", .exact, #Predicate<Shelf> { $0.tags.contains(decomposed) }),
            ("tags contains newline + acute", .exact, #Predicate<Shelf> { $0.tags.contains(escaped) }),
            ("!tags contains apple", .exact, #Predicate<Shelf> { !$0.tags.contains("apple") }),
            ("tags contains / || rank > 1", .exact, #Predicate<Shelf> { $0.tags.contains("/") || $0.rank > 1 }),
            ("name contains e", .inexact, #Predicate<Shelf> { $0.name.contains("e") }),
            ("name starts with q", .inexact, #Predicate<Shelf> { $0.name.starts(with: "q") }),
            ("name starts with é", .inexact, #Predicate<Shelf> { $0.name.starts(with: word) }),
            ("name contains \\r", .inexact, #Predicate<Shelf> { $0.name.contains("\r") }),
            ("!name contains p", .unsupported, #Predicate<Shelf> { !$0.name.contains("p") }),
            ("contains e || rank > 1", .inexact, #Predicate<Shelf> { $0.name.contains("e") || $0.rank > 1 }),
            ("name contains É", .inexact, #Predicate<Shelf> { $0.name.contains("É") }),
            ("keeper.name starts with q", .inexact, #Predicate<Shelf> { $0.keeper?.name.starts(with: "q") == true }),
            ("any book title contains a", .inexact, #Predicate<Shelf> { $0.books.contains { $0.title.contains("a") } }),
            (
                "any book title contains \\r and pages > 100", .inexact,
                #Predicate<Shelf> { $0.books.contains { $0.title.contains("\r") && $0.pages > 100 } }
            ),
            (
                "!any book title starts with é", .unsupported,
                #Predicate<Shelf> { !$0.books.contains { $0.title.starts(with: word) } }
            ),
        ]
    }()

    /// A container on the server (in a fresh namespace) and one in memory, each holding the graph
    /// of a seed, and the server's store.
    static func seededContainers(seed: UInt64) throws -> (ModelContainer, ModelContainer, PostgreSQLStore) {
        let configuration = try PostgreSQLServer.configuration(namespace: PostgreSQLServer.freshNamespace("push"))
        let server = try ModelContainer(for: Self.schema, configurations: [configuration])
        let memory = try ModelContainer(for: Self.schema, configurations: [InMemoryStoreConfiguration()])
        for container in [server, memory] {
            let context = ModelContext(container)
            let graph = Self.graph(seed: seed)
            graph.keepers.forEach(context.insert)
            graph.shelves.forEach(context.insert)
            graph.books.forEach(context.insert)
            try context.save()
        }
        return (server, memory, try #require(server.stores.first as? PostgreSQLStore))
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func pushedFallbackAndSwiftAgree(seed: UInt64) throws {
        let (server, memory, store) = try Self.seededContainers(seed: seed)
        let detached = Self.graph(seed: seed).shelves
        for (name, answer, predicate) in Self.predicates {
            let truth = try detached.filter { try predicate.evaluate($0) }.map(\.serial).sorted()
            let descriptor = FetchDescriptor<Shelf>(predicate: predicate)
            let pushed = try ModelContext(server).fetch(descriptor).map(\.serial).sorted()
            let reference = try ModelContext(memory).fetch(descriptor).map(\.serial).sorted()
            #expect(pushed == truth, "'\(name)' pushed to PostgreSQL, seed \(seed)")
            #expect(reference == truth, "'\(name)' on the in-memory store, seed \(seed)")
            #expect(try ModelContext(server).fetchCount(descriptor) == truth.count, "count of '\(name)'")

            // The same, sorted by a key full of ties and windowed: the identifier breaks the ties.
            var sorted = FetchDescriptor<Shelf>(predicate: predicate, sortBy: [SortDescriptor(\.rank)])
            sorted.fetchOffset = 2
            sorted.fetchLimit = 5
            let pushedWindow = try ModelContext(server).fetch(sorted).map(\.rank)
            let referenceWindow = try ModelContext(memory).fetch(sorted).map(\.rank)
            #expect(pushedWindow == referenceWindow, "'\(name)' sorted by rank, offset 2, limit 5")
            // A window over what SQL only narrows (or does not run) is the context's, never SQL's.
            let windowed = try #require(try ModelContext(server).explain(sorted).storeQuery)
            #expect(
                (windowed.limit != nil) == (answer == .exact),
                "'\(name)' (\(answer)): the store received the limit \(windowed.limit.map(String.init) ?? "nil")")

            try Self.checkPlacement(name, answer, descriptor, server: server, store: store)
        }
    }

    /// Checks where a one-condition predicate runs: what the store answers for it, what reaches the
    /// store, what SQL does, and what the context checks afterwards.
    static func checkPlacement(
        _ name: String, _ answer: StorePushDown, _ descriptor: FetchDescriptor<Shelf>, server: ModelContainer,
        store: PostgreSQLStore
    ) throws {
        let explanation = try ModelContext(server).explain(descriptor)
        let condition = try #require(explanation.conditions.first, "'\(name)' has no condition")
        let filter = try #require(condition.filter, "'\(name)' did not translate")
        #expect(store.pushDown(filter, entityName: "Shelf") == answer, "the store's answer for '\(name)'")
        let query = try #require(explanation.storeQuery, "'\(name)' sent no query to the store")
        let plan = try store.queryPlan(for: query).joined(separator: "\n")
        let readsRelated = filter.traversesRelationships
        switch answer {
        case .exact:
            #expect(condition.location == .store && !condition.isInexact, "'\(name)': \(explanation)")
            #expect(query.filter == filter, "'\(name)' did not reach the store whole")
            #expect(!plan.contains("then evaluated by the store"), "'\(name)' is not all SQL:\n\(plan)")
            #expect(explanation.snapshotFilter == nil && !explanation.evaluatesPredicateOnModels, "\(explanation)")
        case .inexact:
            // Pushed for SQL's narrowing, and checked again by the context: on snapshots, or on
            // models when it reads through relationships.
            #expect(condition.location == .store && condition.isInexact, "'\(name)': \(explanation)")
            #expect(query.filter == filter, "'\(name)' did not reach the store")
            #expect(
                plan.contains("strpos") || plan.contains("starts_with"), "'\(name)' is not narrowed in SQL:\n\(plan)")
            #expect((explanation.snapshotFilter == filter) == !readsRelated, "'\(name)': \(explanation)")
            #expect(explanation.evaluatesPredicateOnModels == readsRelated, "'\(name)': \(explanation)")
        case .unsupported:
            // Never sent to the store: the context evaluates it.
            #expect(condition.location == (readsRelated ? .models : .snapshots), "'\(name)': \(explanation)")
            #expect(query.filter == nil, "'\(name)' reached the store: \(query)")
            #expect(!plan.contains("then evaluated by the store"), "'\(name)':\n\(plan)")
        }
    }

    /// A to-one relationship compared with a model (by identifier) runs in SQL, by key.
    @Test func relationshipComparedWithAModelRunsInSQL() throws {
        let (server, memory, store) = try Self.seededContainers(seed: 7)
        let detached = Self.graph(seed: 7).shelves
        for number in 0..<4 {
            let truth = detached.filter { $0.keeper?.number == number }.map(\.serial).sorted()
            var results: [[Int]] = []
            for container in [server, memory] {
                let keeper = try #require(
                    try ModelContext(container).fetch(
                        FetchDescriptor<Keeper>(predicate: #Predicate { $0.number == number })
                    ).first)
                let id = keeper.persistentModelID
                let ids: [PersistentIdentifier?] = [id]
                for predicate in [
                    #Predicate<Shelf> { $0.keeper?.persistentModelID == id },
                    #Predicate<Shelf> { ids.contains($0.keeper.flatMap { $0.persistentModelID }) },
                ] {
                    let descriptor = FetchDescriptor<Shelf>(predicate: predicate)
                    let found = try ModelContext(container).fetch(descriptor).map { $0.serial }
                    results.append(found.sorted())
                    if container === server {
                        let explanation = try ModelContext(server).explain(descriptor)
                        #expect(!explanation.evaluatesPredicateOnModels, "evaluated on models")
                        let query = try #require(explanation.storeQuery)
                        #expect(query.filter != nil, "no filter reached the store")
                        let plan = try store.queryPlan(for: query).joined(separator: "\n")
                        #expect(!plan.contains("then evaluated by the store"), "not run in SQL:\n\(plan)")
                    }
                }
            }
            #expect(results.allSatisfy { $0 == truth }, "keeper \(number): \(results) vs Swift's \(truth)")
        }
    }
}
