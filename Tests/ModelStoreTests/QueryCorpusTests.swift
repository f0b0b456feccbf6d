import Foundation
import ModelStore
import Testing

/// Every predicate of the corpus returns the same models, in the same order, pushed down,
/// partially pushed and fully in memory, through fetch, fetchCount, fetchIdentifiers and enumerate.
struct QueryCorpusTests {
    @Test func corpusHasMoreThanAHundredPredicates() {
        #expect(QueryCorpus.entries.count >= 100)
        #expect(Set(QueryCorpus.entries.map(\.name)).count == QueryCorpus.entries.count)
    }

    @Test(arguments: QueryCorpus.entries)
    func predicateAgreesEveryWay(_ entry: CorpusEntry) throws {
        let harness = try QueryHarness()
        harness.expectAgreement(entry.name, entry.build)
    }

    static let sorts: [(String, [SortDescriptor<Reading>])] = {
        var mutated = SortDescriptor(\Reading.int)
        mutated.order = .reverse
        return [
            ("int", [SortDescriptor(\.int)]),
            ("int reverse", [SortDescriptor(\.int, order: .reverse)]),
            ("int with order set after creation", [mutated]),
            ("double (NaN ties)", [SortDescriptor(\.double)]),
            ("double reverse", [SortDescriptor(\.double, order: .reverse)]),
            ("text", [SortDescriptor(\.text)]),
            ("text reverse", [SortDescriptor(\.text, order: .reverse)]),
            ("text lexical", [SortDescriptor(\.text, comparator: .lexical)]),
            ("note (nil first)", [SortDescriptor(\.note)]),
            ("note reverse (nil last)", [SortDescriptor(\.note, order: .reverse)]),
            ("decimal", [SortDescriptor(\.decimal)]),
            ("date then text", [SortDescriptor(\.date), SortDescriptor(\.text)]),
            ("uuid reverse", [SortDescriptor(\.uuid, order: .reverse)]),
            ("score", [SortDescriptor(\.score)]),
            ("float", [SortDescriptor(\.float)]),
            ("uint64", [SortDescriptor(\.uint64)]),
            ("int8 reverse then code", [SortDescriptor(\.int8, order: .reverse), SortDescriptor(\.code)]),
            ("count then int reverse", [SortDescriptor(\.count), SortDescriptor(\.int, order: .reverse)]),
            ("computed shout (sorts on models)", [SortDescriptor(\.shout)]),
        ]
    }()

    /// One case per sort, each checked with several predicates and windows.
    static let sortCases: [CorpusEntry] = sorts.map { sortName, sort in
        CorpusEntry(name: sortName) { _ in FetchDescriptor(sortBy: sort) }
    }

    @Test(arguments: sortCases)
    func sortedWindowAgreesEveryWay(_ sortCase: CorpusEntry) throws {
        let harness = try QueryHarness()
        let predicates: [(String, Predicate<Reading>?)] = [
            ("all", nil),
            ("int > 0", #Predicate { $0.int > 0 }),
            ("text contains a || flag", #Predicate { $0.text.contains("a") || $0.flag }),
            ("text count > 1", #Predicate { $0.text.count > 1 }),
        ]
        let windows: [(Int?, Int?)] = [(nil, nil), (0, 5), (3, 4), (nil, 1), (38, 10)]
        for (predicateName, predicate) in predicates {
            for (offset, limit) in windows {
                let window = "offset \(offset ?? 0) limit \(limit.map(String.init) ?? "-")"
                let label = "\(predicateName) sorted by \(sortCase.name) \(window)"
                harness.expectAgreement(label) { context in
                    var descriptor = try sortCase.build(context)
                    descriptor.predicate = predicate
                    descriptor.fetchOffset = offset
                    descriptor.fetchLimit = limit
                    return descriptor
                }
            }
        }
    }

    @Test func corpusExercisesEveryPlacement() throws {
        let harness = try QueryHarness()
        let context = ModelContext(harness.container(.partial))
        var locations: Set<String> = []
        for entry in QueryCorpus.entries {
            let explanation = try context.explain(entry.build(context))
            for condition in explanation.conditions {
                locations.insert(condition.location.rawValue + (condition.isInexact ? "-inexact" : ""))
            }
        }
        #expect(locations == ["store", "store-inexact", "snapshots", "models"])
    }
}
