import Foundation
import ModelStore
import ModelStoreAdapterKit
import Testing

@testable import ModelStorePostgreSQL

/// A gauge of the query-cache tests: an attribute of every kind a parameter binds, and a to-one
/// relationship.
final class Gauge: PersistentModel {
    @Attribute var serial: Int = 0
    @Attribute var name: String = ""
    @Attribute var note: String? = nil
    @Attribute var count: Int = 0
    @Attribute var reading: Double = 0
    @Attribute var amount: Decimal = 0
    @Attribute var at: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var on: Bool = false
    @Attribute var token: UUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    @Attribute var tags: [String] = []
    @Relationship var owner: Keeper?

    let persistentBackingData = BackingData()
    init() {}
}

/// The store translates a query once per shape and keeps the plan: queries that differ only in
/// their operands share it, and each binds its own operands. For every kind of parameter, a
/// family of filters of one shape, run with operands in one order and then the reverse (so
/// plans are found both among the last used and by shape), selects exactly what Swift's
/// evaluation of the same filter selects on every stored snapshot.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLQueryCacheTests {
    static let schema = Schema([Gauge.self, Keeper.self])
    static let words = PostgreSQLPushDownTests.words
    static let tokens = (0..<3).map { byte in
        UUID(uuid: (UInt8(byte), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))
    }

    /// A store on the server holding seeded random gauges and keepers.
    static func seededStore(seed: UInt64) throws -> (ModelContainer, PostgreSQLStore) {
        let configuration = try PostgreSQLServer.configuration(namespace: PostgreSQLServer.freshNamespace("cache"))
        let container = try ModelContainer(for: schema, configurations: [configuration])
        let context = ModelContext(container)
        var random = SplitMix(seed: seed)
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        let keepers = (0..<4).map { number in
            let keeper = Keeper()
            keeper.number = number
            keeper.name = pick(words)
            context.insert(keeper)
            return keeper
        }
        for serial in 0..<60 {
            let gauge = Gauge()
            gauge.serial = serial
            gauge.name = pick(words)
            gauge.note = random.next() % 3 == 0 ? nil : pick(words)
            gauge.count = Int(random.next() % 7) - 3
            gauge.reading = pick(PostgreSQLPushDownTests.doubles)
            gauge.amount = pick(PostgreSQLPushDownTests.decimals)
            gauge.at = pick(PostgreSQLPushDownTests.dates)
            gauge.on = random.next() % 2 == 0
            gauge.token = pick(tokens)
            gauge.tags = (0..<Int(random.next() % 3)).map { _ in pick(words) }
            gauge.owner = random.next() % 4 == 0 ? nil : pick(keepers)
            context.insert(gauge)
        }
        try context.save()
        return (container, try #require(container.stores.first as? PostgreSQLStore))
    }

    /// Families of filters, each of one shape but for the operands.
    static func families(keepers: [PersistentIdentifier]) -> [(name: String, filters: [StoreFilter])] {
        func path(_ names: String...) -> StorePath { StorePath(names) }
        let strings = words.map(StoreValue.string)
        let ints = (-4...4).map { StoreValue.int(Int64($0)) }
        let doubles = [0, -1, 1.5, 2, .infinity, -0.0].map(StoreValue.double)
        let decimals = PostgreSQLPushDownTests.decimals.map(StoreValue.decimal)
        let dates = PostgreSQLPushDownTests.dates.map(StoreValue.date)
        let references = keepers.map(StoreValue.reference)
        return [
            ("name == s", strings.map { .compare(path("name"), .equal, $0) }),
            // Not "éa": Swift 6.3.1 answers `"e\u{301}" < "\u{E9}a"` false, although the two "é" are
            // equal and `"\u{E9}" < "\u{E9}a"`; SQL orders the NFC forms, which puts the first before.
            ("name < s", strings.filter { $0 != .string("\u{E9}a") }.map { .compare(path("name"), .less, $0) }),
            ("note != s", strings.map { .compare(path("note"), .notEqual, $0) }),
            ("name in [s, t]", zip(strings, strings.reversed()).map { .isIn(path("name"), [$0, $1]) }),
            ("note in [nil, s]", strings.map { .isIn(path("note"), [.null, $0]) }),
            ("count in [i, j]", zip(ints, ints.reversed()).map { .isIn(path("count"), [$0, $1]) }),
            (
                "count in i...j",
                zip(ints, ints.reversed()).map {
                    .range(path("count"), StoreRange(lower: $0, upper: $1, includesUpper: true))
                }
            ),
            ("reading > d", doubles.map { .compare(path("reading"), .greater, $0) }),
            ("reading <= i", ints.map { .compare(path("reading"), .lessOrEqual, $0) }),
            ("amount >= x", decimals.map { .compare(path("amount"), .greaterOrEqual, $0) }),
            ("amount == i", ints.map { .compare(path("amount"), .equal, $0) }),
            ("at < date", dates.map { .compare(path("at"), .less, $0) }),
            ("on == b", [true, false, true].map { .compare(path("on"), .equal, .bool($0)) }),
            ("token == u", tokens.map { .compare(path("token"), .equal, .uuid($0)) }),
            ("tags contains s", strings.map { .arrayContains(path("tags"), $0) }),
            ("name contains s", strings.map { .text(path("name"), .contains(Self.text($0))) }),
            (
                "count > i && name starts with s",
                zip(ints.cycled(to: strings.count), strings).map {
                    .and([.compare(path("count"), .greater, $0), .text(path("name"), .hasPrefix(Self.text($1)))])
                }
            ),
            ("owner == k", references.map { .compare(path("owner"), .equal, $0) }),
            ("owner in [k, l]", zip(references, references.reversed()).map { .isIn(path("owner"), [$0, $1]) }),
            ("owner.name == s", strings.map { .compare(path("owner", "name"), .equal, $0) }),
        ]
    }

    static func text(_ value: StoreValue) -> String {
        if case .string(let text) = value { return text }
        return ""
    }

    @Test(arguments: [1, 2] as [UInt64])
    func queriesOfOneShapeShareAPlanAndBindTheirOwnOperands(seed: UInt64) throws {
        let (container, store) = try Self.seededStore(seed: seed)
        withExtendedLifetime(container) {}
        let every = try store.fetch(
            DataStoreFetchRequest(
                descriptor: FetchDescriptor<Gauge>(), editingState: EditingState(),
                query: StoreQuery(entityName: "Gauge"))
        ).fetchedSnapshots
        let owners = try store.fetch(
            DataStoreFetchRequest(
                descriptor: FetchDescriptor<Keeper>(), editingState: EditingState(),
                query: StoreQuery(entityName: "Keeper"))
        ).fetchedSnapshots
        let ownersByID = Dictionary(uniqueKeysWithValues: owners.map { ($0.persistentIdentifier, $0) })
        let entity = try #require(Self.schema.entity(named: "Gauge"))
        for family in Self.families(keepers: owners.map(\.persistentIdentifier)) {
            #expect(family.filters.count >= 3, "'\(family.name)' needs operands that differ")
            var reused = 0
            var previous: (shape: StoreFilterShape?, plan: PostgreSQLCompiledQuery)?
            for filter in family.filters + family.filters.reversed() {
                let evaluator = try SnapshotEvaluator(
                    filter: filter, entity: entity, schema: Self.schema, resolve: { ownersByID[$0] })
                let truth = every.filter(evaluator.matches).compactMap { $0["serial"] }
                let query = StoreQuery(entityName: "Gauge", filter: filter)
                let found = try store.fetch(
                    DataStoreFetchRequest(
                        descriptor: FetchDescriptor<Gauge>(), editingState: EditingState(), query: query)
                ).fetchedSnapshots.compactMap { $0["serial"] }
                #expect(
                    found == truth, "'\(family.name)' with \(filter): \(found.count) rows, Swift selects \(truth.count)"
                )
                #expect(
                    try store.fetchCount(
                        DataStoreFetchRequest(
                            descriptor: FetchDescriptor<Gauge>(), editingState: EditingState(), query: query)
                    ) == truth.count, "count of '\(family.name)' with \(filter)")

                let shape = StoreFilterShape(filter)
                let plan = try store.plan(for: query).compiled
                if let previous, previous.shape == shape {
                    #expect(previous.plan === plan, "'\(family.name)' with \(filter) was translated again")
                    reused += 1
                }
                previous = (shape, plan)
            }
            #expect(reused > 0, "'\(family.name)': no two queries shared a plan")
        }
    }

    /// A `NaN` operand is a shape of its own: the plan kept for numbers does not serve it (it binds no
    /// `NaN`), and its own plan selects what Swift selects: nothing is greater than `NaN`.
    @Test func aNaNOperandIsPlannedApart() throws {
        let (container, store) = try Self.seededStore(seed: 3)
        withExtendedLifetime(container) {}
        let request = { (value: Double) in
            DataStoreFetchRequest(
                descriptor: FetchDescriptor<Gauge>(), editingState: EditingState(),
                query: StoreQuery(
                    entityName: "Gauge", filter: .compare(StorePath("reading"), .greater, .double(value))))
        }
        let number = try store.plan(for: try #require(request(1).query)).compiled
        let notANumber = try store.plan(for: try #require(request(.nan).query)).compiled
        #expect(number !== notANumber)
        #expect(try store.fetch(request(.nan)).fetchedSnapshots.isEmpty)
        #expect(try store.fetch(request(-.infinity)).fetchedSnapshots.count > 0)
    }
}

extension Array {
    /// The elements repeated in order until there are `count` of them.
    fileprivate func cycled(to count: Int) -> [Element] {
        (0..<count).map { self[$0 % self.count] }
    }
}
