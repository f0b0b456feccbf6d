import Foundation
import ModelStore
import ModelStoreInMemory
import Testing

/// ``ModelContext/explain(_:)`` says what runs where and which index the store uses.
struct QueryExplainTests {
    @Test func uniqueKeyFetchUsesTheUniqueIndex() throws {
        let harness = try QueryHarness()
        let context = ModelContext(harness.container(.pushed))
        let explanation = try context.explain(FetchDescriptor<Reading>(predicate: #Predicate { $0.code == "R03" }))
        #expect(explanation.entityName == "Reading")
        #expect(explanation.storeType == "InMemoryStore")
        #expect(explanation.capabilities == .all)
        #expect(explanation.storeQuery?.filter == .compare("code", .equal, .string("R03")))
        #expect(explanation.accessPath == StoreAccessPath(kind: .uniqueIndex, properties: ["code"], estimatedRows: 1))
        #expect(explanation.conditions.map(\.location) == [.store])
        #expect(!explanation.evaluatesPredicateOnModels)
        #expect(explanation.sortLocation == .none && explanation.windowLocation == .none)
        #expect(explanation.description.contains("access path: uniqueIndex(code) ~1 rows"))
        #expect(explanation.description.contains("condition 1 [store] $0.code == \"R03\""))
    }

    @Test func sortedWindowIsPushedToTheOrderedIndex() throws {
        let harness = try QueryHarness()
        var descriptor = FetchDescriptor<Reading>(
            predicate: #Predicate { $0.flag }, sortBy: [SortDescriptor(\.int, order: .reverse)])
        descriptor.fetchLimit = 5
        let explanation = try ModelContext(harness.container(.pushed)).explain(descriptor)
        #expect(explanation.sortLocation == .store)
        #expect(explanation.sortKeys == [StoreSortKey(property: "int", ascending: false)])
        #expect(explanation.windowLocation == .store)
        #expect(explanation.storeQuery?.limit == 5)
        #expect(explanation.accessPath?.kind == .orderedIndexSort)
        #expect(explanation.description.contains("offset/limit: store"))
    }

    @Test func partialPushDownShowsEveryPlace() throws {
        let harness = try QueryHarness()
        var descriptor = FetchDescriptor<Reading>(
            predicate: #Predicate { $0.int > 2 && $0.text.contains("a") && $0.text.count > 1 && $0.note == nil },
            sortBy: [SortDescriptor(\.text)])
        descriptor.fetchLimit = 3
        let explanation = try ModelContext(harness.container(.partial)).explain(descriptor)
        #expect(explanation.conditions.map(\.location) == [.store, .snapshots, .models, .store])
        #expect(explanation.conditions.map(\.isInexact) == [true, false, false, false])
        #expect(explanation.conditions[2].reason == "not translatable to a store filter")
        #expect(
            explanation.storeQuery?.filter
                == .and([.compare("int", .greater, .int(2)), .compare("note", .equal, .null)]))
        #expect(explanation.storeQuery?.limit == nil && explanation.storeQuery?.sort == [])
        #expect(
            explanation.snapshotFilter == .and([.compare("int", .greater, .int(2)), .text("text", .contains("a"))]))
        #expect(explanation.evaluatesPredicateOnModels)
        #expect(explanation.sortLocation == .snapshots)
        #expect(explanation.windowLocation == .models)
        #expect(
            explanation.description.contains(
                "condition 3 [models] $0.text.count > 1 (not translatable to a store filter)"))
    }

    @Test func conditionsAfterOneThatMayFailStayOnModels() throws {
        let harness = try QueryHarness()
        let explanation = try ModelContext(harness.container(.pushed)).explain(
            FetchDescriptor<Reading>(predicate: #Predicate { $0.note! == "x" && $0.int > 2 }))
        #expect(explanation.conditions.map(\.location) == [.models, .models])
        #expect(explanation.storeQuery?.filter == nil)
        #expect(explanation.conditions[1].reason?.contains("may fail on models") == true)
    }

    @Test func swiftDataStyleStoresGetTheDescriptor() throws {
        let harness = try QueryHarness()
        let explanation = try ModelContext(harness.container(.memory)).explain(
            FetchDescriptor<Reading>(predicate: #Predicate { $0.int > 2 }, sortBy: [SortDescriptor(\.int)]))
        #expect(explanation.capabilities == nil)
        #expect(explanation.storeQuery == nil)
        #expect(explanation.storeType == "SwiftDataStyleStore")
        #expect(explanation.notes.contains { $0.contains("SwiftData-style store") })
        #expect(explanation.description.contains("SwiftData-style: gets the descriptor"))
    }

    @Test func unsavedChangesKeepTheWindowInTheContext() throws {
        let harness = try QueryHarness()
        let context = ModelContext(harness.container(.pushed))
        let station = try #require(try context.fetch(FetchDescriptor<Station>()).first)
        station.name = "Renamed"
        var descriptor = FetchDescriptor<Reading>(
            predicate: #Predicate { $0.station?.name == "Renamed" && $0.int > 0 }, sortBy: [SortDescriptor(\.int)])
        descriptor.fetchLimit = 2
        let explanation = try context.explain(descriptor)
        #expect(explanation.conditions[0].location == .models)
        #expect(explanation.conditions[0].reason == "reads related models with unsaved changes")
        #expect(explanation.conditions[1].location == .store)
        #expect(explanation.windowLocation == .models)

        let reading = Reading()
        reading.code = "NEW"
        context.insert(reading)
        let afterInsert = try context.explain(descriptor)
        #expect(afterInsert.storeQuery?.limit == nil)
        #expect(afterInsert.notes.contains { $0.contains("unsaved changes of 'Reading'") })
    }

    @Test func mostOfTheCorpusIsPushedToAStoreThatRunsEverything() throws {
        let harness = try QueryHarness()
        let context = ModelContext(harness.container(.pushed))
        var pushed = 0
        var total = 0
        for entry in QueryCorpus.entries {
            for condition in try context.explain(entry.build(context)).conditions {
                total += 1
                if condition.location == .store { pushed += 1 }
            }
        }
        #expect(pushed * 10 >= total * 8, "\(pushed) of \(total) conditions pushed")
    }
}

/// Fetch and explain read one list of stages, so they agree, also when the only unsaved changes are deletes.
struct QueryStageTests {
    @Test func withOnlyUnsavedDeletesTheWindowRunsOnModelsInFetchAndExplain() throws {
        let harness = try QueryHarness()
        let context = ModelContext(harness.container(.pushed))
        var descriptor = FetchDescriptor<Reading>(sortBy: [SortDescriptor(\.code)])
        descriptor.fetchLimit = 3
        let first = try #require(try context.fetch(descriptor).first)
        context.delete(first)
        #expect(context.insertedModelsArray.isEmpty && context.changedModelsArray.isEmpty)

        let explanation = try context.explain(descriptor)
        #expect(explanation.windowLocation == .models)
        #expect(explanation.stages.contains(.window(.models)))
        #expect(explanation.stages.contains(.models(filters: false, mergesPendingChanges: true, sorts: false)))
        #expect(explanation.description.contains("stages: store -> models(merge unsaved changes) -> window(models)"))

        // The fetch runs the same stages: the deleted model is left out before the window, so three come back.
        let fetched = try context.fetch(descriptor)
        #expect(fetched.count == 3)
        #expect(!fetched.contains { $0 === first })
        let all = try ModelContext(harness.container(.pushed)).fetch(
            FetchDescriptor<Reading>(sortBy: [SortDescriptor(\.code)]))
        #expect(fetched.map(\.code) == Array(all.map(\.code).dropFirst().prefix(3)))
    }

    @Test func withoutUnsavedChangesAWindowAfterASnapshotFilterRunsOnSnapshots() throws {
        let harness = try QueryHarness()
        let context = ModelContext(harness.container(.partial))
        var descriptor = FetchDescriptor<Reading>(predicate: #Predicate { $0.flag })
        descriptor.fetchLimit = 2
        let explanation = try context.explain(descriptor)
        #expect(explanation.stages.first == .store)
        #expect(explanation.stages.last == .window(explanation.windowLocation))
        #expect(try context.fetch(descriptor).count <= 2)
    }
}
