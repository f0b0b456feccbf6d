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
}
