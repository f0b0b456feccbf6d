import Foundation
import ModelStore
import ModelStoreTooling
import PostgreSQLTestModels
import Testing

@testable import ModelStorePostgreSQL

/// A patron of the index tests: a unique text attribute, an index on another, and a tombstone value.
final class Patron: PersistentModel {
    @Attribute(.unique) var email: String = ""
    @Attribute(.preserveValueOnDeletion) var name: String = ""
    @Attribute var age: Int = 0

    static var constraints: [ModelConstraint<Patron>] { [.index(\.name)] }

    let persistentBackingData = BackingData()
    init() {}
}

/// A seedling of the index tests: a to-one relationship declared as an index alone (which its
/// column's own index already is), an attribute index, and an index of both.
final class Seedling: PersistentModel {
    @Attribute var code: String = ""
    @Relationship var patron: Patron?

    static var constraints: [ModelConstraint<Seedling>] {
        [.index(\.patron), .index(\.code), .index(\.patron, \.code)]
    }

    let persistentBackingData = BackingData()
    init() {}
}

/// A ticket of the index tests: indexes declared on the properties of its uniqueness constraints
/// (which their unique indexes already are), and two that are not (another order, a longer list).
final class Ticket: PersistentModel {
    @Attribute(.unique) var serial: String = ""
    @Attribute var row: Int = 0

    static var constraints: [ModelConstraint<Ticket>] {
        [.unique(\.row, \.serial), .index(\.serial), .index(\.row, \.serial), .index(\.serial, \.row), .index(\.row)]
    }

    let persistentBackingData = BackingData()
    init() {}
}

/// What the store does to stay fast on large tables, checked on the server: text lookups that an
/// index serves, unique indexes that compare strings as Swift does, inserts many rows per statement
/// and analyzed after their commit, and batch deletes that do not read (or, deleting every row, name)
/// the rows.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLIndexedWriteTests {
    static let schema = Schema([Patron.self])

    /// A container in a fresh namespace holding `count` patrons (`m<i>@example.com`, named `n<i % 100>`),
    /// and its store.
    static func patrons(_ count: Int, namespace: String) throws -> (ModelContainer, PostgreSQLStore) {
        let container = try ModelContainer(
            for: schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
        let context = ModelContext(container)
        _ = try context.insert(
            Patron.self,
            rows: (0..<count).map { [.set(\.email, to: "m\($0)@example.com"), .set(\.name, to: "n\($0 % 100)")] })
        let store = try #require(container.stores.first as? PostgreSQLStore)
        return (container, store)
    }

    /// The first line of PostgreSQL's plan for a fetch.
    static func plan(_ descriptor: FetchDescriptor<Patron>, on container: ModelContainer, store: PostgreSQLStore)
        throws -> [String]
    {
        let query = try #require(try ModelContext(container).explain(descriptor).storeQuery)
        return try store.queryPlan(for: query)
    }

    @Test func equalityOnAUniqueOrIndexedStringUsesAnIndex() throws {
        let namespace = PostgreSQLServer.freshNamespace("idx")
        // Inserting this many rows analyzes the table: without statistics for the expression index,
        // PostgreSQL answers a lookup with a limit by walking the primary key.
        #expect(3_000 >= RowWriter.analyzeThreshold)
        let (container, store) = try Self.patrons(3_000, namespace: namespace)

        let email = "m1234@example.com"
        var unique = FetchDescriptor<Patron>(predicate: #Predicate { $0.email == email })
        unique.fetchLimit = 1
        let uniquePlan = try Self.plan(unique, on: container, store: store)
        #expect(
            uniquePlan.contains { $0.contains("Index") && $0.contains("Patron.unique.0") },
            "the unique lookup does not use the unique index:\n\(uniquePlan.joined(separator: "\n"))")
        #expect(try ModelContext(container).fetch(unique).map(\.email) == [email])

        let name = "n7"
        let indexed = FetchDescriptor<Patron>(
            predicate: #Predicate { $0.name == name }, sortBy: [SortDescriptor(\.age)])
        let indexedPlan = try Self.plan(indexed, on: container, store: store)
        #expect(
            indexedPlan.contains { $0.contains("Patron.index.0") } && !indexedPlan.contains { $0.contains("Seq Scan") },
            "the indexed lookup does not use the index:\n\(indexedPlan.joined(separator: "\n"))")
        #expect(try ModelContext(container).fetchCount(indexed) == 30)
    }

    /// A container in a fresh namespace holding one patron, with this address.
    static func onePatron(_ email: String, label: String) throws -> ModelContainer {
        let (container, _) = try patrons(0, namespace: PostgreSQLServer.freshNamespace(label))
        let context = ModelContext(container)
        let patron = Patron()
        patron.email = email
        context.insert(patron)
        try context.save()
        return container
    }

    @Test func aCanonicallyEquivalentSpellingFindsTheStoredOneThroughTheIndex() throws {
        let container = try Self.onePatron("\u{e9}mile@example.com", label: "nfc")
        let decomposed = "e\u{301}mile@example.com"
        let found = try ModelContext(container).fetch(
            FetchDescriptor<Patron>(predicate: #Predicate { $0.email == decomposed }))
        #expect(found.map { Array($0.email.unicodeScalars) } == [Array("\u{e9}mile@example.com".unicodeScalars)])
    }

    @Test func aBulkInsertLeavesTheTableAnalyzedAfterItsCommit() async throws {
        let namespace = PostgreSQLServer.freshNamespace("ana")
        _ = try Self.patrons(RowWriter.analyzeThreshold + 200, namespace: namespace)
        // The insert has returned: the table and its expression indexes have statistics (the
        // ANALYZE ran after the commit, on the insert's connection, before the call returned).
        try await AdminConnection.using { admin in
            let tuples = try await admin.run(
                "SELECT c.reltuples::bigint::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                    + "WHERE n.nspname = '\(namespace)' AND c.relname = 'Patron'")
            #expect(tuples == [String(RowWriter.analyzeThreshold + 200)])
            let statistics = try await admin.run(
                "SELECT count(*)::text FROM pg_stats WHERE schemaname = '\(namespace)' AND tablename = 'Patron.unique.0'"
            )
            #expect(statistics == ["1"])
        }
    }

    @Test func aBulkInsertAnalyzesATableOnlyWhenItAtLeastDoublesIt() async throws {
        let namespace = PostgreSQLServer.freshNamespace("anb")
        let first = RowWriter.analyzeThreshold + 200
        let (container, _) = try Self.patrons(first, namespace: namespace)
        try await AdminConnection.using { admin in
            // Autovacuum off, so only the store's own ANALYZE can change the statistics.
            try await admin.run("ALTER TABLE \"\(namespace)\".\"Patron\" SET (autovacuum_enabled = false)")
            func statisticsRows() async throws -> [String] {
                try await admin.run(
                    "SELECT c.reltuples::bigint::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                        + "WHERE n.nspname = '\(namespace)' AND c.relname = 'Patron'")
            }
            func insert(_ range: Range<Int>) throws {
                _ = try ModelContext(container).insert(
                    Patron.self, rows: range.map { [.set(\.email, to: "m\($0)@example.com"), .set(\.name, to: "n")] })
            }
            #expect(try await statisticsRows() == [String(first)])
            // Fewer new rows than the table has: the statistics stay as they were.
            let second = RowWriter.analyzeThreshold
            try insert(first..<first + second)
            #expect(try await statisticsRows() == [String(first)])
            // As many new rows as the table has, or more: analyzed after the commit.
            let third = first + second
            try insert(first + second..<first + second + third)
            #expect(try await statisticsRows() == [String(first + second + third)])
        }
    }

    /// Inserts a patron in a new context of `container` and saves.
    static func save(email: String, name: String, in container: ModelContainer, policy: DuplicateInsertPolicy? = nil)
        throws
    {
        let context = ModelContext(container)
        if let policy { context.duplicateInsertPolicy = policy }
        let patron = Patron()
        patron.email = email
        patron.name = name
        context.insert(patron)
        try context.save()
    }

    /// The `name` tombstones of the deletes of a history transaction; records anything else it holds.
    static func tombstonedNames(in transaction: DefaultHistoryTransaction) -> [String] {
        var names: [String] = []
        for change in transaction.changes {
            guard case .delete(let deletion as DefaultHistoryDelete<Patron>) = change else {
                Issue.record("a batch delete recorded \(change)")
                continue
            }
            if let name = deletion.tombstone[\.name] { names.append(name) }
        }
        return names
    }

    @Test func canonicallyEquivalentStringsAreOneValueToAUniqueIndex() async throws {
        let namespace = PostgreSQLServer.freshNamespace("nfcu")
        let (container, _) = try Self.patrons(0, namespace: namespace)
        try Self.save(email: "\u{e9}mile@example.com", name: "first", in: container)
        // The server itself refuses the other spelling, whoever writes it.
        try await AdminConnection.using { admin in
            await #expect(throws: (any Error).self) {
                try await admin.run(
                    "INSERT INTO \"\(namespace)\".\"Patron\" (\"_pk\", email, name, age) "
                        + "VALUES (999999, U&'e\\0301mile@example.com', 'other', 0)")
            }
        }
        // The index refuses the other spelling, as Swift's == calls it equal.
        let error = try #require(throws: DataStoreError.self) {
            try Self.save(email: "e\u{301}mile@example.com", name: "refused", in: container, policy: .error)
        }
        #expect(error.code == .uniqueConstraintViolation)
        #expect(error.propertyNames == ["email"])
        // The context's upsert matches it: the stored model is updated, not a second one inserted.
        try Self.save(email: "e\u{301}mile@example.com", name: "second", in: container)
        let all = try ModelContext(container).fetch(FetchDescriptor<Patron>())
        #expect(all.map(\.name) == ["second"])
    }

    @Test func deletingEveryModelOfAnEntityDeletesEveryRowWithItsTombstones() throws {
        let count = RowWriter.everyRowThreshold + 100
        let (container, _) = try Self.patrons(count, namespace: PostgreSQLServer.freshNamespace("all"))
        let context = ModelContext(container)
        try context.delete(model: Patron.self)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Patron>()) == 0)
        let last = try #require(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        let names = Self.tombstonedNames(in: last)
        #expect(names.count == count)
        #expect(Set(names) == Set((0..<100).map { "n\($0)" }))
    }

    @Test func keysAsManyAsTheRowsButNotNamingThemAllDeleteOnlyTheirRows() throws {
        let count = RowWriter.everyRowThreshold + 1
        let (container, store) = try Self.patrons(count, namespace: PostgreSQLServer.freshNamespace("some"))
        let context = ModelContext(container)
        var ids = try context.fetchIdentifiers(FetchDescriptor<Patron>(sortBy: [SortDescriptor(\.email)]))
        let kept = ids.removeLast()
        // As many identifiers as rows, one of them naming no row: the table's count matches, yet
        // the row the request does not name must stay.
        let missing = PersistentIdentifier.identifier(
            for: store.identifier, entityName: "Patron", primaryKey: Int64.max - 1)
        try store.delete(
            DataStoreBatchDeleteRequest<Patron>(identifiers: ids + [missing], editingState: EditingState()))
        #expect(try ModelContext(container).fetchIdentifiers(FetchDescriptor<Patron>()) == [kept])
        let last = try #require(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        #expect(last.changes.count == count - 1)
    }

    @Test func aSaveLargerThanOneStatementRoundTrips() throws {
        // Counter binds 4 parameters a row, so 16,383 rows fit one statement: 20,000 take two.
        let count = 20_000
        #expect(count * 4 > RowWriter.parameterLimit)
        var configuration = try PostgreSQLServer.configuration(namespace: PostgreSQLServer.freshNamespace("big"))
        configuration.historyLimit = nil  // keep the one transaction, larger than the default limit
        let container = try ModelContainer(for: Counter.schema, configurations: [configuration])
        let context = ModelContext(container)
        for number in 0..<count {
            let counter = Counter(name: "c\(number)")
            counter.value = number * 3
            context.insert(counter)
        }
        try context.save()
        let reader = ModelContext(container)
        #expect(try reader.fetchCount(FetchDescriptor<Counter>()) == count)
        let all = try reader.fetch(FetchDescriptor<Counter>())
        #expect(all.allSatisfy { "c\($0.value / 3)" == $0.name && $0.value % 3 == 0 })
        #expect(Set(all.map(\.name)).count == count)
        let history = try reader.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>())
        #expect(history.last?.changes.count == count)
    }

    @Test func aDuplicateInAMultiRowInsertNamesItsValueAndStoresNothing() throws {
        let configuration = try PostgreSQLServer.configuration(namespace: PostgreSQLServer.freshNamespace("dup"))
        let container = try ModelContainer(for: Counter.schema, configurations: [configuration])
        let first = ModelContext(container)
        first.insert(Counter(name: "taken"))
        try first.save()
        let context = ModelContext(container)
        context.duplicateInsertPolicy = .error  // the index's refusal, not an upsert
        for name in ["a", "b", "taken", "c"] { context.insert(Counter(name: name)) }
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .uniqueConstraintViolation)
        #expect(error.conflictingValues == [.string("taken")])
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Counter>()) == 1)
    }

    @Test func aBatchDeleteRecordsTombstonesOfTheDeletedRowsOnly() throws {
        let (container, _) = try Self.patrons(50, namespace: PostgreSQLServer.freshNamespace("del"))
        let context = ModelContext(container)
        try context.delete(model: Patron.self, where: #Predicate { $0.name == "n3" || $0.name == "n4" })
        #expect(try context.fetchCount(FetchDescriptor<Patron>()) == 48)
        let last = try #require(try context.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        #expect(last.changes.count == 2)
        #expect(Self.tombstonedNames(in: last).sorted() == ["n3", "n4"])
    }

    /// A declared index of a to-one relationship alone is not made beside the column's own index,
    /// which serves it: one index on the column, `verify` does not miss the declared one, and
    /// `explain` names the relationship as the property of the index a fetch by it uses.
    @Test func aDeclaredIndexOfAToOneRelationshipAloneIsItsColumnsIndex() async throws {
        let namespace = PostgreSQLServer.freshNamespace("tone")
        let configuration = try PostgreSQLServer.configuration(namespace: namespace)
        let container = try ModelContainer(for: Schema([Patron.self, Seedling.self]), configurations: [configuration])
        let admin = try await AdminConnection.open()
        let definitions = try await admin.run(
            "SELECT indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = '\(namespace)' "
                + "AND tablename = 'Seedling' ORDER BY indexname")
        let listed = definitions.joined(separator: "\n")
        let onPatronAlone = definitions.filter { $0.hasSuffix("(patron)") }
        #expect(onPatronAlone.count == 1, "one index on the column 'patron' alone:\n\(listed)")
        #expect(onPatronAlone.first?.hasPrefix("Seedling.patron.key: ") == true, "\(listed)")
        #expect(!definitions.contains { $0.hasPrefix("Seedling.index.0: ") }, "\(listed)")
        #expect(definitions.contains { $0.hasPrefix("Seedling.index.1: ") }, "\(listed)")
        #expect(definitions.contains { $0.hasPrefix("Seedling.index.2: ") && $0.contains("(patron, ") }, "\(listed)")

        let verification = try PostgreSQLMaintenance().verify(
            StoreMaintenanceRequest(
                name: "seedlings", url: try StoreURL(try #require(PostgreSQLServer.url)),
                configuration: configuration, countsExactly: true))
        #expect(verification.problems.isEmpty, "\(verification.problems)")

        // Many patrons with ten seedlings each, so the planner expects few rows per patron.
        let context = ModelContext(container)
        let patrons = (0..<300).map { number in
            let patron = Patron()
            patron.email = "p\(number)@example.com"
            context.insert(patron)
            return patron
        }
        for number in 0..<3_000 {
            let seedling = Seedling()
            seedling.code = "s\(number)"
            context.insert(seedling)
            seedling.patron = patrons[number % patrons.count]
        }
        try context.save()
        try await admin.run("ANALYZE \"\(namespace)\".\"Seedling\"")
        try await admin.close()
        let id = patrons[7].persistentModelID
        let byPatron = FetchDescriptor<Seedling>(predicate: #Predicate { $0.patron?.persistentModelID == id })
        let explanation = try ModelContext(container).explain(byPatron)
        let store = try #require(container.stores.first as? PostgreSQLStore)
        let plan = try store.queryPlan(for: try #require(explanation.storeQuery)).joined(separator: "\n")
        #expect(explanation.accessPath?.properties == ["patron"], "\(explanation)\n\(plan)")
        let codes = try ModelContext(container).fetch(byPatron).map(\.code).sorted()
        #expect(codes == (0..<3_000).filter { $0 % patrons.count == 7 }.map { "s\($0)" }.sorted())
    }

    @Test func aDeclaredIndexOfAUniqueConstraintsPropertiesIsItsUniqueIndex() async throws {
        let namespace = PostgreSQLServer.freshNamespace("tuni")
        let configuration = try PostgreSQLServer.configuration(namespace: namespace)
        let schema = Schema([Ticket.self])
        var container: ModelContainer? = try ModelContainer(for: schema, configurations: [configuration])
        let admin = try await AdminConnection.open()
        func definitions() async throws -> [String] {
            try await admin.run(
                "SELECT indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = '\(namespace)' "
                    + "AND tablename = 'Ticket' ORDER BY indexname")
        }
        let listed = try await definitions()
        let names = listed.map { String($0.prefix { $0 != ":" }) }
        #expect(names.contains("Ticket.unique.0") && names.contains("Ticket.unique.1"), "\(listed)")
        #expect(!names.contains("Ticket.index.0") && !names.contains("Ticket.index.1"), "\(listed)")
        #expect(names.contains("Ticket.index.2") && names.contains("Ticket.index.3"), "\(listed)")
        func verify() throws -> [String] {
            try PostgreSQLMaintenance().verify(
                StoreMaintenanceRequest(
                    name: "tickets", url: try StoreURL(try #require(PostgreSQLServer.url)),
                    configuration: configuration, countsExactly: true)
            ).problems.map { "\($0)" }
        }
        #expect(try verify().isEmpty)

        let context = ModelContext(try #require(container))
        for number in 0..<2_000 {
            let ticket = Ticket()
            ticket.serial = "t\(number)"
            ticket.row = number % 40
            context.insert(ticket)
        }
        try context.save()
        try await admin.run("ANALYZE \"\(namespace)\".\"Ticket\"")
        let serial = "t1234"
        let bySerial = FetchDescriptor<Ticket>(predicate: #Predicate { $0.serial == serial })
        let explanation = try ModelContext(try #require(container)).explain(bySerial)
        let store = try #require(container?.stores.first as? PostgreSQLStore)
        let plan = try store.queryPlan(for: try #require(explanation.storeQuery)).joined(separator: "\n")
        #expect(plan.contains("Index") && !plan.contains("Seq Scan"), "\(plan)")
        #expect(try ModelContext(try #require(container)).fetch(bySerial).map(\.row) == [1234 % 40])

        // A namespace an earlier version made, with the second copy: it opens, verifies and saves.
        container = nil
        try await admin.run(
            "CREATE INDEX \"Ticket.index.0\" ON \"\(namespace)\".\"Ticket\" "
                + "(((CASE WHEN octet_length(serial) = length(serial) THEN serial ELSE normalize(serial, NFC) END) "
                + "COLLATE \"C\"))")
        let reopened = try ModelContainer(for: schema, configurations: [configuration])
        let ticket = Ticket()
        ticket.serial = "t-new"
        let writer = ModelContext(reopened)
        writer.insert(ticket)
        try writer.save()
        let newSerial = "t-new"
        let byNewSerial = FetchDescriptor<Ticket>(predicate: #Predicate { $0.serial == newSerial })
        #expect(try ModelContext(reopened).fetchCount(byNewSerial) == 1)
        #expect(try await definitions().contains { $0.hasPrefix("Ticket.index.0: ") })
        #expect(try verify().isEmpty)
        try await admin.close()
    }

    /// Turns a namespace's `Patron` indexes into what a format-3 build made: the unique index on
    /// the stored bytes, beside a non-unique one on the NFC keys.
    static func makeFormat3(_ namespace: String, _ admin: AdminConnection) async throws {
        try await admin.run("DROP INDEX \"\(namespace)\".\"Patron.unique.0\"")
        try await admin.run("CREATE UNIQUE INDEX \"Patron.unique.0\" ON \"\(namespace)\".\"Patron\" (\"email\")")
        try await admin.run(
            "CREATE INDEX \"Patron.unique.0.nfc\" ON \"\(namespace)\".\"Patron\" "
                + "((normalize(\"email\", NFC) COLLATE \"C\"))")
        try await admin.run("UPDATE \"\(namespace)\".modelstore_meta SET value = '3' WHERE key = 'format'")
    }

    /// `name: definition` of each index of the namespace's `Patron` table.
    static func indexes(_ namespace: String, _ admin: AdminConnection) async throws -> [String] {
        try await admin.run(
            "SELECT indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = '\(namespace)' "
                + "AND tablename = 'Patron' ORDER BY indexname")
    }

    /// Whether an index definition keys `column` as format 5 does: ASCII values as they are, the
    /// others by their NFC form, under `COLLATE "C"` (as PostgreSQL prints `TableLayout.textKey`).
    static func keysByNFC(_ definition: String, _ column: String) -> Bool {
        // PostgreSQL prints a `CASE` on several lines.
        definition.split(whereSeparator: \.isWhitespace).joined(separator: " ").contains(
            "CASE WHEN (octet_length(\(column)) = length(\(column))) THEN \(column) "
                + "ELSE NORMALIZE(\(column), NFC) END) COLLATE \"C\"")
    }

    @Test func openingAFormat4NamespaceRebuildsItsIndexesAndLookupsUseThem() async throws {
        let namespace = PostgreSQLServer.freshNamespace("fmt4")
        _ = try Self.patrons(3_000, namespace: namespace)
        // What a format-4 build left: every text key normalized, whatever its characters.
        try await AdminConnection.using { admin in
            for (index, unique, column) in [("Patron.unique.0", "UNIQUE ", "email"), ("Patron.index.0", "", "name")] {
                try await admin.run("DROP INDEX \"\(namespace)\".\"\(index)\"")
                try await admin.run(
                    "CREATE \(unique)INDEX \"\(index)\" ON \"\(namespace)\".\"Patron\" "
                        + "((normalize(\"\(column)\", NFC) COLLATE \"C\"))")
            }
            try await admin.run("UPDATE \"\(namespace)\".modelstore_meta SET value = '4' WHERE key = 'format'")
        }

        let container = try ModelContainer(
            for: Self.schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
        try await AdminConnection.using { admin in
            let definitions = try await Self.indexes(namespace, admin)
            let listed = definitions.joined(separator: "\n")
            #expect(
                definitions.contains {
                    $0.hasPrefix("Patron.unique.0: CREATE UNIQUE INDEX") && Self.keysByNFC($0, "email")
                }, "\(listed)")
            #expect(
                definitions.contains { $0.hasPrefix("Patron.index.0: ") && Self.keysByNFC($0, "name") }, "\(listed)")
            #expect(
                try await admin.run("SELECT value FROM \"\(namespace)\".modelstore_meta WHERE key = 'format'")
                    == ["5"])
        }
        let store = try #require(container.stores.first as? PostgreSQLStore)
        let email = "m1234@example.com"
        var unique = FetchDescriptor<Patron>(predicate: #Predicate { $0.email == email })
        unique.fetchLimit = 1
        let plan = try Self.plan(unique, on: container, store: store)
        #expect(
            plan.contains { $0.contains("Index") && $0.contains("Patron.unique.0") }, "\(plan.joined(separator: "\n"))")
        #expect(try ModelContext(container).fetch(unique).map(\.email) == [email])
    }

    /// U+212A KELVIN SIGN is its own character to the bytes but `K` to NFC (and to Swift's `==`): a
    /// value that is not ASCII can have an ASCII NFC form, so the ASCII shortcut of the keys must
    /// still meet the normalized ones.
    @Test func aValueWhoseNFCFormIsASCIIMeetsTheASCIISpelling() throws {
        let container = try Self.onePatron("Kelvin@example.com", label: "kelvin")
        let sign = "\u{212A}elvin@example.com"
        #expect(sign == "Kelvin@example.com" && sign.utf8.count != sign.unicodeScalars.count)
        let found = try ModelContext(container).fetch(
            FetchDescriptor<Patron>(predicate: #Predicate { $0.email == sign }))
        #expect(found.map(\.email) == ["Kelvin@example.com"])
        let ordered = try ModelContext(container).fetch(
            FetchDescriptor<Patron>(predicate: #Predicate { $0.email >= sign && $0.email <= sign }))
        #expect(ordered.count == 1)
        // The unique index holds one value for both spellings: the second insert is refused, or
        // (the context's upsert) lands on the stored model; never a second row.
        let other = ModelContext(container)
        let twin = Patron()
        twin.email = sign
        other.insert(twin)
        try? other.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Patron>()) == 1)
    }

    @Test func openingAFormat3NamespaceMakesItsUniqueIndexCompareNFCKeys() async throws {
        let namespace = PostgreSQLServer.freshNamespace("fmt3")
        _ = try Self.patrons(10, namespace: namespace)
        try await AdminConnection.using { admin in
            try await Self.makeFormat3(namespace, admin)
            let container = try ModelContainer(
                for: Self.schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
            let definitions = try await Self.indexes(namespace, admin)
            #expect(
                definitions.contains {
                    $0.hasPrefix("Patron.unique.0: CREATE UNIQUE INDEX") && Self.keysByNFC($0, "email")
                }, "\(definitions.joined(separator: "\n"))")
            #expect(!definitions.contains { $0.hasPrefix("Patron.unique.0.nfc") })
            #expect(
                try await admin.run("SELECT value FROM \"\(namespace)\".modelstore_meta WHERE key = 'format'")
                    == [String(StoreOpener.formatVersion)])
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Patron>()) == 10)
        }
    }

    @Test func aFormat3NamespaceWithEquivalentUniqueValuesFailsTheOpenAndIsLeftAlone() async throws {
        let namespace = PostgreSQLServer.freshNamespace("fmt3d")
        _ = try Self.patrons(2, namespace: namespace)
        try await AdminConnection.using { admin in
            try await Self.makeFormat3(namespace, admin)
            // Two spellings of one address, which the byte-wise index of format 3 let in.
            try await admin.run(
                "UPDATE \"\(namespace)\".\"Patron\" SET email = U&'\\00e9mile' WHERE email = 'm0@example.com'")
            try await admin.run(
                "UPDATE \"\(namespace)\".\"Patron\" SET email = U&'e\\0301mile' WHERE email = 'm1@example.com'")
            let before = try await Self.indexes(namespace, admin)
            let error = try #require(throws: DataStoreError.self) {
                try ModelContainer(
                    for: Self.schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
            }
            #expect(error.code == .uniqueConstraintViolation)
            #expect(error.propertyNames == ["email"])
            #expect(try await Self.indexes(namespace, admin) == before)
            #expect(
                try await admin.run("SELECT value FROM \"\(namespace)\".modelstore_meta WHERE key = 'format'") == ["3"])
        }
    }

    @Test func openingAFormat2NamespaceRebuildsItsIndexesByNFCKeys() async throws {
        let namespace = PostgreSQLServer.freshNamespace("fmt")
        _ = try Self.patrons(10, namespace: namespace)
        // What a format-2 build left: plain-column indexes, format 2.
        try await AdminConnection.using { admin in
            try await admin.run("DROP INDEX \"\(namespace)\".\"Patron.unique.0\"")
            try await admin.run("CREATE UNIQUE INDEX \"Patron.unique.0\" ON \"\(namespace)\".\"Patron\" (\"email\")")
            try await admin.run("DROP INDEX \"\(namespace)\".\"Patron.index.0\"")
            try await admin.run("CREATE INDEX \"Patron.index.0\" ON \"\(namespace)\".\"Patron\" (\"name\")")
            try await admin.run("UPDATE \"\(namespace)\".modelstore_meta SET value = '2' WHERE key = 'format'")

            let container = try ModelContainer(
                for: Self.schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
            let definitions = try await admin.run(
                "SELECT indexname || ': ' || indexdef FROM pg_indexes WHERE schemaname = '\(namespace)' "
                    + "AND tablename = 'Patron' ORDER BY indexname")
            let listed = definitions.joined(separator: "\n")
            #expect(
                definitions.contains { $0.hasPrefix("Patron.index.0: ") && Self.keysByNFC($0, "name") }, "\(listed)")
            #expect(
                definitions.contains {
                    $0.hasPrefix("Patron.unique.0: CREATE UNIQUE INDEX") && Self.keysByNFC($0, "email")
                },
                "\(listed)")
            #expect(
                try await admin.run("SELECT value FROM \"\(namespace)\".modelstore_meta WHERE key = 'format'")
                    == [String(StoreOpener.formatVersion)])
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Patron>()) == 10)
        }
    }
}
