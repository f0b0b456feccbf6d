import Foundation
import ModelStore
import Testing

@testable import ModelStorePostgreSQL

/// A specimen of the array-insert tests: every kind of column the layout keeps (most optional, so
/// that arrays carry `NULL`s), a unique text, a to-one and a to-many relationship.
final class Specimen: PersistentModel {
    @Attribute(.unique) var code: String = ""
    @Attribute var flag: Bool? = nil
    @Attribute var count: Int = 0
    @Attribute var small: Int32? = nil
    @Attribute var wide: UInt64 = 0
    @Attribute var ratio: Double? = nil
    @Attribute var scale: Float = 0
    @Attribute var price: Decimal? = nil
    @Attribute var note: String? = nil
    @Attribute var seen: Date? = nil
    @Attribute var blob: Data? = nil
    @Attribute var uid: UUID? = nil
    @Attribute var link: URL? = nil
    @Attribute var tags: [String]? = nil
    @Attribute var scores: [String: Int] = [:]
    @Relationship var holder: Holder?
    @Relationship var picks: [Holder] = []

    let persistentBackingData = BackingData()
    init() {}
}

/// What a specimen refers to.
final class Holder: PersistentModel {
    @Attribute var number: Int = 0

    let persistentBackingData = BackingData()
    init() {}
}

/// A save of many new models inserts each table's rows as one array per column, unnested by one
/// prepared statement per table, in batches (`RowWriter.rowsPerArrayInsert` rows, about
/// `RowWriter.bytesPerArrayInsert` bytes). These tests check that every column type, `nil`, and
/// to-many relationship reads back as a plain-Swift copy of the data says, across batch boundaries,
/// and that a refused unique value still names the model and stores nothing.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLArrayInsertTests {
    static let schema = Schema([Specimen.self, Holder.self])

    /// The oracle: one specimen's values, in plain Swift.
    struct Row {
        var code = ""
        var flag: Bool?
        var count = 0
        var small: Int32?
        var wide: UInt64 = 0
        var ratio: Double?
        var scale: Float = 0
        var price: Decimal?
        var note: String?
        var seen: Date?
        var blob: Data?
        var uid: UUID?
        var link: URL?
        var tags: [String]?
        var scores: [String: Int] = [:]
        /// Indexes into the holders.
        var holder: Int?
        var picks: [Int] = []
    }

    static let words = [
        "", "a", "é", "e\u{301}", "\u{0}", "\u{1}", "\u{1}\u{2}", "x\u{0}y", "日本", "\"q\"", "\\", "{}", "NULL",
    ]
    static let doubles: [Double] = [0, -0.0, .nan, .infinity, -.infinity, 1.5, -1e300, .leastNonzeroMagnitude]
    static let decimals = ["0", "1.5", "-2", "123456789012345678.25", "0.001"].map { Decimal(string: $0)! }

    /// Seeded random rows (codes unique, `code` prefixed by `prefix`) over `holders` holders.
    static func rows(_ count: Int, seed: UInt64, holders: Int, prefix: String = "s") -> [Row] {
        var random = SplitMix(seed: seed)
        func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
        func maybe<T>(_ value: @autoclosure () -> T) -> T? { random.next() % 4 == 0 ? nil : value() }
        return (0..<count).map { index in
            var row = Row()
            row.code = prefix + "\(index)" + pick(words)
            row.flag = maybe(random.next() % 2 == 0)
            row.count = Int(bitPattern: UInt(random.next()))
            row.small = maybe(Int32(truncatingIfNeeded: random.next()))
            row.wide = pick([0, UInt64.max, random.next()])
            row.ratio = maybe(pick(doubles))
            row.scale = Float(bitPattern: UInt32(truncatingIfNeeded: random.next() >> 40) & 0x7F7F_FFFF)
            row.price = maybe(pick(decimals))
            row.note = maybe(pick(words) + pick(words))
            row.seen = maybe(Date(timeIntervalSinceReferenceDate: Double(Int64(bitPattern: random.next()) >> 20) / 7))
            row.blob = maybe(Data((0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
            row.uid = maybe(UUID())
            row.link = maybe(URL(string: "https://example.com/\(index)?q=\(random.next() % 100)")!)
            row.tags = maybe((0..<Int(random.next() % 4)).map { _ in pick(words) })
            row.scores = random.next() % 3 == 0 ? [:] : [pick(words): Int(random.next() % 1000), "k": -1]
            if holders > 0 {
                row.holder = maybe(Int(random.next() % UInt64(holders)))
                var order = Array(0..<holders)
                for index in order.indices.reversed() {
                    order.swapAt(index, Int(random.next() % UInt64(index + 1)))
                }
                row.picks = Array(order.prefix(Int(random.next() % 4)))
            }
            return row
        }
    }

    /// Inserts `rows` (and `holders` holders) in one save.
    static func save(
        _ rows: [Row], holders count: Int, into container: ModelContainer, policy: DuplicateInsertPolicy = .upsert
    ) throws {
        let context = ModelContext(container)
        context.duplicateInsertPolicy = policy
        let holders = (0..<count).map { number in
            let holder = Holder()
            holder.number = number
            context.insert(holder)
            return holder
        }
        for row in rows { context.insert(specimen(row, holders: holders)) }
        try context.save()
    }

    static func specimen(_ row: Row, holders: [Holder]) -> Specimen {
        let specimen = Specimen()
        specimen.code = row.code
        specimen.flag = row.flag
        specimen.count = row.count
        specimen.small = row.small
        specimen.wide = row.wide
        specimen.ratio = row.ratio
        specimen.scale = row.scale
        specimen.price = row.price
        specimen.note = row.note
        specimen.seen = row.seen
        specimen.blob = row.blob
        specimen.uid = row.uid
        specimen.link = row.link
        specimen.tags = row.tags
        specimen.scores = row.scores
        specimen.holder = row.holder.map { holders[$0] }
        specimen.picks = row.picks.map { holders[$0] }
        return specimen
    }

    /// Exact text equality (scalar by scalar; Swift's `==` equates canonically equivalent strings).
    static func same(_ a: String?, _ b: String?) -> Bool {
        a.map { Array($0.unicodeScalars) } == b.map { Array($0.unicodeScalars) }
    }

    /// The first difference between a stored specimen and its oracle row, or `nil`.
    static func difference(_ stored: Specimen, _ row: Row) -> String? {
        var differences: [String] = []
        func check(_ equal: Bool, _ name: String, _ found: Any, _ expected: Any) {
            if !equal { differences.append("\(name): \(found) instead of \(expected)") }
        }
        check(same(stored.code, row.code), "code", stored.code.debugDescription, row.code.debugDescription)
        check(stored.flag == row.flag, "flag", stored.flag as Any, row.flag as Any)
        check(stored.count == row.count, "count", stored.count, row.count)
        check(stored.small == row.small, "small", stored.small as Any, row.small as Any)
        check(stored.wide == row.wide, "wide", stored.wide, row.wide)
        check(stored.ratio?.bitPattern == row.ratio?.bitPattern, "ratio", stored.ratio as Any, row.ratio as Any)
        check(stored.scale.bitPattern == row.scale.bitPattern, "scale", stored.scale, row.scale)
        check(stored.price == row.price, "price", stored.price as Any, row.price as Any)
        check(same(stored.note, row.note), "note", stored.note.debugDescription, row.note.debugDescription)
        check(
            stored.seen?.timeIntervalSinceReferenceDate.bitPattern
                == row.seen?.timeIntervalSinceReferenceDate.bitPattern,
            "seen", stored.seen as Any, row.seen as Any)
        check(stored.blob == row.blob, "blob", stored.blob as Any, row.blob as Any)
        check(stored.uid == row.uid, "uid", stored.uid as Any, row.uid as Any)
        check(stored.link?.absoluteString == row.link?.absoluteString, "link", stored.link as Any, row.link as Any)
        check(
            stored.tags.map { $0.map { Array($0.unicodeScalars) } }
                == row.tags.map { $0.map { Array($0.unicodeScalars) } },
            "tags", stored.tags.debugDescription, row.tags.debugDescription)
        check(stored.scores == row.scores, "scores", stored.scores, row.scores)
        check(stored.holder?.number == row.holder, "holder", stored.holder?.number as Any, row.holder as Any)
        check(stored.picks.map(\.number) == row.picks, "picks", stored.picks.map(\.number), row.picks)
        return differences.isEmpty
            ? nil : "specimen \(row.code.debugDescription): " + differences.joined(separator: "; ")
    }

    /// Reads every specimen with a fresh context and checks it against the oracle, in any order.
    ///
    /// With `prefetching`, the fetch reads the holders and picks with the specimens (a few queries in
    /// all), where otherwise each specimen's first read of them is a query of its own: thousands of
    /// round trips for the batch-sized saves, which the tests with few rows leave to cover that path.
    static func expectStored(
        _ rows: [Row], in container: ModelContainer, prefetching: Bool = false,
        sourceLocation: SourceLocation = #_sourceLocation
    )
        throws
    {
        var descriptor = FetchDescriptor<Specimen>()
        if prefetching { descriptor.relationshipKeyPathsForPrefetching = [\Specimen.holder, \Specimen.picks] }
        let stored = try ModelContext(container).fetch(descriptor)
        #expect(stored.count == rows.count, "stored \(stored.count) specimens", sourceLocation: sourceLocation)
        let byCode = Dictionary(stored.map { (Array($0.code.unicodeScalars), $0) }, uniquingKeysWith: { a, _ in a })
        var differences: [String] = []
        for row in rows {
            guard let specimen = byCode[Array(row.code.unicodeScalars)] else {
                differences.append("specimen \(row.code.debugDescription) is missing")
                continue
            }
            if let difference = difference(specimen, row) { differences.append(difference) }
        }
        #expect(differences.isEmpty, "\(differences.prefix(5))", sourceLocation: sourceLocation)
    }

    static func container(_ label: String) throws -> (ModelContainer, String) {
        let namespace = PostgreSQLServer.freshNamespace(label)
        let container = try ModelContainer(
            for: schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
        return (container, namespace)
    }

    /// Counts the statements that insert specimens from now on (see ``batches(_:)``): a trigger of
    /// the namespace's `Specimen` table, once per `INSERT` statement, adds one to a counter.
    static func countBatches(_ namespace: String) async throws {
        let schema = "\"\(namespace)\""
        try await AdminConnection.using { admin in
            _ = try await admin.run("CREATE TABLE \(schema).batch_count (n integer NOT NULL)")
            _ = try await admin.run("INSERT INTO \(schema).batch_count VALUES (0)")
            // SECURITY DEFINER: it runs with the rights of its creator, not the store's user's.
            _ = try await admin.run(
                "CREATE FUNCTION \(schema).count_batch() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS "
                    + "$f$ BEGIN UPDATE \(schema).batch_count SET n = n + 1; RETURN NULL; END $f$")
            _ = try await admin.run(
                "CREATE TRIGGER count_batch AFTER INSERT ON \(schema).\"Specimen\" FOR EACH STATEMENT "
                    + "EXECUTE FUNCTION \(schema).count_batch()")
        }
    }

    /// How many `INSERT` statements wrote specimens since ``countBatches(_:)``: each batch of rows is
    /// one statement.
    static func batches(_ namespace: String) async throws -> Int {
        var count = 0
        try await AdminConnection.using { admin in
            let found = try await admin.run("SELECT n::text FROM \"\(namespace)\".batch_count")
            count = Int(found.first ?? "") ?? -1
        }
        return count
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func rowsOfEveryColumnTypeWithNilsAndToManyReadBackAsInserted(seed: UInt64) throws {
        var random = SplitMix(seed: seed)
        let (container, _) = try Self.container("ai")
        var all: [Row] = []
        var counts: [Int] = []
        // Several saves into the same tables, of sizes on both sides of the one-row path's two.
        for round in 0..<3 {
            let count = [1, 2, 3, Int(random.next() % 300) + 3][Int(random.next() % 4)]
            let rows = Self.rows(count, seed: random.next(), holders: 5, prefix: "r\(round)-")
            // Each round inserts holders numbered 0…4 of its own, which its picks name.
            try Self.save(rows, holders: 5, into: container)
            all += rows
            counts.append(count)
            try Self.expectStored(all, in: container)
        }
        // Each save recorded its inserts in the history.
        let history = try #require(container.stores.first as? any HistoryProviding)
        let transactions = try history.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(
            transactions.map { transaction in
                transaction.changes.filter {
                    guard case .insert = $0 else { return false }
                    return $0.changedPersistentIdentifier.entityName == "Specimen"
                }.count
            } == counts)
    }

    @Test func batchesEndAtTheirRowAndByteLimitsAndReadBackWhole() async throws {
        let limit = RowWriter.rowsPerArrayInsert
        for (count, batches) in [(limit, 1), (limit + 1, 2)] {
            let (container, namespace) = try Self.container("ab")
            try await Self.countBatches(namespace)
            let rows = Self.rows(count, seed: UInt64(count), holders: 3)
            try Self.save(rows, holders: 3, into: container)
            try Self.expectStored(rows, in: container, prefetching: true)
            #expect(try await Self.batches(namespace) == batches, "\(count) rows")
        }
        // Rows of a megabyte each: a batch ends once its values pass the byte limit.
        let (container, namespace) = try Self.container("ab")
        try await Self.countBatches(namespace)
        var rows = Self.rows(10, seed: 9, holders: 0)
        for index in rows.indices {
            rows[index].blob = Data(repeating: UInt8(index), count: RowWriter.bytesPerArrayInsert / 8)
        }
        try Self.save(rows, holders: 0, into: container)
        try Self.expectStored(rows, in: container)
        #expect(try await Self.batches(namespace) == 2)
    }

    @Test func aDuplicateUniqueValueNamesTheModelAndLeavesTheStoreAsItWas() async throws {
        let (container, namespace) = try Self.container("ad")
        let first = Self.rows(20, seed: 5, holders: 2, prefix: "old-")
        try Self.save(first, holders: 2, into: container)
        let history = try #require(container.stores.first as? any HistoryProviding)
        let recorded = try history.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count
        // A batch repeating a stored value, one repeating its own, and one whose repeat comes in its
        // second array insert, after the first was written.
        let limit = RowWriter.rowsPerArrayInsert
        for (count, duplicate, of) in [(50, 30, first[7].code), (50, 40, "new-12"), (limit + 10, limit + 5, "new-3")] {
            var rows = Self.rows(count, seed: UInt64(count), holders: 2, prefix: "new-")
            for index in rows.indices { rows[index].code = "new-\(index)" }
            rows[duplicate].code = of
            // Through a context that refuses duplicates, and straight to the store (no context
            // looks for the duplicate first).
            let store = try #require(container.stores.first as? PostgreSQLStore)
            let entity = try #require(Self.schema.entity(named: "Specimen"))
            let snapshots = try rows.map { row in
                try DefaultSnapshot(
                    persistentIdentifier: .temporary(entityName: "Specimen"), entity: entity,
                    namedValues: ["code": .string(row.code), "count": .int(Int64(row.count))])
            }
            let errors = [
                try #require(throws: DataStoreError.self) {
                    try Self.save(rows, holders: 2, into: container, policy: .error)
                },
                try #require(throws: DataStoreError.self) {
                    try store.insert(
                        DataStoreBatchInsertRequest(snapshots: snapshots, editingState: EditingState(author: nil)))
                },
            ]
            for error in errors {
                #expect(error.code == .uniqueConstraintViolation)
                #expect(error.entityName == "Specimen")
                #expect(error.propertyNames == ["code"])
                #expect(error.conflictingValues == [.string(of)])
            }
            try Self.expectStored(first, in: container)
            #expect(try history.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count == recorded)
            var holders: [String] = []
            try await AdminConnection.using { admin in
                holders = try await admin.run("SELECT count(*)::text FROM \"\(namespace)\".\"Holder\"")
            }
            #expect(holders == ["2"])
        }
    }

    @Test func aBatchWithAValueNotOfItsColumnsTypeIsInsertedListed() async throws {
        let (container, namespace) = try Self.container("af")
        try await Self.countBatches(namespace)
        let store = try #require(container.stores.first as? PostgreSQLStore)
        let entity = try #require(Self.schema.entity(named: "Specimen"))
        // Rows of a code, a note and a price: the other properties keep their defaults.
        var rows: [Row] = []
        var snapshots: [DefaultSnapshot] = []
        for index in 0..<20 {
            var row = Row()
            row.code = "f\(index)"
            row.note = index % 3 == 0 ? nil : "n\(index)"
            // An integer where the column keeps a decimal: a `numeric[]` cannot hold it as sent, so
            // this row and those after it go in a multi-row `VALUES`, which the server converts.
            row.price = index == 10 ? 7 : index % 2 == 0 ? nil : Decimal(index) / 4
            rows.append(row)
            snapshots.append(
                try DefaultSnapshot(
                    persistentIdentifier: .temporary(entityName: "Specimen"), entity: entity,
                    namedValues: [
                        "code": .string(row.code), "note": row.note.map { .string($0) } ?? .null,
                        "price": index == 10 ? .int(7) : row.price.map { .decimal($0) } ?? .null,
                    ]))
        }
        _ = try store.insert(
            DataStoreBatchInsertRequest(snapshots: snapshots, editingState: EditingState(author: nil)))
        try Self.expectStored(rows, in: container)
        // Rows 0…9 in one array insert, 10…19 in one listed insert.
        #expect(try await Self.batches(namespace) == 2)
    }
}
