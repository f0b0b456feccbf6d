import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// What a host gives back to the replica that pushed: a push stored exactly as sent is not pulled
/// back by that replica (others still get it); a push the host changed on the way in is.
@Suite struct SyncOwnPushTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// The identifier a replica's engine gave itself (its state row for no remote).
    func replicaID(_ replica: Replica) throws -> String {
        let rows = try replica.container.stores[0].fetchErased(
            DataStoreFetchRequest<SchemaOnlyModel>(
                descriptor: FetchDescriptor(), editingState: EditingState(author: "test"),
                query: StoreQuery(entityName: SyncMetadata.stateEntityName, filter: .equal("remote", .string(""))))
        ).snapshots
        guard case .string(let id)? = rows.first?["replica"] else {
            Issue.record("the replica has no state row")
            return ""
        }
        return id
    }

    /// The models a pull from the start of the host's history gives `replica`.
    func pulledFromHistory(_ host: SyncHost, replica: String) throws -> [SyncModelState] {
        try host.pull(SyncPullRequest(replica: replica, cursor: SyncCursor(transaction: 0), limit: 100)).models
    }

    /// A host and a phone that pushed three journeys, then a change of one of them (each push
    /// stored exactly as sent); also the host's newest transaction between the two pushes.
    func phoneThatPushedTwice() async throws -> (host: SyncHost, phone: Replica, between: Int64) {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let phone = try Replica(url: "sqlite:" + directory.path("phone.sqlite"), host: host)
        let context = phone.context()
        for number in 0..<3 { context.insert(Journey("J\(number)", budget: number)) }
        try context.save()
        #expect(try await phone.engine.syncNow().pushed == 3)
        let between = try host.pull(SyncPullRequest(replica: "x", cursor: SyncCursor(transaction: 0), limit: 100))
            .cursor.transaction
        let journey = try #require(try context.fetch(FetchDescriptor<Journey>()).first)
        journey.budget = 100
        try context.save()
        #expect(try await phone.engine.syncNow().pushed == 1)
        return (host, phone, between)
    }

    @Test func aPushStoredAsSentIsNotPulledBackByItsReplica() async throws {
        let (host, phone, _) = try await phoneThatPushedTwice()

        let phoneID = try replicaID(phone)
        #expect(try pulledFromHistory(host, replica: phoneID).isEmpty)
        // Another replica gets both pushes: three models, one changed twice.
        let others = try pulledFromHistory(host, replica: "another replica")
        #expect(others.count == 3)
        #expect(others.contains { $0.values?["budget"] == .int(100) })
        let quiet = try await phone.engine.syncNow()
        #expect(quiet.pushed == 0 && quiet.pulled == 0, "\(quiet)")
    }

    @Test func aPushTheHostChangedComesBackToItsReplica() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let phone = try Replica(url: "sqlite:" + directory.path("phone.sqlite"), host: host)
        let laptop = try Replica(url: "sqlite:" + directory.path("laptop.sqlite"), host: host)
        let context = phone.context()
        context.insert(Journey("Lisbon", budget: 1))
        try context.save()
        _ = try await phone.engine.syncNow()
        _ = try await laptop.engine.syncNow()

        // A leg added on the laptop links the journey: the host also writes the journey's side of
        // the link, which the laptop did not send, so the laptop's pull brings that transaction.
        let laptopContext = laptop.context()
        let lisbon = try #require(try laptopContext.fetch(FetchDescriptor<Journey>()).first)
        let leg = Leg("Lisbon a")
        laptopContext.insert(leg)
        leg.journey = lisbon
        try laptopContext.save()
        #expect(try await laptop.engine.syncNow().pushed == 1)
        let laptopID = try replicaID(laptop)
        let pulled = try pulledFromHistory(host, replica: laptopID)
        #expect(pulled.contains { $0.entity == "Leg" })
        _ = try await phone.engine.syncNow()
        #expect(try phone.journeys() == laptop.journeys())
    }
    /// Pulls of several replicas read together answer what each pull alone answers: the replica
    /// whose exact push the page holds still leaves it out, others at the same place share a page,
    /// and other places and limits get their own.
    @Test func pullsReadTogetherAnswerAsEachPullAlone() async throws {
        let (host, phone, middle) = try await phoneThatPushedTwice()
        let phoneID = try replicaID(phone)
        let requests = [
            SyncPullRequest(replica: phoneID, cursor: SyncCursor(transaction: 0), limit: 100),
            SyncPullRequest(replica: "laptop", cursor: SyncCursor(transaction: 0), limit: 100),
            SyncPullRequest(replica: "desktop", cursor: SyncCursor(transaction: 0), limit: 100),
            SyncPullRequest(replica: "tablet", cursor: SyncCursor(transaction: middle), limit: 100),
            SyncPullRequest(replica: "watch", cursor: SyncCursor(transaction: 0), limit: 1),
        ]
        let alone = try requests.map { try host.pull($0) }
        #expect(alone[0].models.isEmpty)
        #expect(alone[1].models.count == 3 && alone[3].models.count == 1 && alone[4].hasMore)
        let newest = try #require(alone.map(\.cursor.transaction).max())
        // From the history as the host last read it, and (a place it has not read) from a new read.
        for known in [nil, newest, newest + 1_000] {
            let together = try host.pull(requests, knownThrough: known)
            #expect(together.count == requests.count)
            for (one, other) in zip(together, alone) {
                #expect(Set(one.models) == Set(other.models), "knownThrough \(String(describing: known))")
                #expect(one.cursor == other.cursor && one.hasMore == other.hasMore)
            }
        }
    }
}
