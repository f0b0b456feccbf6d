import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// The transport to an in-process host that notes every request, and whose host a test can swap,
/// as a server whose address was pointed elsewhere or whose schema changed between rounds.
final class RecordingTransport: SyncTransport {
    private let state: LockedValue<(host: SyncHost, requests: [String], pushes: [SyncPushRequest])>

    init(host: SyncHost) { state = LockedValue((host, [], [])) }

    /// The requests so far, by path (`hello`, `push`, `push+pull`, `pull`, `fetch`).
    var requests: [String] { state.withLock { $0.requests } }
    /// The push requests so far.
    var pushes: [SyncPushRequest] { state.withLock { $0.pushes } }

    func point(at host: SyncHost) { state.withLock { $0.host = host } }

    private func inner(noting request: String) -> InProcessSyncTransport {
        state.withLock { state in
            state.requests.append(request)
            return InProcessSyncTransport(host: state.host)
        }
    }

    func hello(_ request: SyncHello) async throws -> SyncHelloReply {
        try await inner(noting: "hello").hello(request)
    }

    func push(_ request: SyncPushRequest) async throws -> SyncPushReply {
        state.withLock { $0.pushes.append(request) }
        return try await inner(noting: request.pull == nil ? "push" : "push+pull").push(request)
    }

    func pull(_ request: SyncPullRequest) async throws -> SyncPullReply {
        try await inner(noting: "pull").pull(request)
    }

    func fetch(_ request: SyncFetchRequest) async throws -> [SyncModelState] {
        try await inner(noting: "fetch").fetch(request)
    }
}

/// An engine says hello once and sends what it learned with every later request; the remote
/// refuses a request whose session names another store or schema; a round after a local save
/// pushes first, with its pull in the same request.
@Suite struct SyncSessionTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    private func save(_ replica: Replica, _ names: String...) throws {
        let context = replica.context()
        for name in names { context.insert(Journey(name)) }
        try context.save()
    }

    @Test func anEngineSaysHelloOnceAndSendsItsSessionWithEveryRequest() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let transport = RecordingTransport(host: host)
        let container = try ModelContainer(for: Replica.schema, url: "sqlite:" + directory.path("a.sqlite"))
        let a = Replica(container: container, engine: try SyncEngine(container: container, transport: transport))
        try await a.engine.syncNow()
        try save(a, "Oslo")
        try await a.engine.syncNow()
        try save(a, "Bergen")
        try await a.engine.syncNow()
        #expect(transport.requests.filter { $0 == "hello" }.count == 1, "\(transport.requests)")
        #expect(transport.pushes.count == 2)
        let fingerprint = try host.hello(SyncHello(replica: "x", schemaVersion: "", schemaFingerprint: ""))
        for push in transport.pushes {
            #expect(push.session?.remote == fingerprint.remote)
            #expect(push.session?.schemaFingerprint == fingerprint.schemaFingerprint)
        }
        let b = try Replica(url: "sqlite:" + directory.path("b.sqlite"), host: host)
        #expect(try await b.journeysAfterSync() == ["Bergen: 0  []", "Oslo: 0  []"])
    }

    @Test func aRequestForAnotherSchemaOrStoreIsRefusedAndStoresNothing() async throws {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let reply = try host.hello(SyncHello(replica: "r1", schemaVersion: "", schemaFingerprint: ""))
        let change = SyncChange(
            globalID: "g1", entity: "Journey", kind: .insert, values: ["name": .string("Oslo")],
            stamp: SyncStamp(milliseconds: 1, counter: 0, replica: "r1"))
        let otherSchema = SyncSession(remote: reply.remote, schemaFingerprint: "0000")
        let push = #expect(throws: SyncError.self) {
            try host.push(SyncPushRequest(replica: "r1", changes: [change], session: otherSchema))
        }
        #expect(push?.code == .schemaMismatch)
        #expect(push?.isTransient == false)
        #expect(push?.message.contains("the push of replica 'r1' was refused") == true, "\(String(describing: push))")
        #expect(push?.message.contains("'\(reply.remote)'") == true)
        #expect(push?.remedy?.contains("nothing was stored") == true)
        let pull = #expect(throws: SyncError.self) {
            try host.pull(SyncPullRequest(replica: "r1", cursor: .start, limit: 10, session: otherSchema))
        }
        #expect(pull?.code == .schemaMismatch)
        #expect(pull?.message.contains("the pull of replica 'r1'") == true)
        let fetch = #expect(throws: SyncError.self) {
            try host.fetch(SyncFetchRequest(globalIDs: ["g1"], session: otherSchema))
        }
        #expect(fetch?.code == .schemaMismatch)

        let otherStore = SyncSession(remote: "elsewhere", schemaFingerprint: reply.schemaFingerprint)
        let moved = #expect(throws: SyncError.self) {
            try host.push(SyncPushRequest(replica: "r1", changes: [change], session: otherStore))
        }
        #expect(moved?.code == .remoteChanged)
        #expect(moved?.isTransient == true)
        #expect(moved?.message.contains("'elsewhere'") == true)
        #expect(try SharedJourneys.names(in: host.container).isEmpty)

        // The session the hello gives passes; a request without one (a replica that says hello
        // every round) is not checked.
        let good = SyncSession(remote: reply.remote, schemaFingerprint: reply.schemaFingerprint)
        #expect(try host.push(SyncPushRequest(replica: "r1", changes: [change], session: good)).applied)
        #expect(try host.pull(SyncPullRequest(replica: "r2", cursor: .start, limit: 10)).models.count == 1)
    }

    @Test func aSchemaChangedAfterTheHelloStopsTheRoundSayingWhichSideIsBehind() async throws {
        let url = "sqlite:" + directory.path("shared.sqlite")
        let transport = RecordingTransport(host: try makeHost(url: url))
        let container = try ModelContainer(for: Replica.schema, url: "sqlite:" + directory.path("a.sqlite"))
        let a = Replica(container: container, engine: try SyncEngine(container: container, transport: transport))
        try save(a, "Oslo")
        try await a.engine.syncNow()
        // The shared store is migrated to a newer schema between two rounds.
        let newer = Schema([Journey.self, Leg.self, Traveller.self], version: Schema.Version(2, 0, 0))
        let migrated = try SyncHost(container: ModelContainer(for: newer.includingSyncMetadata(), url: url))
        transport.point(at: migrated)
        try save(a, "Bergen")
        let before = transport.requests.count
        let error = await #expect(throws: SyncError.self) { try await a.engine.syncNow() }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.message.contains("is behind the remote (version 2.0.0)") == true, "\(String(describing: error))")
        #expect(error?.remedy?.contains("Migrate") == true)
        // Refused at the first request after the hello; a new hello said which side is behind.
        #expect(Array(transport.requests[before...]) == ["pull", "hello"])
        #expect(
            try SharedJourneys.names(in: migrated.container) == ["Oslo"],
            "nothing of the refused round was stored")
    }

    @Test func aRemoteServingAnotherStoreIsGreetedAgainAndSyncedWith() async throws {
        let transport = RecordingTransport(host: try makeHost(url: "sqlite:" + directory.path("first.sqlite")))
        let container = try ModelContainer(for: Replica.schema, url: "sqlite:" + directory.path("a.sqlite"))
        let a = Replica(container: container, engine: try SyncEngine(container: container, transport: transport))
        try save(a, "Oslo")
        try await a.engine.syncNow()
        let second = try makeHost(url: "sqlite:" + directory.path("second.sqlite"))
        let c = try Replica(url: "sqlite:" + directory.path("c.sqlite"), host: second)
        try save(c, "Bergen")
        try await c.engine.syncNow()
        transport.point(at: second)
        let before = transport.requests.count
        try await a.engine.syncNow()
        // Refused at the pull, greeted again, then read whole from its start.
        #expect(Array(transport.requests[before...].prefix(3)) == ["pull", "hello", "pull"], "\(transport.requests)")
        #expect(try a.journeys() == ["Bergen: 0  []", "Oslo: 0  []"])
    }

    @Test func aRoundAfterALocalSavePushesFirstAndPullsInTheSameRequest() async throws {
        var quick = SyncConfiguration()
        quick.debounce = .milliseconds(10)
        quick.pollInterval = .seconds(600)
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let b = try Replica(url: "sqlite:" + directory.path("b.sqlite"), host: host)
        try await b.engine.syncNow()
        let transport = RecordingTransport(host: host)  // announces nothing: only saves start rounds
        let container = try ModelContainer(for: Replica.schema, url: "sqlite:" + directory.path("a.sqlite"))
        let a = Replica(
            container: container,
            engine: try SyncEngine(container: container, transport: transport, configuration: quick))
        await a.engine.start()
        #expect(
            try await eventually { a.engine.status.lastSync != nil },
            "the first round: \(String(describing: a.engine.status.lastError)), requests \(transport.requests)")
        try save(b, "Tromsø")
        try await b.engine.syncNow()
        let before = transport.requests.count
        try save(a, "Oslo")
        #expect(try await eventually { (try? SharedJourneys.names(in: host.container)) == ["Oslo", "Tromsø"] })
        #expect(try await eventually { (try? a.journeys()) == ["Oslo: 0  []", "Tromsø: 0  []"] })
        await a.engine.stop()
        // One request: the push, and B's model in its answer.
        #expect(
            Array(transport.requests[before...]) == ["push+pull"],
            "\(String(describing: a.engine.status.lastError)), requests \(transport.requests)")
    }
}

extension Replica {
    /// The journeys after one round of this replica.
    func journeysAfterSync() async throws -> [String] {
        try await engine.syncNow()
        return try journeys()
    }
}

/// Reading what a shared container holds.
enum SharedJourneys {
    /// The names of the journeys in `container`, sorted.
    static func names(in container: ModelContainer) throws -> [String] {
        try ModelContext(container).fetch(FetchDescriptor<Journey>()).map(\.name).sorted()
    }
}

/// Waits up to `seconds` for `condition`.
///
/// The engine's rounds run as tasks on the concurrency pool, which the whole test run shares: on a
/// busy two-core machine the pool's threads can be taken by other suites' synchronous tests for
/// over a minute, so the wait is long. A condition that holds returns at once.
private func eventually(_ seconds: Double = 300, _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(20))
    }
    return try condition()
}
