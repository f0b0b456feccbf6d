import Foundation
import ModelStore
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// The context's planner decides once what SQLite runs: the store answers per condition and per
/// sort, receives only what it runs in SQL, and `explain` prints the split the fetch runs.
@Suite struct SQLitePlanningTests {
    final class Sample: PersistentModel {
        @Attribute(.unique) var code: String = ""
        @Attribute var label: String = ""
        @Attribute var reading: Int = 0
        @Attribute var level: Double? = nil
        @Attribute var big: UInt64 = 0
        let persistentBackingData = BackingData()
        init() {}
    }

    /// A store of ten samples `s0` … `s9`: `reading` = index, `label` = `"even"`/`"odd"`,
    /// `level` = index / 2 (nil for index 0), `big` = index.
    private static func seeded(_ directory: TemporaryDirectory) throws -> ModelContainer {
        let container = try ModelContainer(
            for: Sample.self, configurations: .sqlite(at: directory.file("samples.sqlite")))
        let context = ModelContext(container)
        for index in 0..<10 {
            let sample = Sample()
            sample.code = "s\(index)"
            sample.label = index.isMultiple(of: 2) ? "even" : "odd"
            sample.reading = index
            sample.level = index == 0 ? nil : Double(index) / 2
            sample.big = UInt64(index)
            context.insert(sample)
        }
        try context.save()
        return container
    }

    @Test func theStoreAnswersPerConditionAndPerSort() throws {
        let directory = try TemporaryDirectory()
        let container = try Self.seeded(directory)
        let store = try #require(container.stores.first as? SQLiteStore)
        #expect(store.pushDown(.compare("reading", .greater, .int(3)), entityName: "Sample") == .exact)
        #expect(store.pushDown(.text("label", .contains("ve")), entityName: "Sample") == .exact)
        // Swift's regular expressions, and orderings of optional doubles, have no exact SQL.
        #expect(store.pushDown(.text("label", .matchesRegex("^e")), entityName: "Sample") == .unsupported)
        #expect(store.pushDown(.compare("level", .less, .double(2)), entityName: "Sample") == .unsupported)
        // The same shape with another operand gets the same answer; another kind of operand may not.
        #expect(store.pushDown(.compare("reading", .greater, .int(-8)), entityName: "Sample") == .exact)
        #expect(store.pushDown(.compare("reading", .greater, .string("x")), entityName: "Sample") == .unsupported)
        #expect(store.pushDown(.compare("reading", .equal, .int(1)), entityName: "Nothing") == .unsupported)
        #expect(store.sortsExactly(by: [StoreSortKey(property: "reading")], entityName: "Sample"))
        #expect(!store.sortsExactly(by: [StoreSortKey(property: "big")], entityName: "Sample"))
        #expect(
            !store.sortsExactly(by: [StoreSortKey(property: "label", comparison: .lexical)], entityName: "Sample"))
    }

    @Test func explainShowsTheSplitTheFetchRuns() throws {
        let directory = try TemporaryDirectory()
        let context = ModelContext(try Self.seeded(directory))
        let regex = /^o/
        let descriptor = FetchDescriptor<Sample>(
            predicate: #Predicate { $0.reading >= 3 && $0.label.contains(regex) },
            sortBy: [SortDescriptor(\.reading, order: .reverse)])
        let explanation = try context.explain(descriptor)
        // SQL runs the comparison and the sort; the context runs the regex on the snapshots.
        #expect(explanation.conditions.map(\.location) == [.store, .snapshots])
        #expect(explanation.storeQuery?.filter == .compare("reading", .greaterOrEqual, .int(3)))
        #expect(explanation.snapshotFilter == .text("label", .matchesRegex("^o")))
        #expect(explanation.sortLocation == .store)
        #expect(explanation.stages == [.store, .snapshots(filters: true, sorts: false)])
        // The store runs all of the query it receives: nothing is left for it to evaluate.
        let store = try #require(context.container.stores.first as? SQLiteStore)
        let query = try #require(explanation.storeQuery)
        #expect(!(try store.queryPlan(for: query)).contains { $0.contains("evaluated by the store") })
        #expect(try context.fetch(descriptor).map(\.code) == ["s9", "s7", "s5", "s3"])
    }

    @Test func aSortSQLCannotRunIsDoneOnSnapshotsWithTheWindow() throws {
        let directory = try TemporaryDirectory()
        let context = ModelContext(try Self.seeded(directory))
        var descriptor = FetchDescriptor<Sample>(
            predicate: #Predicate { $0.reading > 1 }, sortBy: [SortDescriptor(\.big, order: .reverse)])
        descriptor.fetchLimit = 3
        let explanation = try context.explain(descriptor)
        #expect(explanation.sortLocation == .snapshots)
        #expect(explanation.windowLocation == .snapshots)
        #expect(explanation.storeQuery?.sort == [])
        #expect(explanation.storeQuery?.limit == nil)
        #expect(try context.fetch(descriptor).map(\.code) == ["s9", "s8", "s7"])
    }

    @Test func fetchesOfOneShapeBindTheirOwnOperands() throws {
        let directory = try TemporaryDirectory()
        let container = try Self.seeded(directory)
        // Every repetition reuses the plan kept for `code == x`; each finds its own sample.
        for index in [3, 7, 0, 9, 3] {
            let code = "s\(index)"
            let context = ModelContext(container)
            var descriptor = FetchDescriptor<Sample>(predicate: #Predicate { $0.code == code })
            descriptor.fetchLimit = 1
            #expect(try context.fetch(descriptor).map(\.reading) == [index])
            #expect(try context.fetchCount(descriptor) == 1)
        }
        // A range, a membership of another size, and nil in place of a value: other shapes, right answers.
        let context = ModelContext(container)
        for (low, high) in [(2, 4), (7, 8), (5, 5)] {
            let found = try context.fetch(
                FetchDescriptor<Sample>(
                    predicate: #Predicate { $0.reading >= low && $0.reading <= high },
                    sortBy: [SortDescriptor(\.reading)]))
            #expect(found.map(\.reading) == Array(low...high))
        }
        for codes in [["s1", "s2"], ["s4"], ["s5", "s6", "s8"]] {
            let found = try context.fetch(
                FetchDescriptor<Sample>(
                    predicate: #Predicate { codes.contains($0.code) }, sortBy: [SortDescriptor(\.code)]))
            #expect(found.map(\.code) == codes)
        }
        for level in [nil, 1.5, nil] as [Double?] {
            let found = try context.fetch(FetchDescriptor<Sample>(predicate: #Predicate { $0.level == level }))
            #expect(found.map(\.code) == (level == nil ? ["s0"] : ["s3"]))
        }
    }
}
