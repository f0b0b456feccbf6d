import Foundation
import ModelStore
import Testing

/// The split applies on every path: unsaved changes, count and identifiers, batch delete and
/// update, inexact push-down, and windows pushed only when nothing is left to do afterwards.
struct QueryPipelineTests {
    /// The codes a context fetches after the same unsaved changes in each way.
    func pendingOutcome(_ harness: QueryHarness, _ way: FetchWay, _ descriptor: FetchDescriptor<Reading>) throws
        -> [String]
    {
        let context = ModelContext(harness.container(way))
        let all = try context.fetch(FetchDescriptor<Reading>(sortBy: [SortDescriptor(\.code)]))
        all[3].int = 100
        all[4].double = .nan
        all[5].station?.name = "Renamed"
        context.delete(all[6])
        let fresh = Reading()
        fresh.code = "NEW"
        fresh.int = 50
        fresh.double = 1
        context.insert(fresh)
        return try context.fetch(descriptor).map(\.code)
    }

    @Test func unsavedChangesAgreeEveryWay() throws {
        let harness = try QueryHarness()
        let descriptors: [FetchDescriptor<Reading>] = [
            FetchDescriptor(predicate: #Predicate { $0.int > 10 }, sortBy: [SortDescriptor(\.int)]),
            FetchDescriptor(predicate: #Predicate { $0.station?.name == "Renamed" }),
            FetchDescriptor(predicate: #Predicate { $0.double >= 0 }, sortBy: [SortDescriptor(\.double)]),
            {
                var limited = FetchDescriptor<Reading>(
                    predicate: #Predicate { $0.int >= 0 }, sortBy: [SortDescriptor(\.int)])
                limited.fetchOffset = 2
                limited.fetchLimit = 4
                return limited
            }(),
            {
                var saved = FetchDescriptor<Reading>(
                    predicate: #Predicate { $0.int > 10 }, sortBy: [SortDescriptor(\.code)])
                saved.includePendingChanges = false
                return saved
            }(),
        ]
        for (index, descriptor) in descriptors.enumerated() {
            let outcomes = try FetchWay.allCases.map { try pendingOutcome(harness, $0, descriptor) }
            #expect(outcomes[1] == outcomes[0], "descriptor \(index)")
            #expect(outcomes[2] == outcomes[0], "descriptor \(index)")
        }
    }

    @Test func batchDeleteAndUpdateAgreeEveryWay() throws {
        let harness = try QueryHarness { context in
            try QueryDataset.seed(context)
            try QueryDataset.seedSensors(context)
        }
        var remaining: [[String]] = []
        var updated: [Int] = []
        var labels: [[String]] = []
        var readings: [[String]] = []
        for way in FetchWay.allCases {
            let context = ModelContext(harness.container(way))
            try context.delete(model: Sensor.self, where: #Predicate { $0.value > 1 && $0.label.count > 0 })
            remaining.append(
                try context.fetch(FetchDescriptor<Sensor>(sortBy: [SortDescriptor(\.serial)])).map(\.serial))
            updated.append(
                try context.update(
                    Sensor.self, where: #Predicate { ($0.rank ?? 0) > 2 || $0.label.contains("a") },
                    set: [.set(\.label, to: "hot")]))
            labels.append(
                try ModelContext(harness.container(way)).fetch(
                    FetchDescriptor<Sensor>(sortBy: [SortDescriptor(\.serial)])
                )
                .map { "\($0.serial)=\($0.label)" })
            try context.delete(
                model: Reading.self, where: #Predicate { $0.tags.contains { $0.weight > 2 } && $0.int < 5 })
            readings.append(try ModelContext(harness.container(way)).fetch(FetchDescriptor<Reading>()).map(\.code))
        }
        #expect(remaining.allSatisfy { $0 == remaining[0] } && remaining[0].count < 24 && !remaining[0].isEmpty)
        #expect(updated.allSatisfy { $0 == updated[0] } && updated[0] > 0)
        #expect(labels.allSatisfy { $0 == labels[0] })
        #expect(readings.allSatisfy { $0 == readings[0] } && readings[0].count < QueryDataset.count)
    }

    @Test func inexactFiltersArePushedAndRechecked() throws {
        let capabilities = QueryCapabilities(
            filters: [.equality], inexactFilters: [.textContains], sorting: true, offsetAndLimit: true)
        let harness = try QueryHarness(limited: capabilities)
        var descriptor = FetchDescriptor<Reading>(
            predicate: #Predicate { $0.text.contains("o") && $0.flag == false },
            sortBy: [SortDescriptor(\.int)])
        descriptor.fetchLimit = 3
        let fixed = descriptor
        harness.expectAgreement("inexact contains") { _ in fixed }
        let store = try #require(harness.container(.partial).stores.first as? LimitedStore)
        let query = try #require(store.received.withLock { $0.last })
        #expect(query.filter == .and([.text("text", .contains("o")), .compare("flag", .equal, .bool(false))]))
        #expect(query.sort == [StoreSortKey(property: "int")])
        #expect(query.limit == nil, "the window stays in the context while anything is re-checked")
        #expect(query.allowsInexactMatches, "the context re-checks the inexact condition, so allows a superset")

        // Only a query with an inexact condition allows inexact matches.
        let exactOnly = FetchDescriptor<Reading>(predicate: #Predicate { $0.flag == false })
        _ = try ModelContext(harness.container(.partial)).fetch(exactOnly)
        let exactQuery = try #require(store.received.withLock { $0.last })
        #expect(exactQuery.filter == .compare("flag", .equal, .bool(false)))
        #expect(!exactQuery.allowsInexactMatches)
    }

    @Test func windowsArePushedOnlyWhenNothingIsLeft() throws {
        let harness = try QueryHarness(
            limited: QueryCapabilities(filters: [.equality, .ordering], sorting: true, offsetAndLimit: true))
        let store = try #require(harness.container(.partial).stores.first as? LimitedStore)
        let context = ModelContext(harness.container(.partial))
        var pushed = FetchDescriptor<Reading>(predicate: #Predicate { $0.int > 0 }, sortBy: [SortDescriptor(\.int)])
        pushed.fetchOffset = 1
        pushed.fetchLimit = 2
        _ = try context.fetch(pushed)
        let first = try #require(store.received.withLock { $0.last })
        #expect(first.offset == 1 && first.limit == 2)

        var residual = FetchDescriptor<Reading>(
            predicate: #Predicate { $0.int > 0 && $0.text.contains("a") }, sortBy: [SortDescriptor(\.int)])
        residual.fetchLimit = 2
        _ = try context.fetch(residual)
        let second = try #require(store.received.withLock { $0.last })
        #expect(second.limit == nil && second.filter == .compare("int", .greater, .int(0)))
        let fixed = residual
        harness.expectAgreement("residual window") { _ in fixed }
    }

    @Test func modelsLoadByIdentifierFromStoresWithoutIdentifierFilters() throws {
        let harness = try QueryHarness(limited: .none)
        let container = harness.container(.partial)
        let id = try KnownModels.reading("R07", in: ModelContext(container))
        let loaded = try ModelContext(container).model(for: id, as: Reading.self)
        #expect(loaded?.code == "R07")
        let store = try #require(container.stores.first as? LimitedStore)
        #expect(store.received.withLock { $0.allSatisfy { $0.filter == nil && $0.sort.isEmpty && $0.limit == nil } })
    }
}
