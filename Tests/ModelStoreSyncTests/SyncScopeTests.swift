import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// A scope per requester: each replica holds and changes only its part of the shared store.
@Suite struct SyncScopeTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// Journeys whose notes name the requester belong to them.
    static let byOwner = SyncScope { access in ["Journey": .equal("notes", .string(access.subject ?? ""))] }

    func replica(_ name: String, as owner: String, host: SyncHost) throws -> Replica {
        let container = try ModelContainer(for: Replica.schema, url: "sqlite:" + directory.path("\(name).sqlite"))
        let transport = InProcessSyncTransport(host: host, access: SyncAccess(subject: owner))
        return Replica(container: container, engine: try SyncEngine(container: container, transport: transport))
    }

    @Test func eachReplicaPullsOnlyItsOwnModels() async throws {
        let shared = try ModelContainer(for: Replica.schema, url: "sqlite:" + directory.path("shared.sqlite"))
        let context = ModelContext(shared)
        for (name, owner) in [("Lisbon", "ana"), ("Porto", "ana"), ("Oslo", "bo")] {
            let journey = Journey(name)
            journey.notes = owner
            context.insert(journey)
        }
        try context.save()
        let host = try SyncHost(container: shared, scope: Self.byOwner)
        let ana = try replica("ana", as: "ana", host: host)
        let bo = try replica("bo", as: "bo", host: host)
        try await ana.engine.syncNow()
        try await bo.engine.syncNow()
        #expect(try ana.journeys() == ["Lisbon: 0 ana []", "Porto: 0 ana []"])
        #expect(try bo.journeys() == ["Oslo: 0 bo []"])

        // A model that leaves a replica's scope arrives there as a deletion.
        let porto = try #require(
            try context.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == "Porto" })).first)
        porto.notes = "bo"
        try context.save()
        try await ana.engine.syncNow()
        try await bo.engine.syncNow()
        #expect(try ana.journeys() == ["Lisbon: 0 ana []"])
        #expect(try bo.journeys() == ["Oslo: 0 bo []", "Porto: 0 bo []"])
    }

    @Test func aWriteOutsideTheScopeIsRefusedAndNothingIsStored() async throws {
        let shared = try ModelContainer(for: Replica.schema, url: "sqlite:" + directory.path("shared.sqlite"))
        let host = try SyncHost(container: shared, scope: Self.byOwner)
        let ana = try replica("ana", as: "ana", host: host)
        let context = ana.context()
        let mine = Journey("Mine")
        mine.notes = "ana"
        let theirs = Journey("Theirs")
        theirs.notes = "bo"
        context.insert(mine)
        context.insert(theirs)
        try context.save()
        await #expect {
            try await ana.engine.syncNow()
        } throws: { error in
            guard let error = error as? SyncError, error.code == .refused else { return false }
            return error.message.contains("outside this replica's scope") && !error.isTransient
        }
        #expect(try ModelContext(shared).fetchCount(FetchDescriptor<Journey>()) == 0)
        #expect(ana.engine.status.phase == .failed)

        // Once the app fixes its data, the push goes through; nothing was dropped meanwhile.
        context.delete(theirs)
        try context.save()
        try await ana.engine.syncNow()
        #expect(try ModelContext(shared).fetch(FetchDescriptor<Journey>()).map(\.name) == ["Mine"])
    }

    @Test func aPushThatLinksAModelOutsideTheScopeIsRefusedWhole() throws {
        let scope = SyncScope { access in
            let me = StoreValue.string(access.subject ?? "")
            return ["Journey": .equal("notes", me), "Leg": .equal("place", me)]
        }
        let shared = try ModelContainer(for: Replica.schema, url: "sqlite:" + directory.path("shared.sqlite"))
        let context = ModelContext(shared)
        for (name, owner) in [("Oslo", "bo"), ("Lisbon", "ana")] {
            let journey = Journey(name)
            journey.notes = owner
            context.insert(journey)
        }
        try context.save()
        let host = try SyncHost(container: shared, scope: scope)
        // The global identifiers, from a host without a scope on the same store.
        let everything = try SyncHost(container: shared).pull(
            SyncPullRequest(replica: "admin", cursor: .start, limit: 100)
        ).models
        func global(_ name: String) throws -> String {
            try #require(everything.first { $0.values?["name"] == .string(name) }).globalID
        }
        func leg(_ id: String, to journey: String) -> SyncPushRequest {
            let link = SyncModelState.reference(to: journey, entity: "Journey")
            return SyncPushRequest(
                replica: "ana-phone",
                changes: [
                    SyncChange(
                        globalID: id, entity: "Leg", kind: .insert,
                        values: ["place": .string("ana"), "journey": .reference(link)],
                        stamp: SyncStamp(milliseconds: 1, counter: 0, replica: "ana-phone"))
                ])
        }
        let ana = SyncAccess(subject: "ana")

        // Ana's own leg, linked to Bo's journey: the link would change Bo's journey too.
        let oslo = try global("Oslo")
        let error = #expect(throws: SyncError.self) { try host.push(leg("leg-1", to: oslo), access: ana) }
        #expect(error?.code == .refused)
        #expect(error?.isTransient == false)
        #expect(error?.message.contains("links the 'Leg' model leg-1 to the 'Journey' model \(oslo)") == true)
        #expect(try ModelContext(shared).fetchCount(FetchDescriptor<Leg>()) == 0)

        // A link inside the scope goes through.
        #expect(try host.push(leg("leg-2", to: try global("Lisbon")), access: ana).applied)
        let journeys = try ModelContext(shared).fetch(FetchDescriptor<Journey>())
        #expect(journeys.first { $0.name == "Lisbon" }?.legs.map(\.place) == ["ana"])
        #expect(journeys.first { $0.name == "Oslo" }?.legs.isEmpty == true)
    }
}
