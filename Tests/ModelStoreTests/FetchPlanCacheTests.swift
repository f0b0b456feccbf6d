import Foundation
import ModelStoreTestSupport
import Testing

@testable import ModelStore

/// Fetches reuse the plan kept for their descriptor's shape, and each binds its own constants:
/// every way of running a fetch (pushed, partly pushed, on models) agrees, constant after constant.
struct FetchPlanCacheTests {
    @Test func fetchesOfOneShapeWithOtherConstantsAgree() throws {
        let harness = try QueryHarness()
        for threshold in [0, 3, 7, 100, -5] {
            harness.expectAgreement("int > \(threshold)") { _ in
                FetchDescriptor(predicate: #Predicate { $0.int > threshold }, sortBy: [SortDescriptor(\.code)])
            }
        }
        for code in ["R01", "R05", "nothing", "R03"] {
            harness.expectAgreement("code == \(code)") { _ in FetchDescriptor(predicate: #Predicate { $0.code == code })
            }
        }
        for (low, text) in [(1, "a"), (4, "e"), (0, "")] {
            harness.expectAgreement("int >= \(low) && text.contains(\(text))") { _ in
                FetchDescriptor(
                    predicate: #Predicate { $0.int >= low && $0.text.contains(text) }, sortBy: [SortDescriptor(\.code)])
            }
        }
        // One shape is kept per descriptor shape on the pushed container.
        let pushed = harness.container(.pushed)
        #expect(pushed.fetchPlans.count == 3)
    }

    @Test func anotherOperatorOrKeyPathOfTheSameTypesIsAnotherShape() throws {
        let harness = try QueryHarness()
        let value = 3
        harness.expectAgreement("int < 3") { _ in
            FetchDescriptor(predicate: #Predicate { $0.int < value }, sortBy: [SortDescriptor(\.code)])
        }
        harness.expectAgreement("int > 3") { _ in
            FetchDescriptor(predicate: #Predicate { $0.int > value }, sortBy: [SortDescriptor(\.code)])
        }
        harness.expectAgreement("int32 > 3") { _ in
            FetchDescriptor(predicate: #Predicate { $0.int64 > 3 }, sortBy: [SortDescriptor(\.code)])
        }
        harness.expectAgreement("int == 3, sorted the other way") { _ in
            FetchDescriptor(predicate: #Predicate { $0.int > value }, sortBy: [SortDescriptor(\.code, order: .reverse)])
        }
        #expect(harness.container(.pushed).fetchPlans.count == 4)
    }

    @Test func constantsFoldedIntoTheFilterAreNotReused() throws {
        let harness = try QueryHarness()
        // A Bool compared with a condition flips the filter: no constant is its operand, so no plan is kept.
        for wanted in [true, false, true] {
            harness.expectAgreement("(int > 2) == \(wanted)") { _ in
                FetchDescriptor(predicate: #Predicate { ($0.int > 2) == wanted }, sortBy: [SortDescriptor(\.code)])
            }
        }
        // The same constant twice cannot be told apart when a plan is made, but a kept plan binds
        // equal constants as well as any others.
        for (first, second) in [(2, 2), (2, 5), (3, 3), (6, 1)] {
            harness.expectAgreement("int >= \(first) && int <= \(second)") { _ in
                FetchDescriptor(
                    predicate: #Predicate { $0.int >= first && $0.int <= second }, sortBy: [SortDescriptor(\.code)])
            }
        }
        // nil and a value are different shapes.
        for note in [nil, "n1", nil] as [String?] {
            harness.expectAgreement("note == \(String(describing: note))") { _ in
                FetchDescriptor(predicate: #Predicate { $0.note == note }, sortBy: [SortDescriptor(\.code)])
            }
        }
        let kept = harness.container(.pushed).fetchPlans.count
        #expect(kept == 3, "the range's shape and the two of 'note == …' are kept, not \(kept)")
    }

    @Test func windowsTakeEachFetchsOwnOffsetAndLimit() throws {
        let harness = try QueryHarness()
        for (offset, limit) in [(0, 2), (1, 3), (2, 1)] {
            harness.expectAgreement("window \(offset) \(limit)") { _ in
                var descriptor = FetchDescriptor<Reading>(
                    predicate: #Predicate { $0.int >= 0 }, sortBy: [SortDescriptor(\.code)])
                descriptor.fetchOffset = offset
                descriptor.fetchLimit = limit
                return descriptor
            }
        }
    }

    @Test func aSortALimitOrAnOffsetMakesAnotherKey() throws {
        let harness = try QueryHarness()
        // One predicate shape, four descriptors that differ only in what the key holds beside it:
        // each needs a plan of its own (a window pushed or not, a sort sent or not).
        let descriptors: [(String, @Sendable (Int) -> FetchDescriptor<Reading>)] = [
            ("no sort, no window", { low in FetchDescriptor(predicate: #Predicate { $0.int >= low }) }),
            (
                "sorted",
                { low in FetchDescriptor(predicate: #Predicate { $0.int >= low }, sortBy: [SortDescriptor(\.code)]) }
            ),
            (
                "sorted, limit 2",
                { low in
                    var descriptor = FetchDescriptor<Reading>(
                        predicate: #Predicate { $0.int >= low }, sortBy: [SortDescriptor(\.code)])
                    descriptor.fetchLimit = 2
                    return descriptor
                }
            ),
            (
                "sorted, offset 1, limit 2",
                { low in
                    var descriptor = FetchDescriptor<Reading>(
                        predicate: #Predicate { $0.int >= low }, sortBy: [SortDescriptor(\.code)])
                    descriptor.fetchOffset = 1
                    descriptor.fetchLimit = 2
                    return descriptor
                }
            ),
        ]
        // Twice each, with other constants the second time: the second round reuses the four plans.
        for low in [0, 3] {
            for (name, make) in descriptors {
                harness.expectAgreement("int >= \(low), \(name)") { _ in make(low) }
            }
        }
        #expect(harness.container(.pushed).fetchPlans.count == 4)
    }

    /// An awaited fetch finds and keeps the plan of its descriptor's shape as a synchronous fetch
    /// does, and binds its own constants to it.
    @Test func awaitedFetchesReuseTheKeptPlanWithTheirOwnConstants() async throws {
        let container = try ModelContainer(
            for: Schema([Trip.self, Item.self, Destination.self]), configurations: [SuspendingStore.Configuration()])
        let store = try #require(container.stores.first as? SuspendingStore)
        let context = ModelContext(container)
        for (name, budget) in [("Lisbon", 300.0), ("Porto", 100.0), ("Faro", 200.0)] {
            context.insert(Trip(name: name, budget: budget))
        }
        try context.save()
        let before = store.calls.withLock { $0.async }
        for (threshold, expected) in [
            (150.0, ["Faro", "Lisbon"]), (250, ["Lisbon"]), (50, ["Faro", "Lisbon", "Porto"]), (400, []),
        ] {
            let descriptor = FetchDescriptor<Trip>(
                predicate: #Predicate { $0.budget > threshold }, sortBy: [SortDescriptor(\.name)])
            let names = try await ModelContext(container).fetchAsync(descriptor).map(\.name)
            #expect(names == expected, "budget > \(threshold)")
        }
        #expect(store.calls.withLock { $0.async } - before == 4, "every fetch was awaited")
        #expect(container.fetchPlans.count == 1, "the four fetches of one shape keep one plan")
    }
}
