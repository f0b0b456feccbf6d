import Foundation
import ModelStore
import ModelStoreSync
import SyncTestModels
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Announcements that carry their changes, through real server processes: a listening engine
/// stores them without a pull; they never hold another owner's rows; a page that does not start at
/// the engine's cursor makes it pull; a client that does not ask for changes gets numbers only.
@Suite(.enabled(if: Database.isConfigured, Database.skipMessage))
struct SyncCarriedChangesTests {
    /// A configuration where only saves and the server's announcements start rounds.
    private static var quiet: SyncConfiguration {
        var configuration = SyncConfiguration()
        configuration.debounce = .milliseconds(10)
        configuration.pollInterval = .seconds(3600)
        return configuration
    }

    /// A client of `subject` whose requests go through `transport`, counted.
    private func client(
        _ name: String, _ fixture: Fixture, subject: String, transport: any SyncTransport
    ) throws -> (Client, CountingSyncTransport) {
        let container = try ModelContainer(
            for: SyncTestSchema.schema, url: "sqlite:" + fixture.directory.appendingPathComponent(name).path)
        let counted = CountingSyncTransport(transport)
        let engine = try SyncEngine(container: container, transport: counted, configuration: Self.quiet)
        return (Client(container: container, engine: engine, owner: subject), counted)
    }

    @Test func aListeningEngineStoresCarriedChangesWithoutPulling() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture)
        let writer = try await fixture.client("writer", subject: "alice", through: server, configuration: Self.quiet)
        let (reader, counted) = try client(
            "reader.sqlite", fixture, subject: "alice",
            transport: HTTPSyncTransport(baseURL: server.baseURL, token: try await fixture.token("alice"), timeout: 10))
        await writer.engine.start()
        await reader.engine.start()
        #expect(
            try await eventually(60) { reader.engine.status.lastSync != nil && writer.engine.status.lastSync != nil })
        // The rounds the change streams' openings start end too.
        let engines = [writer.engine, reader.engine]
        #expect(try await settled(idle: engines) { counted.requests.count })
        let before = counted.requests.count
        let carriedBefore = counted.carriedAnnouncements
        let saves = 5
        for index in 0..<saves {
            try writer.add("note \(index)")
            #expect(try await eventually(60) { try reader.notes().count == index + 1 })
            _ = try await settled(quiet: .milliseconds(300), idle: engines) { counted.requests.count }
        }
        await writer.engine.stop()
        await reader.engine.stop()
        // Every save reached the reader in an announcement, which it stored without a request.
        #expect(counted.carriedAnnouncements - carriedBefore >= saves)
        #expect(Array(counted.requests[before...]) == [], "\(counted.requests[before...])")
        #expect(try reader.notes() == (0..<saves).map { "alice/note \($0):  (0)" })
        #expect(try fixture.sharedNotes() == (0..<saves).map { "alice/note \($0):  (0)" })
    }

    @Test func announcementsCarryNoRowOfAnotherOwner() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture)
        let alice = try await fixture.client("alice", subject: "alice", through: server, configuration: Self.quiet)
        let bob = try await fixture.client("bob", subject: "bob", through: server, configuration: Self.quiet)
        // A listener for bob's replica on the real transport, after a pull that tells the server
        // where that replica stands.
        let transport = HTTPSyncTransport(baseURL: server.baseURL, token: try await fixture.token("bob"), timeout: 10)
        let listener = "bob-listener"
        let session = try await transport.session(replica: listener)
        let cursor = try await transport.pullToEnd(replica: listener, session: session)
        let announcements = try #require(transport.remoteAnnouncements(replica: listener, pageSize: 1000))
        let heard = LockedValue<[SyncAnnouncement]>([])
        let listening = Task { for await announcement in announcements { heard.withLock { $0.append(announcement) } } }
        defer { listening.cancel() }
        try await Task.sleep(for: .milliseconds(500))
        // Both owners save at once, round after round, so that reads of the history hold both.
        for round in 0..<8 {
            try alice.add("alice secret \(round)", body: "alice's body \(round)")
            try bob.add("bob note \(round)")
            async let first = alice.engine.syncNow()
            async let second = bob.engine.syncNow()
            _ = try await (first, second)
        }
        #expect(try await eventually(30) { heard.withLock { $0.filter { $0.changes != nil }.count } >= 1 })
        try await Task.sleep(for: .milliseconds(500))
        let pages = heard.withLock { $0 }.compactMap(\.changes)
        let models = pages.flatMap(\.page.models)
        #expect(models.contains { $0.values != nil }, "bob's own notes arrive")
        // Alice's notes saved between bob's arrive as the pull would answer them: as deletions,
        // without values (bob never held them).
        #expect(models.contains { $0.values == nil })
        for model in models {
            guard let values = model.values else { continue }
            #expect(values["owner"] == .string("bob"), "\(model.globalID) of \(values["owner"] ?? .null)")
            guard case .string(let title)? = values["title"] else {
                Issue.record("\(model.globalID) has no title")
                continue
            }
            #expect(title.hasPrefix("bob note"), "\(title)")
        }
        // Each page starts where the one before ended: the feed kept this replica's place, where
        // its cursor is (a stretch of alice's notes alone is not announced to bob, and is in the next page).
        for (earlier, later) in zip(pages, pages.dropFirst()) {
            #expect(later.after == earlier.page.cursor.transaction)
        }
        #expect(pages.first?.after == cursor.transaction)
        #expect(pages.allSatisfy { $0.remote == session.remote && $0.schemaFingerprint == session.schemaFingerprint })
    }

    @Test func aPageThatDoesNotStartAtTheCursorMakesTheEnginePull() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let listening = try ServerProcess(fixture)
        let other = try ServerProcess(fixture)
        let writer = try await fixture.client("writer", subject: "alice", through: other, configuration: Self.quiet)
        let token = try await fixture.token("alice")
        let split = SplitTransport(
            requests: HTTPSyncTransport(baseURL: listening.baseURL, token: token, timeout: 10),
            announcements: HTTPSyncTransport(baseURL: listening.baseURL, token: token, timeout: 10))
        let (reader, counted) = try client("reader.sqlite", fixture, subject: "alice", transport: split)
        // A listener that keeps the listening process's poller running, so that the reader's
        // stream, when it opens, meets no first read of the history (which tells every listener).
        let keeper = try SyncChangeFeedTests.Signals(HTTPSyncTransport(baseURL: listening.baseURL, token: token))
        #expect(try await eventually(10) { keeper.value >= 2 })
        // The listening process learns where the reader stands from its pull...
        try await reader.engine.syncNow()
        // ...but the reader then pulls a change through the other process, which it does not see.
        let otherTransport = HTTPSyncTransport(baseURL: other.baseURL, token: token, timeout: 10)
        let probe = try await otherTransport.hello(
            SyncHello(replica: "probe", schemaVersion: "1", schemaFingerprint: "x"))
        _ = try await otherTransport.hello(
            SyncHello(replica: "probe", schemaVersion: "1", schemaFingerprint: probe.schemaFingerprint))
        split.send(to: otherTransport)
        try writer.add("first")
        try await writer.engine.syncNow()
        try await reader.engine.syncNow()
        #expect(try reader.notes() == ["alice/first:  (0)"])
        await reader.engine.start()
        #expect(try await eventually(60) { reader.engine.status.lastSync != nil })
        try await Task.sleep(for: .milliseconds(500))
        let pullsBefore = counted.counts["pull", default: 0]
        let carriedBefore = counted.carriedAnnouncements
        try writer.add("second")
        try await writer.engine.syncNow()
        #expect(try await eventually(60) { try reader.notes().count == 2 })
        await reader.engine.stop()
        // The page came from where the listening process last saw the reader, before "first":
        // the reader pulled instead of storing it.
        #expect(keeper.value >= 3)
        #expect(counted.carriedAnnouncements > carriedBefore)
        #expect(counted.counts["pull", default: 0] > pullsBefore, "\(counted.requests)")
        #expect(try reader.notes() == ["alice/first:  (0)", "alice/second:  (0)"])
    }

    @Test func aClientThatDoesNotAskGetsNumbersAndBadQueriesAreRefused() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture)
        let writer = try await fixture.client("writer", subject: "alice", through: server, configuration: Self.quiet)
        let reader = try await fixture.client("reader", subject: "alice", through: server, configuration: Self.quiet)
        try await reader.engine.syncNow()
        await reader.engine.start()  // a listener that carries changes, beside the plain one below
        let token = try await fixture.token("alice")
        let url = server.baseURL.appendingPathComponent("changes").absoluteString
        // An old client's stream (no query), read by curl while notes are saved.
        let plain = try StreamCapture(url, headers: ["Authorization: Bearer \(token)"], in: fixture.directory)
        defer { plain.stop() }
        #expect(try await eventually(30) { plain.isOpen })
        for index in 0..<3 {
            try writer.add("note \(index)")
            try await writer.engine.syncNow()
        }
        #expect(try await eventually(30) { !plain.data.isEmpty })
        let stream = plain.stop()
        #expect(!plain.data.isEmpty && plain.data.allSatisfy { Int64($0) != nil }, "\(stream)")
        #expect(try await eventually(30) { try reader.notes().count == 3 })
        await reader.engine.stop()
        // A stream that asks to carry changes must name a replica its token's subject owns.
        func status(_ query: String, _ subject: String) async throws -> Int {
            var request = URLRequest(url: try #require(URL(string: url + "?" + query)))
            request.setValue("Bearer \(try await fixture.token(subject))", forHTTPHeaderField: "Authorization")
            let (_, response) = try await URLSession.shared.data(for: request)
            return (response as? HTTPURLResponse)?.statusCode ?? 0
        }
        // Alice's token names a replica first (a hello records the owner); Mallory's may not listen for it.
        let claimed = HTTPSyncTransport(baseURL: server.baseURL, token: token, timeout: 10)
        _ = try await claimed.hello(SyncHello(replica: "alice-laptop", schemaVersion: "1", schemaFingerprint: "x"))
        #expect(try await status("carry=1", "alice") == 400)
        #expect(try await status("carry=1&replica=alice-laptop&limit=x", "alice") == 400)
        #expect(try await status("carry=1&replica=alice-laptop", "mallory") == 403)
    }
}

/// A transport whose requests go to one server (which the test can change) and whose change
/// stream comes from another.
final class SplitTransport: SyncTransport {
    private let requests: LockedValue<HTTPSyncTransport>
    private let announcements: HTTPSyncTransport

    init(requests: HTTPSyncTransport, announcements: HTTPSyncTransport) {
        self.requests = LockedValue(requests)
        self.announcements = announcements
    }

    /// Sends the requests from now on through `transport`.
    func send(to transport: HTTPSyncTransport) { requests.withLock { $0 = transport } }

    private var current: HTTPSyncTransport { requests.withLock { $0 } }

    func hello(_ request: SyncHello) async throws -> SyncHelloReply { try await current.hello(request) }
    func push(_ request: SyncPushRequest) async throws -> SyncPushReply { try await current.push(request) }
    func pull(_ request: SyncPullRequest) async throws -> SyncPullReply { try await current.pull(request) }
    func fetch(_ request: SyncFetchRequest) async throws -> [SyncModelState] { try await current.fetch(request) }
    func remoteChanges() -> AsyncStream<Void>? { announcements.remoteChanges() }
    func remoteTransactions() -> AsyncStream<Int64?>? { announcements.remoteTransactions() }
    func remoteAnnouncements(replica: String, pageSize: Int) -> AsyncStream<SyncAnnouncement>? {
        announcements.remoteAnnouncements(replica: replica, pageSize: pageSize)
    }
}
