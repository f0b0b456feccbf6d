import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreInMemory
import ModelStoreTestSupport
import Testing

/// ``SnapshotTable``'s indexes: the rows an index finds are the rows a scan finds, through any
/// sequence of inserts, updates, deletes and loads, and queries use the index they should.
struct QueryIndexTests {
    let schema = Schema([Reading.self])
    var entity: Schema.Entity { schema.entity(named: "Reading")! }

    func snapshot(_ code: String, int: Int, double: Double, text: String, note: String? = nil) throws -> DefaultSnapshot
    {
        try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: "Reading"), entity: entity,
            namedValues: [
                "code": .string(code), "int": .int(Int64(int)), "double": .double(double), "text": .string(text),
                "note": note.map(StoreValue.string) ?? .null,
            ])
    }

    /// What a plain scan returns: every snapshot, filtered, sorted, windowed.
    func scan(_ table: SnapshotTable, _ query: StoreQuery) throws -> [DefaultSnapshot] {
        var rows = table.snapshots(of: query.entityName)
        if let filter = query.filter {
            let evaluator = try SnapshotEvaluator(filter: filter, entity: entity, schema: schema) {
                table.snapshot(for: $0)
            }
            rows = rows.filter(evaluator.matches)
        }
        try SnapshotEvaluator.sort(&rows, by: query.sort, entity: entity)
        return SnapshotEvaluator.window(rows, offset: query.offset, limit: query.limit)
    }

    static func queries(_ rng: inout SplitMix64) -> [StoreQuery] {
        let ints = [-3, 0, 1, 2, 5, 9, 100].map { StoreValue.int(Int64($0)) }
        let doubles: [StoreValue] = [-1, 0, 0.5, 2, 7.25].map { .double($0) }
        let texts = ["", "a", "A", "ab", "b", "zz"].map { StoreValue.string($0) }
        var filters: [StoreFilter?] = [
            nil,
            .compare("int", .equal, rng.pick(ints)),
            .compare("code", .equal, .string(String(format: "C%03d", Int.random(in: 0..<80, using: &rng)))),
            .isIn("code", (0..<3).map { _ in .string(String(format: "C%03d", Int.random(in: 0..<80, using: &rng))) }),
            .isIn("int", [rng.pick(ints), rng.pick(ints)]),
            .compare("int", rng.pick([.less, .lessOrEqual, .greater, .greaterOrEqual]), rng.pick(ints)),
            .compare("double", rng.pick([.less, .greater, .greaterOrEqual]), rng.pick(doubles)),
            .range("text", StoreRange(lower: rng.pick(texts), upper: rng.pick(texts), includesUpper: rng.chance(50))),
            .and([.compare("int", .greater, rng.pick(ints)), .compare("int", .lessOrEqual, rng.pick(ints))]),
            .and([.compare("int", .equal, rng.pick(ints)), .compare("text", .notEqual, rng.pick(texts))]),
            .compare("note", .equal, .null),
        ]
        filters.append(.or([filters[1]!, filters[5]!]))
        let sorts: [[StoreSortKey]] = [
            [], [StoreSortKey(property: "int")], [StoreSortKey(property: "int", ascending: false)],
            [StoreSortKey(property: "text")], [StoreSortKey(property: "double", ascending: false)],
            [StoreSortKey(property: "int"), StoreSortKey(property: "text", ascending: false)],
            [StoreSortKey(property: "text", ascending: false), StoreSortKey(property: "code")],
        ]
        return filters.map { filter in
            let limit: Int? = rng.chance(60) ? Int.random(in: 0...6, using: &rng) : nil
            return StoreQuery(
                entityName: "Reading", filter: filter, sort: rng.pick(sorts),
                offset: rng.chance(30) ? Int.random(in: 0...4, using: &rng) : 0,
                limit: limit)
        }
    }

    @Test(arguments: [11, 12, 13] as [UInt64])
    func indexesAgreeWithScansThroughChanges(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var table = SnapshotTable(schema: schema)
        let ints = [-3, 0, 1, 2, 5, 9, 100]
        let doubles: [Double] = [-1, 0, -0.0, 0.5, 2, 7.25]
        let texts = ["", "a", "A", "ab", "b", "zz"]
        var next = 0
        for step in 0..<60 {
            let live = table.snapshots(of: "Reading")
            switch Int.random(in: 0..<5, using: &rng) {
            case 0, 1:
                // Insert a batch (sometimes large enough to merge the ordered indexes' tails).
                let size = rng.chance(20) ? 300 : Int.random(in: 1...8, using: &rng)
                var inserted: [DefaultSnapshot] = []
                for _ in 0..<size {
                    inserted.append(
                        try snapshot(
                            String(format: "C%03d", next), int: rng.pick(ints), double: rng.pick(doubles),
                            text: rng.pick(texts),
                            note: rng.chance(30) ? nil : rng.pick(texts)))
                    next += 1
                }
                _ = try table.save(
                    DataStoreSaveChangesRequest(
                        editingState: EditingState(), inserted: inserted, updated: [], deleted: []),
                    storeIdentifier: "t")
            case 2:
                // Update some rows.
                let updated = live.shuffled(using: &rng).prefix(Int.random(in: 0...20, using: &rng)).map {
                    row -> DefaultSnapshot in
                    var row = row
                    row["int"] = .int(Int64(rng.pick(ints)))
                    row["text"] = .string(rng.pick(texts))
                    row["double"] = .double(rng.pick(doubles))
                    return row
                }
                _ = try table.save(
                    DataStoreSaveChangesRequest(
                        editingState: EditingState(), inserted: [], updated: updated, deleted: []),
                    storeIdentifier: "t")
            case 3:
                // Delete some rows.
                table.delete(
                    live.shuffled(using: &rng).prefix(Int.random(in: 0...30, using: &rng)).map(\.persistentIdentifier))
            default:
                // Batch update through prepareUpdate/applyUpdate, or reload everything.
                if rng.chance(50) {
                    let ids = live.prefix(Int.random(in: 0...10, using: &rng)).map(\.persistentIdentifier)
                    table.applyUpdate(
                        try table.prepareUpdate(ids, values: [entity.slot(of: "int")!: .int(Int64(rng.pick(ints)))]))
                } else {
                    var reloaded = SnapshotTable(schema: schema)
                    try reloaded.load(live.shuffled(using: &rng))
                    table = reloaded
                }
            }
            for query in Self.queries(&rng) {
                let indexed = try table.fetch(query).map(\.persistentIdentifier)
                let scanned = try scan(table, query).map(\.persistentIdentifier)
                #expect(indexed == scanned, "seed \(seed) step \(step): \(query) via \(table.accessPath(for: query))")
            }
        }
    }

    @Test func queriesUseTheIndexTheyShould() throws {
        var table = SnapshotTable(schema: schema)
        let rows = try (0..<400).map {
            try snapshot(String(format: "C%03d", $0), int: $0 % 40, double: Double($0), text: "t\($0 % 7)")
        }
        _ = try table.save(
            DataStoreSaveChangesRequest(editingState: EditingState(), inserted: rows, updated: [], deleted: []),
            storeIdentifier: "t")
        func path(_ filter: StoreFilter?, sort: [StoreSortKey] = [], limit: Int? = nil) -> StoreAccessPath {
            table.accessPath(for: StoreQuery(entityName: "Reading", filter: filter, sort: sort, limit: limit))
        }
        #expect(
            path(.compare("code", .equal, .string("C007")))
                == StoreAccessPath(kind: .uniqueIndex, properties: ["code"], estimatedRows: 1))
        #expect(path(.isIn("code", [.string("C001"), .string("C002"), .string("nope")])).estimatedRows == 2)
        #expect(
            path(.compare("int", .equal, .int(3)))
                == StoreAccessPath(kind: .hashIndex, properties: ["int"], estimatedRows: 10))
        #expect(path(.compare("double", .greaterOrEqual, .double(390))).kind == .orderedIndexRange)
        #expect(path(.compare("double", .greaterOrEqual, .double(390))).estimatedRows == 10)
        #expect(path(.compare("double", .greaterOrEqual, .double(0))).kind == .scan)
        #expect(path(nil, sort: [StoreSortKey(property: "text", ascending: false)], limit: 5).kind == .orderedIndexSort)
        #expect(path(nil, sort: [StoreSortKey(property: "text", comparison: .lexical)], limit: 5).kind == .scan)
        #expect(path(.compare("flag", .equal, .bool(true))).kind == .scan)
        #expect(path(.identifiers([rows[0].persistentIdentifier])).kind == .identifiers)

        // A NaN has no place in an order: the ordered index no longer serves sorted windows of that property.
        let nan = try snapshot("NaN", int: 0, double: .nan, text: "")
        _ = try table.save(
            DataStoreSaveChangesRequest(editingState: EditingState(), inserted: [nan], updated: [], deleted: []),
            storeIdentifier: "t")
        #expect(path(nil, sort: [StoreSortKey(property: "double")], limit: 5).kind == .scan)
        #expect(path(nil, sort: [StoreSortKey(property: "int")], limit: 5).kind == .orderedIndexSort)
    }

    /// Identifiers a save brings (a conversion keeps the source's) are stored once: a save that
    /// brings one twice, or one the table has, stores nothing; out of order, they are sorted in.
    @Test func broughtIdentifiersAreStoredOnceAndInOrder() throws {
        var table = SnapshotTable(schema: schema)
        func brought(_ key: Int64, _ code: String) throws -> DefaultSnapshot {
            try snapshot(code, int: 1, double: 1, text: code).copy(
                persistentIdentifier: .identifier(for: "t", entityName: "Reading", primaryKey: key),
                remappedIdentifiers: nil)
        }
        for inserted in [[try brought(5, "A"), try brought(5, "B")]] {
            let error = try #require(throws: DataStoreError.self) {
                try table.save(
                    DataStoreSaveChangesRequest(
                        editingState: EditingState(), inserted: inserted, updated: [], deleted: []),
                    storeIdentifier: "t")
            }
            #expect(error.code == .conflict)
            #expect(table.count(of: "Reading") == 0)
        }
        _ = try table.save(
            DataStoreSaveChangesRequest(
                editingState: EditingState(), inserted: [try brought(9, "C"), try brought(3, "D")], updated: [],
                deleted: []),
            storeIdentifier: "t")
        let again = try #require(throws: DataStoreError.self) {
            try table.save(
                DataStoreSaveChangesRequest(
                    editingState: EditingState(), inserted: [try brought(3, "E")], updated: [], deleted: []),
                storeIdentifier: "t")
        }
        #expect(again.code == .conflict)
        #expect(table.snapshots(of: "Reading").map(\.persistentIdentifier.primaryKey) == [.int(3), .int(9)])
        #expect(
            try table.fetch(StoreQuery(entityName: "Reading", filter: .compare("code", .equal, .string("D")))).count
                == 1)
    }

    @Test func deletingEveryRowEmptiesTheTableAndItsIndexes() throws {
        var table = SnapshotTable(schema: schema)
        let rows = try (0..<300).map { try snapshot("C\($0)", int: $0 % 7, double: Double($0), text: "t\($0)") }
        let saved = try table.save(
            DataStoreSaveChangesRequest(editingState: EditingState(), inserted: rows, updated: [], deleted: []),
            storeIdentifier: "t")
        let ids = rows.map { saved.remappedIdentifiers[$0.persistentIdentifier]! }
        let keyBefore = table.nextPrimaryKey

        // Every row but one, then a list naming one row twice: both take the row-by-row path.
        var partial = table
        partial.delete(Array(ids.dropFirst()))
        #expect(partial.count(of: "Reading") == 1)
        var repeated = table
        repeated.delete(Array(ids.dropFirst()) + [ids[1]])
        #expect(repeated.count(of: "Reading") == 1)

        table.delete(ids.reversed())
        #expect(table.count(of: "Reading") == 0)
        for filter: StoreFilter in [
            .compare("code", .equal, .string("C5")), .compare("int", .equal, .int(3)),
            .compare("double", .greaterOrEqual, .double(0)),
        ] {
            #expect(try table.fetch(StoreQuery(entityName: "Reading", filter: filter)).isEmpty)
        }
        // The unique values are free again, and keys are never reused.
        let again = try table.save(
            DataStoreSaveChangesRequest(
                editingState: EditingState(), inserted: Array(rows.prefix(3)), updated: [], deleted: []),
            storeIdentifier: "t")
        #expect(table.count(of: "Reading") == 3)
        #expect(again.remappedIdentifiers.values.allSatisfy { ($0.primaryKey.intValue ?? 0) >= keyBefore })
        #expect(
            try table.fetch(StoreQuery(entityName: "Reading", filter: .compare("code", .equal, .string("C1")))).count
                == 1)
    }

    @Test func largeOrderedIndexesSortLikeTheSortedScan() throws {
        // Enough rows of one kind that the index sorts by typed keys, with repeated values so ties
        // fall back to identifier order.
        var table = SnapshotTable(schema: schema)
        var rng = SplitMix64(seed: 5)
        let rows = try (0..<500).map { index in
            try snapshot(
                "C\(index)", int: Int(rng.next() % 50), double: Double(rng.next() % 30), text: "t\(rng.next() % 40)")
        }
        _ = try table.save(
            DataStoreSaveChangesRequest(editingState: EditingState(), inserted: rows, updated: [], deleted: []),
            storeIdentifier: "t")
        for property in ["text", "int", "double", "code"] {
            for ascending in [true, false] {
                let query = StoreQuery(
                    entityName: "Reading", sort: [StoreSortKey(property: property, ascending: ascending)], limit: 60)
                #expect(table.accessPath(for: query).kind == .orderedIndexSort)
                #expect(try table.fetch(query) == scan(table, query), "\(property) ascending: \(ascending)")
            }
        }
    }

    @Test func compoundUniqueKeysAndDeclaredIndexesAreLookedUp() throws {
        let container = try ModelContainer(for: Author.self, configurations: .inMemory())
        let context = ModelContext(container)
        for index in 0..<30 {
            context.insert(Author("First\(index % 5)", "Last\(index / 5)", email: "a\(index)@x"))
        }
        try context.save()
        let both = FetchDescriptor<Author>(predicate: #Predicate { $0.first == "First2" && $0.last == "Last3" })
        let explanation = try container.explain(both)
        let expected = StoreAccessPath(kind: .uniqueIndex, properties: ["first", "last"], estimatedRows: 1)
        #expect(explanation.accessPath == expected)
        #expect(try context.fetch(both).map(\.email) == ["a17@x"])
        let last = FetchDescriptor<Author>(predicate: #Predicate { $0.last == "Last3" && $0.first != "First0" })
        let lastPath = try container.explain(last).accessPath
        #expect(lastPath == StoreAccessPath(kind: .hashIndex, properties: ["last"], estimatedRows: 5))
        #expect(try context.fetch(last).map(\.email) == ["a16@x", "a17@x", "a18@x", "a19@x"])
    }

    @Test func sortedWindowsBreakTiesByIdentifierBothWays() throws {
        var table = SnapshotTable(schema: schema)
        let rows = try (0..<50).map { try snapshot(String(format: "C%03d", $0), int: $0 % 3, double: 0, text: "") }
        _ = try table.save(
            DataStoreSaveChangesRequest(editingState: EditingState(), inserted: rows, updated: [], deleted: []),
            storeIdentifier: "t")
        for ascending in [true, false] {
            let query = StoreQuery(
                entityName: "Reading", sort: [StoreSortKey(property: "int", ascending: ascending)], offset: 3, limit: 20
            )
            #expect(table.accessPath(for: query).kind == .orderedIndexSort)
            #expect(
                try table.fetch(query).map(\.persistentIdentifier) == scan(table, query).map(\.persistentIdentifier))
        }
    }
}
