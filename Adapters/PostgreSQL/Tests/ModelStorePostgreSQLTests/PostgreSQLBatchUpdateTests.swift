import Foundation
import ModelStore
import ModelStorePostgreSQL
import PostgreSQLTestModels
import Testing

/// A save that updates many rows of one table writes them in multi-row statements: each row still
/// only at the version its context read, with the same outcomes as one statement per row.
@Suite(.enabled(if: PostgreSQLServer.isConfigured, PostgreSQLServer.skipMessage))
struct PostgreSQLBatchUpdateTests {
    /// A container in a fresh namespace with counters `c0` … `c(count-1)`, each at value 0.
    private static func counters(_ count: Int) throws -> ModelContainer {
        let container = try ModelContainer(
            for: Counter.schema,
            configurations: [try PostgreSQLServer.configuration(namespace: PostgreSQLServer.freshNamespace("batch"))])
        let context = ModelContext(container)
        for index in 0..<count { context.insert(Counter(name: "c\(index)")) }
        try context.save()
        return container
    }

    /// Every counter's value by name, read by a fresh context.
    private static func values(in container: ModelContainer) throws -> [String: Int] {
        Dictionary(
            uniqueKeysWithValues: try ModelContext(container).fetch(FetchDescriptor<Counter>()).map {
                ($0.name, $0.value)
            })
    }

    @Test func manyChangedRowsAreStoredAndRecordedInHistory() throws {
        let container = try Self.counters(40)
        let context = ModelContext(container)
        let counters = try context.fetch(FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.name)]))
        for (index, counter) in counters.enumerated() { counter.value = index + 1 }
        // Two unique names change places in the same save.
        counters[0].name = "c1"
        counters[1].name = "c0"
        try context.save()
        var expected: [String: Int] = [:]
        for (index, name) in counters.map(\.name).enumerated() { expected[name] = index + 1 }
        #expect(try Self.values(in: container) == expected)
        #expect(try Self.values(in: container)["c0"] == 2)
        let history = try #require(container.stores.first as? any HistoryProviding)
        let last = try #require(try history.fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).last)
        #expect(last.changes.count == 40)
        #expect(last.changes.allSatisfy { if case .update = $0 { true } else { false } })
        // The versions the save wrote are the ones the context holds: it saves again without a conflict.
        counters[5].value = 100
        try context.save()
        #expect(try Self.values(in: container)[counters[5].name] == 100)
    }

    /// A save that changes many counters but none of their unique names clears no name first; one
    /// where two names change places clears those two (a trigger notes each row whose name the
    /// save set to `NULL` on the way).
    @Test func onlyRowsWhoseUniqueValuesChangeAreClearedFirst() async throws {
        let namespace = PostgreSQLServer.freshNamespace("vacate")
        let container = try ModelContainer(
            for: Counter.schema, configurations: [try PostgreSQLServer.configuration(namespace: namespace)])
        let context = ModelContext(container)
        for index in 0..<10 { context.insert(Counter(name: "c\(index)")) }
        try context.save()
        let schema = "\"\(namespace)\""
        try await AdminConnection.using { admin in
            try await admin.run("CREATE TABLE \(schema).cleared (name text)")
            try await admin.run(
                "CREATE FUNCTION \(schema).note_cleared() RETURNS trigger LANGUAGE plpgsql AS "
                    + "$$ BEGIN INSERT INTO \(schema).cleared VALUES (OLD.name); RETURN NEW; END $$")
            try await admin.run(
                "CREATE TRIGGER note_cleared BEFORE UPDATE ON \(schema).\"Counter\" FOR EACH ROW "
                    + "WHEN (NEW.name IS NULL AND OLD.name IS NOT NULL) EXECUTE FUNCTION \(schema).note_cleared()")
        }
        /// The names the trigger noted, in order.
        func cleared() async throws -> [String] {
            var names: [String] = []
            try await AdminConnection.using {
                names = try await $0.run("SELECT name FROM \(schema).cleared ORDER BY name")
            }
            return names
        }
        let counters = try context.fetch(FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.name)]))
        for counter in counters { counter.value += 1 }
        try context.save()
        #expect(try await cleared() == [])

        counters[0].name = "c1"
        counters[1].name = "c0"
        counters[2].value = 7
        try context.save()
        #expect(try await cleared() == ["c0", "c1"])
        var expected = Dictionary(uniqueKeysWithValues: (0..<10).map { ("c\($0)", 1) })
        expected["c2"] = 7
        #expect(try Self.values(in: container) == expected)
        #expect(try ModelContext(container).fetch(FetchDescriptor<Counter>()).count == 10)
    }

    @Test func aRowAnotherContextChangedFailsTheWholeSave() throws {
        let container = try Self.counters(20)
        let context = ModelContext(container)
        let counters = try context.fetch(FetchDescriptor<Counter>())
        let other = ModelContext(container)
        let changed = try #require(
            try other.fetch(FetchDescriptor<Counter>(predicate: #Predicate { $0.name == "c7" })).first)
        changed.value = 70
        try other.save()
        for counter in counters { counter.value = 1 }
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .conflict)
        var expected = Dictionary(uniqueKeysWithValues: (0..<20).map { ("c\($0)", 0) })
        expected["c7"] = 70
        #expect(try Self.values(in: container) == expected)
    }

    @Test func aUniqueClashInsideTheBatchNamesTheModelAndStoresNothing() throws {
        let container = try Self.counters(20)
        let context = ModelContext(container)
        let counters = try context.fetch(FetchDescriptor<Counter>(sortBy: [SortDescriptor(\.name)]))
        for counter in counters { counter.value = 5 }
        counters[3].name = "same"
        counters[4].name = "same"
        let error = try #require(throws: DataStoreError.self) { try context.save() }
        #expect(error.code == .uniqueConstraintViolation)
        #expect(error.propertyNames == ["name"])
        #expect(try Self.values(in: container) == Dictionary(uniqueKeysWithValues: (0..<20).map { ("c\($0)", 0) }))
    }
}
