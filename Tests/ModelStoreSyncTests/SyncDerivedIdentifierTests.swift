import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSync

/// The transport to an in-process host that loses the reply to the first push it forwards, once
/// the host has stored it: a replica killed between the remote's save and its own acknowledgement.
final class AcknowledgementLosingTransport: SyncTransport {
    /// The error a lost reply raises.
    struct LostReply: Error {}

    private let inner: InProcessSyncTransport
    private let lost = LockedValue(false)

    init(host: SyncHost) { inner = InProcessSyncTransport(host: host) }

    func hello(_ request: SyncHello) async throws -> SyncHelloReply { try await inner.hello(request) }

    func push(_ request: SyncPushRequest) async throws -> SyncPushReply {
        let reply = try await inner.push(request)
        let lose = lost.withLock { lost in
            defer { lost = true }
            return !lost
        }
        if lose { throw LostReply() }
        return reply
    }

    func pull(_ request: SyncPullRequest) async throws -> SyncPullReply { try await inner.pull(request) }

    func fetch(_ request: SyncFetchRequest) async throws -> [SyncModelState] { try await inner.fetch(request) }
}

/// Global identifiers a replica derives from its models' keys (``ReplicaGlobalIDs``), stored with
/// the acknowledgement of their push: a push whose acknowledgement is lost (the replica killed
/// after the remote stored it) is repeated under the same identifiers, so nothing is doubled; a
/// model deleted before the repeat is deleted on the remote; a pull that brings such a model back
/// finds the local one.
@Suite struct SyncDerivedIdentifierTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    @Test func derivedIdentifiersGiveBackTheirKeysAndOnlyToTheirReplicaAndEntity() throws {
        let ids = ReplicaGlobalIDs(replica: "replica-1", entities: ["Leg", "Journey"])
        let other = ReplicaGlobalIDs(replica: "replica-2", entities: ["Leg", "Journey"])
        var seen = Set<String>()
        for key: Int64 in [0, 1, 2, 255, 256, 1 << 40, .max, -1, .min] {
            let global = ids.globalID(entity: "Leg", key: key)
            #expect(seen.insert(global).inserted, "'\(global)' twice")
            #expect(ids.key(of: global, entity: "Leg") == key)
            #expect(ids.key(of: global, entity: "Journey") == nil)
            #expect(other.key(of: global, entity: "Leg") == nil)
            let uuid = try #require(UUID(uuidString: global))
            #expect(uuid.uuid.6 >> 4 == 8, "version 8: \(global)")
            #expect(uuid.uuid.8 >> 6 == 0b10, "RFC 4122 variant: \(global)")
            #expect(ids.globalID(entity: "Journey", key: key) != global)
            #expect(other.globalID(entity: "Leg", key: key) != global)
        }
        #expect(ids.key(of: UUID().uuidString, entity: "Leg") == nil)
        #expect(ids.key(of: "not an identifier", entity: "Leg") == nil)
        #expect(ids.key(of: ids.globalID(entity: "Leg", key: 7), entity: "Traveller") == nil)
    }

    /// Legs `P0`... saved on a replica on `url` whose first push loses its acknowledgement; the
    /// replica's container and engine are gone when this returns, as after a kill.
    /// With `afterARound`, the replica runs a round before it saves the legs, so their push is one
    /// that reads the history rather than every model.
    func pushLosingTheAcknowledgement(
        url: String, host: SyncHost, count: Int, afterARound: Bool = false
    ) async throws {
        var configuration = SyncConfiguration()
        configuration.pageSize = 5
        let container = try ModelContainer(for: Replica.schema, url: url)
        let engine = try SyncEngine(
            container: container, transport: AcknowledgementLosingTransport(host: host), configuration: configuration)
        if afterARound { #expect(try await engine.syncNow().pushed == 0) }
        let context = ModelContext(container)
        for number in 0..<count { context.insert(Leg("P\(number)")) }
        try context.save()
        await #expect(throws: SyncError.self) { try await engine.syncNow() }
    }

    /// A shared store, and the replica on `phone.sqlite` opened again after its first push of 12
    /// legs lost its acknowledgement.
    func phoneAfterLostPush(afterARound: Bool = false) async throws -> (SyncHost, Replica) {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let url = "sqlite:" + directory.path("phone.sqlite")
        try await pushLosingTheAcknowledgement(url: url, host: host, count: 12, afterARound: afterARound)
        return (host, try Replica(url: url, host: host))
    }

    func replica(_ name: String, host: SyncHost) throws -> Replica {
        var configuration = SyncConfiguration()
        configuration.pageSize = 5
        return try Replica(url: "sqlite:" + directory.path(name + ".sqlite"), host: host, configuration: configuration)
    }

    static func legs(_ replica: Replica) throws -> [String] {
        try replica.context().fetch(FetchDescriptor<Leg>()).map(\.place).sorted()
    }

    /// The shared store's legs, sorted.
    static func sharedLegs(_ host: SyncHost) throws -> [String] {
        try ModelContext(host.container).fetch(FetchDescriptor<Leg>()).map(\.place).sorted()
    }

    @Test func aPushRepeatedAfterItsAcknowledgementWasLostDoublesNothing() async throws {
        let (host, phone) = try await phoneAfterLostPush()
        #expect(try await phone.engine.syncNow().pushed == 12)
        let laptop = try replica("laptop", host: host)
        try await laptop.engine.syncNow()
        let expected = (0..<12).map { "P\($0)" }.sorted()
        #expect(try Self.legs(laptop) == expected)
        #expect(try Self.legs(phone) == expected)
        #expect(try await phone.engine.syncNow().pulled == 0)
        #expect(try Self.sharedLegs(host) == expected)
    }

    @Test func aModelChangedBeforeTheRepeatIsMergedOnceEverywhere() async throws {
        let (host, phone) = try await phoneAfterLostPush()
        let context = phone.context()
        for leg in try context.fetch(FetchDescriptor<Leg>()) where leg.place == "P1" { leg.place = "P1 changed" }
        try context.save()
        // The repeated push finds P1 on the remote with the value the lost push sent: stale. The
        // replica fetches it and merges it with its own model as one model (never acknowledged, so
        // without a base, and the clash goes by the policy), then pushes again.
        try await phone.engine.syncNow()
        let laptop = try replica("laptop", host: host)
        try await laptop.engine.syncNow()
        let (laptopLegs, phoneLegs, sharedLegs) = (
            try Self.legs(laptop), try Self.legs(phone), try Self.sharedLegs(host)
        )
        #expect(phoneLegs.count == 12, "\(phoneLegs)")
        #expect(phoneLegs.contains("P1") != phoneLegs.contains("P1 changed"), "\(phoneLegs)")
        #expect(laptopLegs == phoneLegs)
        #expect(sharedLegs == phoneLegs)
    }

    /// A first push lists the range of keys it reads; a later one the keys of its new models.
    @Test(arguments: [false, true])
    func aModelDeletedBeforeTheRepeatIsDeletedOnTheRemote(afterARound: Bool) async throws {
        let (host, phone) = try await phoneAfterLostPush(afterARound: afterARound)
        // The lost page (P0-P4) is on the remote; P2 of it and P7 (never sent) are deleted.
        let context = phone.context()
        for leg in try context.fetch(FetchDescriptor<Leg>()) where ["P2", "P7"].contains(leg.place) {
            context.delete(leg)
        }
        try context.save()
        try await phone.engine.syncNow()
        let laptop = try replica("laptop", host: host)
        try await laptop.engine.syncNow()
        let expected = (0..<12).map { "P\($0)" }.filter { $0 != "P2" && $0 != "P7" }.sorted()
        let (laptopLegs, phoneLegs, sharedLegs) = (
            try Self.legs(laptop), try Self.legs(phone), try Self.sharedLegs(host)
        )
        #expect(laptopLegs == expected, "\(laptopLegs)")
        #expect(phoneLegs == expected, "\(phoneLegs)")
        #expect(sharedLegs == expected, "\(sharedLegs)")
    }

    /// A replica on `url` whose first push of 12 legs lost its acknowledgement, and another
    /// replica that pulled the lost page (P0-P4) and changed P3 to `P3 there` on the remote.
    func lostPushChangedElsewhere(url: String, host: SyncHost) async throws -> Replica {
        try await pushLosingTheAcknowledgement(url: url, host: host, count: 12)
        let laptop = try replica("laptop", host: host)
        try await laptop.engine.syncNow()
        #expect(try Self.legs(laptop) == (0..<5).map { "P\($0)" })
        let laptopContext = laptop.context()
        for leg in try laptopContext.fetch(FetchDescriptor<Leg>()) where leg.place == "P3" { leg.place = "P3 there" }
        try laptopContext.save()
        try await laptop.engine.syncNow()
        return laptop
    }

    @Test func aPullBringingBackALostPushFindsTheLocalModels() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let url = "sqlite:" + directory.path("phone.sqlite")
        let laptop = try await lostPushChangedElsewhere(url: url, host: host)
        // The replica that lost the acknowledgement pulls the change before it pushes again.
        let phone = try Replica(url: url, host: host)
        try await phone.engine.syncNow()
        try await laptop.engine.syncNow()
        let phoneLegs = try Self.legs(phone)
        #expect(phoneLegs.count == 12, "\(phoneLegs)")
        #expect(try Self.legs(laptop) == phoneLegs)
        #expect(phoneLegs.contains("P3 there") != phoneLegs.contains("P3"), "\(phoneLegs)")
        #expect(try Self.sharedLegs(host) == phoneLegs)
    }

    @Test func aPullBringingBackALostPushOfAModelDeletedHereFindsItDeleted() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let url = "sqlite:" + directory.path("phone.sqlite")
        let laptop = try await lostPushChangedElsewhere(url: url, host: host)
        // Deleted here before the replica pulls the change. The model was never acknowledged, so
        // it has no base to tell an edit there from the value pushed: the delete goes out, as it
        // does for a model whose record the lost push had stored before sending it.
        let phone = try Replica(url: url, host: host)
        let context = phone.context()
        for leg in try context.fetch(FetchDescriptor<Leg>()) where leg.place == "P3" { context.delete(leg) }
        try context.save()
        try await phone.engine.syncNow()
        try await laptop.engine.syncNow()
        #expect(try await phone.engine.syncNow().pulled == 0)
        let expected = (0..<12).map { "P\($0)" }.filter { $0 != "P3" }.sorted()
        #expect(try Self.legs(phone) == expected)
        #expect(try Self.legs(laptop) == expected)
        #expect(try Self.sharedLegs(host) == expected)
    }
}
