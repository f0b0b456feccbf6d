import CSQLite
import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// What a user of `SQLiteStore` sees beyond the conformance suite: the file's shape, migrations,
/// SQL plans, batches and referential integrity.
struct SQLiteStoreTests {
    static func item(_ entity: Schema.Entity, _ values: [String: StoreValue]) throws -> DefaultSnapshot {
        try DefaultSnapshot(persistentIdentifier: .temporary(entityName: "Item"), entity: entity, namedValues: values)
    }

    /// A store with items `c0` … `c<count-1>`, `n` = index, `name` = `"name<index % 10>"`.
    static func seeded(_ url: URL?, count: Int) throws -> (SQLiteStore, [PersistentIdentifier]) {
        let store = try ItemSchema.store(url)
        let entity = try #require(store.schema.entity(named: "Item"))
        let ids = try store.insert(
            try (0..<count).map { index in
                try item(
                    entity,
                    ["code": .string("c\(index)"), "n": .int(Int64(index)), "name": .string("name\(index % 10)")])
            })
        return (store, ids)
    }

    /// The SQL text of every table and index in the file, read with the C API.
    static func tables(_ url: URL) -> [String] {
        var handle: OpaquePointer?
        sqlite3_open(url.path, &handle)
        defer { sqlite3_close(handle) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, "SELECT name FROM sqlite_schema ORDER BY name", -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        var names: [String] = []
        while sqlite3_step(statement) == SQLITE_ROW { names.append(String(cString: sqlite3_column_text(statement, 0))) }
        return names
    }

    @Test func oneTablePerEntityWithIndexesAndJoinTables() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        _ = try ItemSchema.store(url)
        let names = Self.tables(url)
        for expected in ["Item", "Item.children", "Item.unique.0", "Item.index.0", "Item.index.1", "modelstore_meta"] {
            #expect(names.contains(expected), "\(names)")
        }
    }

    /// A declared index of a to-one relationship alone is not created a second time: the column's own
    /// index serves it, and `explain` names the relationship as that index's property.
    @Test func aDeclaredIndexOfAToOneColumnIsItsOwnIndex() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        var description = ItemSchema.description()
        description.entities[0].indices = [["parent"], ["n"], ["parent", "n"]]
        let store = try ItemSchema.store(url, schema: try Schema(description))
        let names = Self.tables(url)
        #expect(names.contains("Item.parent.key") && !names.contains("Item.index.0"), "\(names)")
        #expect(names.contains("Item.index.1") && names.contains("Item.index.2"), "\(names)")
        let entity = try #require(store.schema.entity(named: "Item"))
        var parent = ItemSchema.item(code: "p", in: entity)
        let ids = try store.insert([parent])
        parent = try #require(try store.run(StoreQuery(entityName: "Item")).first)
        var child = ItemSchema.item(code: "c", in: entity)
        child.values[try #require(entity.slot(of: "parent"))] = .reference(ids[0])
        _ = try store.insert([child])
        let byParent = StoreQuery(entityName: "Item", filter: .equal("parent", .reference(ids[0])))
        #expect(store.accessPath(for: byParent)?.properties == ["parent"])
        #expect(try store.run(byParent).map { $0["code"] } == [.string("c")])
    }

    /// A declared index on the same properties, in the same order, as a uniqueness constraint is not
    /// created a second time: the unique index serves it. An index that only starts with those
    /// properties, or names them in another order, is created. A file written before (with the
    /// second copy) opens and is used as before.
    @Test func aDeclaredIndexOfAUniqueConstraintsPropertiesIsTheUniqueIndex() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        var description = ItemSchema.description()
        description.entities[0].uniquenessConstraints = [["code"], ["code", "n"]]
        description.entities[0].indices = [["code"], ["code", "n"], ["n", "code"], ["code", "name"]]
        let schema = try Schema(description)
        let store = try ItemSchema.store(url, schema: schema)
        let names = Self.tables(url)
        #expect(names.contains("Item.unique.0") && names.contains("Item.unique.1"), "\(names)")
        #expect(!names.contains("Item.index.0") && !names.contains("Item.index.1"), "\(names)")
        #expect(names.contains("Item.index.2") && names.contains("Item.index.3"), "\(names)")
        let entity = try #require(store.schema.entity(named: "Item"))
        _ = try store.insert([ItemSchema.item(code: "a", in: entity), ItemSchema.item(code: "b", in: entity)])
        let byCode = StoreQuery(entityName: "Item", filter: .equal("code", .string("b")))
        #expect(store.accessPath(for: byCode)?.properties == ["code"])
        #expect(try store.run(byCode).map { $0["code"] } == [.string("b")])

        // The second copy as an earlier version made it: the file still opens, and reads and writes.
        try store.database.withLock { connection in
            try connection.execute("CREATE INDEX \"Item.index.0\" ON \"Item\" (\"code\")")
        }
        let reopened = try ItemSchema.store(url, schema: schema)
        _ = try reopened.insert([ItemSchema.item(code: "c", in: entity)])
        let byNewCode = StoreQuery(entityName: "Item", filter: .equal("code", .string("c")))
        #expect(try reopened.run(byNewCode).map { $0["code"] } == [.string("c")])
        #expect(Self.tables(url).contains("Item.index.0"))
        let verification = try SQLiteStore.verification(at: url)
        #expect(verification.problems.isEmpty, "\(verification.problems)")
        #expect(verification.counts.first { $0.entity == "Item" }?.count == 3)
    }

    @Test func identifiersAndKeysSurviveReopeningAndErase() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let (store, ids) = try Self.seeded(url, count: 3)
        try store.erase()
        let reopened = try ItemSchema.store(url)
        #expect(reopened.identifier == store.identifier)
        #expect(try reopened.run(StoreQuery(entityName: "Item")).isEmpty)
        let entity = try #require(reopened.schema.entity(named: "Item"))
        let new = try reopened.insert([try Self.item(entity, ["code": .string("after")])])
        #expect(new[0].primaryKey.intValue! > ids.compactMap(\.primaryKey.intValue).max()!, "a key was reused")
    }

    @Test func fetchesRunInSQLWithTheIndexSQLiteChose() throws {
        let (store, _) = try Self.seeded(nil, count: 50)
        let unique = StoreQuery(entityName: "Item", filter: .equal("code", .string("c7")))
        #expect(store.accessPath(for: unique)?.kind == .uniqueIndex)
        #expect(store.accessPath(for: unique)?.properties == ["code"])
        #expect(try store.run(unique).map { $0["n"] } == [.int(7)])
        let range = StoreQuery(
            entityName: "Item", filter: .range("n", StoreRange(lower: .int(10), upper: .int(12), includesUpper: true)))
        #expect(store.accessPath(for: range)?.kind == .orderedIndexRange)
        let sorted = StoreQuery(entityName: "Item", sort: [StoreSortKey(property: "n", ascending: false)], limit: 3)
        #expect(store.accessPath(for: sorted)?.kind == .orderedIndexSort)
        #expect(try store.run(sorted).map { $0["n"] } == [.int(49), .int(48), .int(47)])
        let plan = try store.queryPlan(for: unique)
        #expect(plan.contains { $0.contains("USING INDEX") }, "\(plan)")
        #expect(!plan.contains { $0.contains("evaluated by the store") }, "\(plan)")
        // A regex is evaluated by the store on SQL's rows, and the plan says so.
        let regex = StoreQuery(entityName: "Item", filter: .text("name", .matchesRegex("^name[12]$")))
        #expect(try store.queryPlan(for: regex).last?.contains("evaluated by the store") == true)
        #expect(try store.count(regex) == 10)
    }

    @Test func countsAndIdentifiersRunInSQL() throws {
        let (store, ids) = try Self.seeded(nil, count: 30)
        let query = StoreQuery(
            entityName: "Item", filter: .compare("n", .greaterOrEqual, .int(5)), sort: [StoreSortKey(property: "n")],
            offset: 3, limit: 4)
        #expect(try store.count(query) == 4)
        #expect(try store.identifiers(query) == Array(ids[8..<12]))
        #expect(try store.count(StoreQuery(entityName: "Item", offset: 28, limit: 10)) == 2)
    }

    @Test func batchDeleteAndUpdateAreSingleStatementsWithUniqueness() throws {
        let (store, ids) = try Self.seeded(nil, count: 10)
        let entity = try #require(store.schema.entity(named: "Item"))
        try store.update(
            DataStoreBatchUpdateRequest<SchemaOnlyModel>(
                identifiers: Array(ids[0..<5]), values: [entity.slot(of: "nick")!: .string("batch")],
                editingState: EditingState()))
        #expect(try store.count(StoreQuery(entityName: "Item", filter: .equal("nick", .string("batch")))) == 5)
        // Giving two models the same unique value fails and changes nothing.
        expectError(.uniqueConstraintViolation) {
            try store.update(
                DataStoreBatchUpdateRequest<SchemaOnlyModel>(
                    identifiers: Array(ids[0..<2]), values: [entity.slot(of: "code")!: .string("same")],
                    editingState: EditingState()))
        }
        #expect(try store.count(StoreQuery(entityName: "Item", filter: .equal("code", .string("same")))) == 0)
        try store.delete(
            DataStoreBatchDeleteRequest<SchemaOnlyModel>(
                identifiers: Array(ids[3..<10]), editingState: EditingState()))
        #expect(try store.identifiers(StoreQuery(entityName: "Item")) == Array(ids[0..<3]))
    }

    @Test func swappedUniqueValuesSaveInOneTransaction() throws {
        let (store, ids) = try Self.seeded(nil, count: 2)
        var first = try #require(try store.run(StoreQuery(entityName: "Item", filter: .identifiers([ids[0]]))).first)
        var second = try #require(try store.run(StoreQuery(entityName: "Item", filter: .identifiers([ids[1]]))).first)
        first["code"] = .string("c1")
        second["code"] = .string("c0")
        _ = try store.save(
            DataStoreSaveChangesRequest(
                editingState: EditingState(), inserted: [], updated: [first, second], deleted: []))
        #expect(
            try store.run(StoreQuery(entityName: "Item", sort: [StoreSortKey(property: "code")])).map(
                \.persistentIdentifier)
                == [ids[1], ids[0]])
    }

    /// A batch delete records in history exactly the models it found, whether its identifiers come
    /// in ascending order (matched against a scan of the keys) or not, and one that names every
    /// row empties the table.
    @Test func aBatchDeleteRecordsTheModelsItFoundInAnyOrder() throws {
        // An entity whose only index is on `label`, which falls as the keys rise: SQLite reads
        // `SELECT _pk` from that smaller index, in its order, unless told to read in key order.
        var configuration = SQLiteStoreConfiguration(url: nil)
        configuration.schema = try Schema(
            Schema.Description(
                version: Schema.Version(1, 0, 0),
                entities: [
                    Schema.EntityDescription(
                        name: "Row", properties: [.attribute("label", .string)], uniquenessConstraints: [],
                        indices: [["label"]])
                ]))
        let store = try SQLiteStore(configuration, migrationPlan: nil)
        let entity = try #require(store.schema.entity(named: "Row"))
        let ids = try store.insert(
            try (0..<10).map { index in
                try DefaultSnapshot(
                    persistentIdentifier: .temporary(entityName: "Row"), entity: entity,
                    namedValues: ["label": .string("l\(9 - index)")])
            })
        func delete(_ identifiers: [PersistentIdentifier]) throws -> [PersistentIdentifier] {
            try store.delete(
                DataStoreBatchDeleteRequest<SchemaOnlyModel>(identifiers: identifiers, editingState: EditingState()))
            let last = try #require(try store.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
            return last.changes.map(\.changedPersistentIdentifier)
        }
        #expect(try delete([ids[2]]) == [ids[2]])
        #expect(try delete([ids[0], ids[2], ids[4], ids[6]]) == [ids[0], ids[4], ids[6]])
        #expect(try delete([ids[9], ids[7], ids[2], ids[5]]) == [ids[9], ids[7], ids[5]])
        #expect(try delete([ids[1], ids[2], ids[3], ids[8]]) == [ids[1], ids[3], ids[8]])
        #expect(try store.identifiers(StoreQuery(entityName: "Row")).isEmpty)
    }

    /// The `SWIFT` collation checks eight bytes at a time for ASCII: text whose non-ASCII bytes sit
    /// past the first eight still sorts and compares as Swift's `String` does, canonical
    /// equivalence included.
    @Test func textLongerThanAWordComparesAsSwiftDoes() throws {
        let store = try ItemSchema.store(nil)
        let entity = try #require(store.schema.entity(named: "Item"))
        let codes = [
            "abcdefghf", "abcdefgh\u{e9}", "abcdefghe", "abcdefgha\u{301}", "abcdefgh", "abcdefghij_klmnop",
            "abcdefghij_klmnoq", "abcdefghij_klmn\u{f6}p",
        ]
        _ = try store.insert(try codes.map { try Self.item(entity, ["code": .string($0)]) })
        let sorted = try store.run(StoreQuery(entityName: "Item", sort: [StoreSortKey(property: "code")]))
        #expect(sorted.map { $0["code"] } == codes.sorted().map { .string($0) })
        let found = try store.run(
            StoreQuery(entityName: "Item", filter: .equal("code", .string("abcdefgha\u{301}"))))
        #expect(found.map { $0["code"] } == [.string("abcdefgha\u{301}")])
        expectError(.uniqueConstraintViolation) {
            try store.insert([try Self.item(entity, ["code": .string("abcdefghe\u{301}")])])
        }
        expectError(.uniqueConstraintViolation) {
            try store.insert([try Self.item(entity, ["code": .string("abcdefgh\u{e1}")])])
        }
    }

    /// Updating several models of an entity with unique constraints clears their unique columns
    /// first; a model whose unique value did not change must get it back, though the row read
    /// before the save already held it.
    @Test func unchangedUniqueValuesSurviveAnUpdateOfSeveralModels() throws {
        let (store, ids) = try Self.seeded(nil, count: 3)
        var changed: [DefaultSnapshot] = []
        for id in ids[0..<2] {
            var snapshot = try #require(try store.run(StoreQuery(entityName: "Item", filter: .identifiers([id]))).first)
            snapshot["n"] = .int(100)
            changed.append(snapshot)
        }
        _ = try store.save(
            DataStoreSaveChangesRequest(
                editingState: EditingState(), inserted: [], updated: changed, deleted: []))
        let stored = try store.run(StoreQuery(entityName: "Item", sort: [StoreSortKey(property: "code")]))
        #expect(stored.map { $0["code"] } == [.string("c0"), .string("c1"), .string("c2")])
        #expect(stored.map { $0["n"] } == [.int(100), .int(100), .int(2)])
    }

    @Test func deletingAModelClearsReferencesToItAndReturnsTheChangedSnapshots() throws {
        let store = try ItemSchema.store(nil)
        let entity = try #require(store.schema.entity(named: "Item"))
        let parent = try Self.item(entity, ["code": .string("parent")])
        var child = try Self.item(entity, ["code": .string("child")])
        child["parent"] = .reference(parent.persistentIdentifier)
        child["children"] = .references([parent.persistentIdentifier])
        let ids = try store.insert([parent, child])
        let stored = try #require(try store.run(StoreQuery(entityName: "Item", filter: .identifiers([ids[0]]))).first)
        let result = try store.save(
            DataStoreSaveChangesRequest(
                editingState: EditingState(), inserted: [], updated: [], deleted: [stored]))
        let repaired = try #require(result.snapshotsToReregister[ids[1]])
        #expect(repaired["parent"] == .null)
        #expect(repaired["children"] == .references([]))
        #expect(try store.run(StoreQuery(entityName: "Item")) == [repaired])
    }

    @Test func lightweightMigrationRenamesAddsAndRemovesColumnsInOneTransaction() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        _ = try Self.seeded(url, count: 3)
        var description = ItemSchema.description(version: Schema.Version(1, 1, 0))
        var properties = description.entities[0].properties
        let nameSlot = try #require(properties.firstIndex { $0.name == "name" })
        properties[nameSlot] = .attribute("title", .string, originalName: "name")
        properties.removeAll { $0.name == "tags" }
        properties.append(.attribute("rating", .integer(bits: 64, signed: true)))
        properties.append(.attribute("note", .optional(.string)))
        description.entities[0].properties = properties
        description.entities[0].indices = [["n"], ["title"]]
        let migrated = try ItemSchema.store(url, schema: try Schema(description))
        let rows = try migrated.run(StoreQuery(entityName: "Item", sort: [StoreSortKey(property: "n")]))
        #expect(rows.map { $0["title"] } == [.string("name0"), .string("name1"), .string("name2")])
        #expect(rows.allSatisfy { $0["rating"] == .int(0) && $0["note"] == .null })
        #expect(try SQLiteStore.storedSchema(at: url).version == Schema.Version(1, 1, 0))
        // Opening again at the same version changes nothing.
        let again = try ItemSchema.store(url, schema: try Schema(description))
        #expect(try again.run(StoreQuery(entityName: "Item")).count == 3)
    }

    @Test(arguments: SQLiteStoreConfiguration.Durability.allCases)
    func everyDurabilityModeSavesAndReopens(durability: SQLiteStoreConfiguration.Durability) throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        var configuration = SQLiteStoreConfiguration.sqlite(at: url, durability: durability)
        configuration.schema = try ItemSchema.schema()
        let entity = try #require(configuration.schema?.entity(named: "Item"))
        do {
            let store = try SQLiteStore(configuration, migrationPlan: nil)
            _ = try store.insert([try Self.item(entity, ["code": .string("kept")])])
        }
        let reopened = try SQLiteStore(configuration, migrationPlan: nil)
        #expect(try reopened.run(StoreQuery(entityName: "Item")).map { $0["code"] } == [.string("kept")])
    }

    @Test func largeValuesRoundTripAndAreReplaced() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("store.sqlite")
        let store = try ItemSchema.store(url)
        let entity = try #require(store.schema.entity(named: "Item"))
        let big = Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ ($0 >> 10)) })
        let ids = try store.insert([try Self.item(entity, ["code": .string("big"), "blob": .data(big)])])
        var stored = try #require(try store.run(StoreQuery(entityName: "Item")).first)
        #expect(stored["blob"] == .data(big))
        stored["blob"] = .data(big.prefix(1 << 20))
        _ = try store.save(
            DataStoreSaveChangesRequest(
                editingState: EditingState(), inserted: [], updated: [stored], deleted: []))
        let reopened = try ItemSchema.store(url)
        let read = try #require(try reopened.run(StoreQuery(entityName: "Item", filter: .identifiers([ids[0]]))).first)
        #expect(read["blob"] == .data(big.prefix(1 << 20)))
    }

    @Test func anUpdateBetweenEquivalentSpellingsAndSignedZerosIsStored() throws {
        let (store, ids) = try Self.seeded(nil, count: 1)
        var stored = try #require(try store.run(StoreQuery(entityName: "Item")).first)
        stored["name"] = .string("\u{E9}")
        stored["d"] = .double(0)
        _ = try store.save(
            DataStoreSaveChangesRequest(
                editingState: EditingState(), inserted: [], updated: [stored], deleted: []))
        stored["name"] = .string("e\u{301}")
        stored["d"] = .double(-0.0)
        _ = try store.save(
            DataStoreSaveChangesRequest(
                editingState: EditingState(), inserted: [], updated: [stored], deleted: []))
        let read = try #require(try store.run(StoreQuery(entityName: "Item", filter: .identifiers([ids[0]]))).first)
        guard case .string(let name) = read["name"], case .double(let d) = read["d"] else {
            Issue.record("wrong kinds: \(read)")
            return
        }
        #expect(Array(name.unicodeScalars) == ["e", "\u{301}"])
        #expect(d.sign == .minus)
    }

    /// Updates write only the columns that changed, through a statement found by that set of
    /// columns: saves that change other columns, or the same ones of another row, must each store
    /// exactly their own values.
    @Test func updatesOfDifferentColumnsStoreEachTheirOwnValues() throws {
        let (store, ids) = try Self.seeded(nil, count: 2)
        func stored(_ index: Int) throws -> DefaultSnapshot {
            try #require(try store.run(StoreQuery(entityName: "Item", filter: .identifiers([ids[index]]))).first)
        }
        func save(_ index: Int, _ values: [String: StoreValue]) throws {
            var snapshot = try stored(index)
            for (name, value) in values { snapshot[name] = value }
            _ = try store.save(
                DataStoreSaveChangesRequest(
                    editingState: EditingState(), inserted: [], updated: [snapshot], deleted: []))
        }
        try save(0, ["n": .int(10)])
        try save(1, ["name": .string("renamed")])
        try save(0, ["n": .int(11), "name": .string("both")])
        try save(1, ["n": .int(20)])
        try save(0, ["name": .string("again")])
        let first = try stored(0)
        let second = try stored(1)
        #expect(first["code"] == .string("c0"))
        #expect(first["n"] == .int(11))
        #expect(first["name"] == .string("again"))
        #expect(second["code"] == .string("c1"))
        #expect(second["n"] == .int(20))
        #expect(second["name"] == .string("renamed"))
    }
}
