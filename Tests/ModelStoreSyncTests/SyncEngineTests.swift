import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

@Suite struct SyncEngineTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    @Test func modelsAndRelationshipsReachAnotherReplica() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let a = try Replica(url: "json:" + directory.path("a.json"), host: host)
        let b = try Replica(url: "sqlite:" + directory.path("b.sqlite"), host: host)
        let context = a.context()
        let lisbon = Journey("Lisbon", budget: 900)
        context.insert(lisbon)
        let leg = Leg("Alfama")
        context.insert(leg)
        leg.journey = lisbon
        try context.save()

        let pushed = try await a.engine.syncNow()
        #expect(pushed.pushed == 2)
        let pulled = try await b.engine.syncNow()
        #expect(pulled.pulled == 2)
        #expect(try b.journeys() == ["Lisbon: 900  [\"Alfama\"]"])
        #expect(try a.journeys() == b.journeys())
    }

    @Test func editsToDifferentPropertiesBothSurvive() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let a = try Replica(url: "json:" + directory.path("a.json"), host: host)
        let b = try Replica(url: "log:" + directory.path("b.log"), host: host)
        let context = a.context()
        context.insert(Journey("Porto", budget: 100))
        try context.save()
        try await a.engine.syncNow()
        try await b.engine.syncNow()

        let onA = a.context()
        try #require(try onA.fetch(FetchDescriptor<Journey>()).first).budget = 250
        try onA.save()
        let onB = b.context()
        try #require(try onB.fetch(FetchDescriptor<Journey>()).first).notes = "by train"
        try onB.save()

        try await a.engine.syncNow()
        let round = try await b.engine.syncNow()
        #expect(round.conflicts == 0)
        try await a.engine.syncNow()
        #expect(try a.journeys() == ["Porto: 250 by train []"])
        #expect(try b.journeys() == a.journeys())
        #expect(try a.engine.conflicts.list().isEmpty)
    }

    @Test func aClashIsDecidedByThePolicyAndKeptAsAConflict() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        var remoteWins = SyncConfiguration()
        remoteWins.policies["Journey.budget"] = .remoteWins
        let a = try Replica(url: "sqlite:" + directory.path("a.sqlite"), host: host, configuration: remoteWins)
        let b = try Replica(url: "sqlite:" + directory.path("b.sqlite"), host: host, configuration: remoteWins)
        let context = a.context()
        context.insert(Journey("Faro", budget: 100))
        try context.save()
        try await a.engine.syncNow()
        try await b.engine.syncNow()

        let onA = a.context()
        try #require(try onA.fetch(FetchDescriptor<Journey>()).first).budget = 200
        try onA.save()
        let onB = b.context()
        try #require(try onB.fetch(FetchDescriptor<Journey>()).first).budget = 300
        try onB.save()
        try await a.engine.syncNow()
        let round = try await b.engine.syncNow()
        #expect(round.conflicts == 1)
        #expect(try b.journeys() == ["Faro: 200  []"])

        let conflicts = try b.engine.conflicts.list()
        try #require(conflicts.count == 1)
        let conflict = conflicts[0]
        #expect(conflict.kind == .property)
        #expect(conflict.property == "budget")
        #expect(conflict.base == .int(100))
        #expect(conflict.local == .int(300))
        #expect(conflict.remote == .int(200))
        #expect(conflict.chosen == .int(200))

        // Resolving it by taking the local side is a local edit, pushed like any other.
        try b.engine.conflicts.resolve(conflict.id, take: .local)
        #expect(try b.engine.conflicts.list().isEmpty)
        #expect(try b.engine.conflicts.list(includingResolved: true).count == 1)
        try await b.engine.syncNow()
        try await a.engine.syncNow()
        #expect(try a.journeys() == ["Faro: 300  []"])
        #expect(try b.journeys() == ["Faro: 300  []"])
    }

    @Test func deletesTravelAndAnEditBeatsADelete() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let a = try Replica(url: "json:" + directory.path("a.json"), host: host)
        let b = try Replica(url: "json:" + directory.path("b.json"), host: host)
        let context = a.context()
        context.insert(Journey("Braga"))
        context.insert(Journey("Evora"))
        try context.save()
        try await a.engine.syncNow()
        try await b.engine.syncNow()

        // A deletes Braga; B edits Evora while A deletes it.
        let onA = a.context()
        for journey in try onA.fetch(FetchDescriptor<Journey>()) { onA.delete(journey) }
        try onA.save()
        let onB = b.context()
        try #require(try onB.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == "Evora" })).first)
            .notes = "keep"
        try onB.save()

        try await a.engine.syncNow()
        let round = try await b.engine.syncNow()
        #expect(round.conflicts == 1)
        try await a.engine.syncNow()
        #expect(try b.journeys() == ["Evora: 0 keep []"])
        #expect(try a.journeys() == ["Evora: 0 keep []"])
        #expect(try b.engine.conflicts.list().map(\.kind) == [.updateDeleted])
    }

    @Test func aRoundWithNothingToMoveMovesNothing() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let a = try Replica(url: "sqlite:" + directory.path("a.sqlite"), host: host)
        let context = a.context()
        context.insert(Journey("Sintra"))
        try context.save()
        try await a.engine.syncNow()
        try await a.engine.syncNow()
        func transactions(_ container: ModelContainer) throws -> Int {
            try ModelContext(container).fetchHistory(HistoryDescriptor<DefaultHistoryTransaction>()).count
        }
        let before = (try transactions(a.container), try transactions(host.container))
        let quiet = try await a.engine.syncNow()
        #expect(quiet == SyncSummary())
        // Nothing was written on either side.
        #expect(try transactions(a.container) == before.0)
        #expect(try transactions(host.container) == before.1)
    }

    @Test func twoOfflineModelsWithOneUniqueValueBecomeOne() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let a = try Replica(url: "sqlite:" + directory.path("a.sqlite"), host: host)
        let b = try Replica(url: "sqlite:" + directory.path("b.sqlite"), host: host)
        let onA = a.context()
        onA.insert(Journey("Lisbon", budget: 100))
        try onA.save()
        let onB = b.context()
        onB.insert(Journey("Lisbon", budget: 200))
        try onB.save()
        try await a.engine.syncNow()
        try await b.engine.syncNow()
        try await a.engine.syncNow()
        #expect(try a.journeys().count == 1)
        #expect(try b.journeys() == a.journeys())
        #expect(try b.engine.conflicts.list().contains { $0.kind == .unique && $0.property == "budget" })
    }

    @Test func differentSchemasStopBeforeAnythingMoves() async throws {
        let host = try SyncHost(
            container: ModelContainer(
                for: Schema([Journey.self, Leg.self, Traveller.self], version: Schema.Version(2, 0, 0))
                    .includingSyncMetadata(),
                url: "sqlite:" + directory.path("shared.sqlite")))
        let a = try Replica(url: "sqlite:" + directory.path("a.sqlite"), host: host)
        await #expect {
            try await a.engine.syncNow()
        } throws: { error in
            guard let error = error as? SyncError, error.code == .schemaMismatch else { return false }
            return error.message.contains("behind")
        }
    }

    @Test func aContainerWithoutTheSyncEntitiesIsRefused() throws {
        let container = try ModelContainer(for: Schema([Journey.self, Leg.self]), url: "memory:")
        #expect {
            _ = try SyncHost(container: container)
        } throws: { error in
            (error as? SyncError)?.code == .missingMetadata
        }
    }
}

@Suite struct SyncDeletedReferenceTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    @Test func aReferenceToAModelDeletedElsewhereIsRemovedAndItsHolderStays() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let a = try Replica(url: "sqlite:" + directory.path("a.sqlite"), host: host)
        let b = try Replica(url: "json:" + directory.path("b.json"), host: host)
        let onA = a.context()
        onA.insert(Journey("Bergen"))
        try onA.save()
        try await a.engine.syncNow()
        try await b.engine.syncNow()

        // B adds a leg to the journey while A deletes the journey.
        let onB = b.context()
        let journey = try #require(try onB.fetch(FetchDescriptor<Journey>()).first)
        let leg = Leg("Fjord")
        onB.insert(leg)
        leg.journey = journey
        try onB.save()
        let doomed = try #require(try onA.fetch(FetchDescriptor<Journey>()).first)
        onA.delete(doomed)
        try onA.save()

        try await a.engine.syncNow()
        try await b.engine.syncNow()
        try await a.engine.syncNow()
        let legs = try b.context().fetch(FetchDescriptor<Leg>())
        #expect(legs.map(\.place) == ["Fjord"])
        #expect(legs.first?.journey == nil)
        #expect(try b.journeys().isEmpty)
        #expect(try a.context().fetch(FetchDescriptor<Leg>()).map(\.place) == ["Fjord"])
    }
}
