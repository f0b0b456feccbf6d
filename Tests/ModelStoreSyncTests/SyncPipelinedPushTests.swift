import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSync

/// The transport to an in-process host that keeps every push request it forwards and how many
/// were out at once, and can fail one: the request numbered `failing` (from 1) throws a transient
/// error, after the host stored it when `stored`, before when not. `beforeFirst` runs before the
/// first push request is forwarded (another replica's push meanwhile).
final class PushCountingTransport: SyncTransport {
    /// The error a failed request raises.
    struct Failed: Error {}

    private let inner: InProcessSyncTransport
    private let failing: Int?
    private let stored: Bool
    private let beforeFirst: (@Sendable () async throws -> Void)?
    /// Every push request so far, in the order they arrived.
    let requests = LockedValue<[SyncPushRequest]>([])
    private let out = LockedValue(0)
    /// The most push requests that were out at one time.
    let mostOut = LockedValue(0)

    init(
        host: SyncHost, failing: Int? = nil, stored: Bool = false,
        beforeFirst: (@Sendable () async throws -> Void)? = nil
    ) {
        inner = InProcessSyncTransport(host: host)
        self.failing = failing
        self.stored = stored
        self.beforeFirst = beforeFirst
    }

    func hello(_ request: SyncHello) async throws -> SyncHelloReply { try await inner.hello(request) }

    func push(_ request: SyncPushRequest) async throws -> SyncPushReply {
        let number = requests.withLock { requests in
            requests.append(request)
            return requests.count
        }
        let now = out.withLock { out in
            out += 1
            return out
        }
        mostOut.withLock { $0 = max($0, now) }
        defer { out.withLock { $0 -= 1 } }
        if number == 1, let beforeFirst { try await beforeFirst() }
        // Gives the engine time to run ahead, if it would.
        try await Task.sleep(for: .milliseconds(2))
        guard number == failing else { return try await inner.push(request) }
        if stored { _ = try await inner.push(request) }
        throw SyncError(.unreachable, "push request \(number) failed", isTransient: true)
    }

    func pull(_ request: SyncPullRequest) async throws -> SyncPullReply { try await inner.pull(request) }

    func fetch(_ request: SyncFetchRequest) async throws -> [SyncModelState] { try await inner.fetch(request) }

    /// How many times each global identifier was sent.
    func sends() -> [String: Int] {
        requests.withLock { requests in
            requests.flatMap(\.changes).reduce(into: [:]) { counts, change in counts[change.globalID, default: 0] += 1 }
        }
    }
}

/// A first push is pipelined: the engine reads and makes ready the next page while the remote
/// applies one, and stores one page's acknowledgement while the remote applies the next. These
/// tests hold it to what a push one page at a time guarantees: one request out at a time, every
/// model sent once (links into the page still in flight included), a model the remote folds into
/// one of its own linked to under the remote's identifier, and nothing sent after a failure.
@Suite struct SyncPipelinedPushTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// The global identifiers of the records of `container`, by entity, checking that no global
    /// identifier and no model has two records and, on a replica (`replica`), that every record
    /// holds the values the remote was last known to have (a host keeps none).
    static func records(of container: ModelContainer, replica: Bool = true) throws -> [String: Set<String>] {
        let store = SyncStore(store: container.stores[0], schema: container.schema, author: "test")
        var globals: [String: Set<String>] = [:]
        for entity in ["Journey", "Leg"] {
            let records = try store.fetch(SyncMetadata.recordEntityName(for: entity)).map(SyncRecord.init)
            let ids = records.map(\.globalID)
            #expect(Set(ids).count == ids.count, "\(entity): a global identifier with two records")
            let models = records.compactMap(\.model)
            #expect(Set(models).count == models.count, "\(entity): a model with two records")
            #expect(!replica || records.allSatisfy { $0.base != nil }, "\(entity): a record without a base")
            globals[entity] = Set(ids)
        }
        return globals
    }

    static var pagesOfSeven: SyncConfiguration {
        var configuration = SyncConfiguration()
        configuration.pageSize = 7
        return configuration
    }

    /// Ten journeys (pages of 7 and 3), then legs linking to the last three, so the first page of
    /// legs is made ready while the page holding its journeys is still with the remote.
    func phone(host: SyncHost, transport: PushCountingTransport) throws -> Replica {
        let container = try ModelContainer(for: Replica.schema, url: "sqlite:" + directory.path("phone.sqlite"))
        let engine = try SyncEngine(container: container, transport: transport, configuration: Self.pagesOfSeven)
        let phone = Replica(container: container, engine: engine)
        let context = phone.context()
        var journeys: [Journey] = []
        for number in 0..<10 {
            let journey = Journey("J\(number)", budget: number)
            context.insert(journey)
            journeys.append(journey)
        }
        try context.save()
        for number in 0..<14 {
            let leg = Leg("L\(number)")
            context.insert(leg)
            leg.journey = journeys[7 + number % 3]
        }
        try context.save()
        return phone
    }

    @Test func linksIntoThePageInFlightAreSentWithTheirModelsOnce() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let transport = PushCountingTransport(host: host)
        let phone = try phone(host: host, transport: transport)

        let first = try await phone.engine.syncNow()
        #expect(first.pushed == 24)
        #expect(first.conflicts == 0)
        // Pages of 7, 3, 7 and 7: none waited for a link's target and was sent again.
        #expect(transport.requests.withLock { $0.map(\.changes.count) } == [7, 3, 7, 7])
        #expect(transport.sends().values.allSatisfy { $0 == 1 })
        #expect(transport.sends().count == 24)
        #expect(transport.mostOut.withLock { $0 } == 1)

        let shared = ModelContext(host.container)
        let legs = try shared.fetch(FetchDescriptor<Leg>())
        #expect(legs.count == 14)
        for leg in legs {
            let number = try #require(Int(leg.place.dropFirst()))
            let linked = leg.journey?.name ?? "nothing"
            #expect(linked == "J\(7 + number % 3)", "\(leg.place) links to \(linked)")
        }
        let quiet = try await phone.engine.syncNow()
        #expect(quiet.pushed == 0 && quiet.pulled == 0 && quiet.conflicts == 0, "\(quiet)")
        #expect(try phone.journeys() == Replica(container: host.container, engine: phone.engine).journeys())
        let records = try Self.records(of: phone.container)
        #expect(records.mapValues(\.count) == ["Journey": 10, "Leg": 14])
        #expect(try Self.records(of: host.container, replica: false) == records)
    }

    /// Legs before journeys: the second page of legs links to the journeys of the page after it,
    /// the first to those of the last page. The records a page of legs makes for those journeys
    /// are the ones the journeys' own page acknowledges, though it was made ready before the legs'
    /// acknowledgement stored them.
    static func journeyOfLeg(_ number: Int) -> Int { number < 7 ? 7 + number % 3 : number - 7 }

    @Test func recordsMadeForTheNextPagesModelsAreTheirOnlyRecords() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let transport = PushCountingTransport(host: host)
        let legsFirst = Schema([Leg.self, Journey.self]).includingSyncMetadata()
        let container = try ModelContainer(for: legsFirst, url: "sqlite:" + directory.path("phone.sqlite"))
        let engine = try SyncEngine(container: container, transport: transport, configuration: Self.pagesOfSeven)
        let context = ModelContext(container)
        var journeys: [Journey] = []
        for number in 0..<10 {
            let journey = Journey("J\(number)", budget: number)
            context.insert(journey)
            journeys.append(journey)
        }
        for number in 0..<14 {
            let leg = Leg("L\(number)")
            context.insert(leg)
            leg.journey = journeys[Self.journeyOfLeg(number)]
        }
        try context.save()

        let first = try await engine.syncNow()
        #expect(first.pushed == 24)
        #expect(transport.mostOut.withLock { $0 } == 1)
        let quiet = try await engine.syncNow()
        #expect(quiet.pushed == 0 && quiet.pulled == 0 && quiet.conflicts == 0, "\(quiet)")
        let records = try Self.records(of: container)
        #expect(records.mapValues(\.count) == ["Journey": 10, "Leg": 14])
        #expect(try Self.records(of: host.container, replica: false) == records)
        let legs = try ModelContext(host.container).fetch(FetchDescriptor<Leg>())
        #expect(legs.count == 14)
        for leg in legs {
            let number = try #require(Int(leg.place.dropFirst()))
            #expect(
                leg.journey?.name == "J\(Self.journeyOfLeg(number))",
                "\(leg.place) links to \(leg.journey?.name ?? "nothing")")
        }
    }

    @Test func aModelTheRemoteFoldsIntoItsOwnIsLinkedUnderTheRemotesIdentifier() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let laptop = try Replica(url: "sqlite:" + directory.path("laptop.sqlite"), host: host)
        let laptopContext = laptop.context()
        let j8 = Journey("J8", budget: 80)
        laptopContext.insert(j8)
        let walk = Leg("laptop walk")
        laptopContext.insert(walk)
        walk.journey = j8
        try laptopContext.save()
        // The laptop pushes its J8 while the phone's first page is on its way: the phone has pulled
        // already, so the remote folds the phone's J8 (second page) into the laptop's, while the
        // first page of legs, linking to it, is already made ready.
        let laptopEngine = laptop.engine
        let transport = PushCountingTransport(host: host) {
            let pushed = try await laptopEngine.syncNow().pushed
            #expect(pushed == 2)
        }
        let phone = try phone(host: host, transport: transport)
        let first = try await phone.engine.syncNow()
        #expect(first.pushed == 24)
        #expect(transport.requests.withLock { $0.prefix(4).map(\.changes.count) } == [7, 3, 7, 7])

        let shared = ModelContext(host.container)
        let journeys = try shared.fetch(FetchDescriptor<Journey>(predicate: #Predicate { $0.name == "J8" }))
        #expect(journeys.count == 1)
        let places = try #require(journeys.first).legs.map(\.place).sorted()
        let expected = (["laptop walk"] + (0..<14).filter { $0 % 3 == 1 }.map { "L\($0)" }).sorted()
        #expect(places == expected)

        // The legs' bases name the laptop's J8, as the remote stored them: only the phone's J8,
        // which differs from the laptop's, is pushed again.
        let before = transport.requests.withLock { $0.count }
        _ = try await phone.engine.syncNow()
        let again = transport.requests.withLock { $0.dropFirst(before).flatMap(\.changes) }
        #expect(again.map(\.entity) == ["Journey"], "\(again.map { "\($0.entity) \($0.kind)" })")
        _ = try await laptop.engine.syncNow()
        _ = try await phone.engine.syncNow()
        let remote = Replica(container: host.container, engine: laptop.engine)
        #expect(try phone.journeys() == remote.journeys())
        #expect(try laptop.journeys() == remote.journeys())
        #expect(try Self.records(of: phone.container) == Self.records(of: host.container, replica: false))
    }

    @Test(arguments: [false, true])
    func nothingIsSentAfterAFailedPageAndTheNextRoundDoublesNothing(stored: Bool) async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let transport = PushCountingTransport(host: host, failing: 3, stored: stored)
        let phone = try phone(host: host, transport: transport)

        await #expect(throws: SyncError.self) { try await phone.engine.syncNow() }
        // The fourth page was made ready while the third was out, and never sent.
        #expect(transport.requests.withLock { $0.count } == 3)
        #expect(transport.mostOut.withLock { $0 } == 1)

        let second = try await phone.engine.syncNow()
        #expect(second.conflicts == 0)
        let shared = ModelContext(host.container)
        #expect(try shared.fetchCount(FetchDescriptor<Journey>()) == 10)
        let legs = try shared.fetch(FetchDescriptor<Leg>())
        #expect(legs.count == 14)
        #expect(legs.allSatisfy { $0.journey != nil })
        let quiet = try await phone.engine.syncNow()
        #expect(quiet.pushed == 0 && quiet.pulled == 0, "\(quiet)")
        #expect(try phone.journeys() == Replica(container: host.container, engine: phone.engine).journeys())
        #expect(try Self.records(of: phone.container).mapValues(\.count) == ["Journey": 10, "Leg": 14])
    }
}
