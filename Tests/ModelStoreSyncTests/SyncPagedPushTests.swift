import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// A push over many pages: links between models of different pages reach the remote, and the
/// replica does not pull its own push back.
@Suite struct SyncPagedPushTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// Legs before journeys, so a first push reads every leg, each linking to a journey the remote
    /// does not have yet, before any journey.
    static let legsFirst = Schema([Leg.self, Journey.self]).includingSyncMetadata()

    static var smallPages: SyncConfiguration {
        var configuration = SyncConfiguration()
        configuration.pageSize = 7
        return configuration
    }

    func replica(_ name: String, schema: Schema, host: SyncHost) throws -> Replica {
        let container = try ModelContainer(for: schema, url: "sqlite:" + directory.path("\(name).sqlite"))
        let engine = try SyncEngine(
            container: container, transport: InProcessSyncTransport(host: host), configuration: Self.smallPages)
        return Replica(container: container, engine: engine)
    }

    /// Adds journeys `prefix0`... with two legs each.
    func addJourneys(_ prefix: String, count: Int, to replica: Replica) throws {
        let context = replica.context()
        for number in 0..<count {
            let journey = Journey("\(prefix)\(number)", budget: number)
            context.insert(journey)
            for side in ["a", "b"] {
                let leg = Leg("\(prefix)\(number)\(side)")
                context.insert(leg)
                leg.journey = journey
            }
        }
        try context.save()
    }

    @Test(arguments: [false, true])
    func aFirstPushInPagesCarriesEveryLinkAndIsNotPulledBack(legsFirst: Bool) async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let phone = try replica("phone", schema: legsFirst ? Self.legsFirst : Replica.schema, host: host)
        try addJourneys("J", count: 30, to: phone)
        let first = try await phone.engine.syncNow()
        #expect(first.pulled == 0)
        #expect(first.conflicts == 0)
        // Legs that linked to journeys not on the remote yet are pushed again once they are, and
        // count once.
        #expect(first.pushed == 90)

        let shared = ModelContext(host.container)
        let legs = try shared.fetch(FetchDescriptor<Leg>())
        #expect(legs.count == 60)
        #expect(legs.allSatisfy { leg in leg.journey.map { leg.place.hasPrefix($0.name) } ?? false })
        #expect(try shared.fetch(FetchDescriptor<Journey>()).allSatisfy { $0.legs.count == 2 })

        // The replica's own push does not come back, and a second quiet round moves nothing either.
        for _ in 0..<2 {
            let quiet = try await phone.engine.syncNow()
            #expect(quiet.pushed == 0 && quiet.pulled == 0 && quiet.conflicts == 0, "\(quiet)")
        }
        #expect(try phone.journeys().count == 30)

        let laptop = try replica("laptop", schema: Replica.schema, host: host)
        #expect(try await laptop.engine.syncNow().pulled == 90)
        #expect(try laptop.journeys() == phone.journeys())
    }

    @Test func laterPushesInPagesCarryLinksToModelsNewInTheSamePush() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let phone = try replica("phone", schema: Self.legsFirst, host: host)
        try addJourneys("J", count: 5, to: phone)
        _ = try await phone.engine.syncNow()
        let laptop = try replica("laptop", schema: Replica.schema, host: host)
        _ = try await laptop.engine.syncNow()

        // New journeys and legs, and old legs moved to new journeys, in one push of many pages.
        try addJourneys("K", count: 20, to: phone)
        let context = phone.context()
        let moved = try context.fetch(FetchDescriptor<Leg>(predicate: #Predicate { $0.place.starts(with: "J") }))
        let targets = try context.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name.starts(with: "K") }))
        for (leg, journey) in zip(moved, targets) { leg.journey = journey }
        try context.save()
        let round = try await phone.engine.syncNow()
        #expect(round.pulled == 0 && round.conflicts == 0)
        let quiet = try await phone.engine.syncNow()
        #expect(quiet.pushed == 0 && quiet.pulled == 0, "\(quiet)")

        _ = try await laptop.engine.syncNow()
        #expect(try laptop.journeys() == phone.journeys())
        let shared = ModelContext(host.container)
        #expect(try shared.fetch(FetchDescriptor<Leg>()).allSatisfy { $0.journey != nil })
        #expect(try shared.fetchCount(FetchDescriptor<Leg>()) == 50)
    }
}
