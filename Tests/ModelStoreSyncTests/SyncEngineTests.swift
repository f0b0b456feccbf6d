import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

@Suite struct SyncEngineTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    // The basic scenarios (ModelStoreSyncTestSupport's SyncScenarios, which the PostgreSQL package runs
    // against a PostgreSQL shared store) over a shared SQLite store.
    func shared() throws -> SyncHost { try makeHost(url: "sqlite:" + directory.path("shared.sqlite")) }

    @Test func modelsAndRelationshipsReachAnotherReplica() async throws {
        try await SyncScenarios.modelsAndRelationshipsReachAnotherReplica(
            host: shared(), "json:" + directory.path("a.json"), "sqlite:" + directory.path("b.sqlite"))
    }

    @Test func editsToDifferentPropertiesBothSurvive() async throws {
        try await SyncScenarios.editsToDifferentPropertiesBothSurvive(
            host: shared(), "json:" + directory.path("a.json"), "log:" + directory.path("b.log"))
    }

    @Test func aClashIsDecidedByThePolicyAndKeptAsAConflict() async throws {
        try await SyncScenarios.aClashIsDecidedByThePolicyAndKeptAsAConflict(
            host: shared(), "sqlite:" + directory.path("a.sqlite"), "sqlite:" + directory.path("b.sqlite"))
    }

    @Test func deletesTravelAndAnEditBeatsADelete() async throws {
        try await SyncScenarios.deletesTravelAndAnEditBeatsADelete(
            host: shared(), "json:" + directory.path("a.json"), "json:" + directory.path("b.json"))
    }

    @Test func aRoundWithNothingToMoveMovesNothing() async throws {
        try await SyncScenarios.aRoundWithNothingToMoveMovesNothing(
            host: shared(), "sqlite:" + directory.path("a.sqlite"))
    }

    @Test func twoOfflineModelsWithOneUniqueValueBecomeOne() async throws {
        try await SyncScenarios.twoOfflineModelsWithOneUniqueValueBecomeOne(
            host: shared(), "sqlite:" + directory.path("a.sqlite"), "sqlite:" + directory.path("b.sqlite"))
    }

    @Test func aFirstPullPagesThroughDeletionsWithoutSkippingAny() async throws {
        try await SyncScenarios.aFirstPullPagesThroughDeletionsWithoutSkippingAny(
            host: shared(), "sqlite:" + directory.path("a.sqlite"), "json:" + directory.path("b.json"),
            "log:" + directory.path("c.log"))
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
