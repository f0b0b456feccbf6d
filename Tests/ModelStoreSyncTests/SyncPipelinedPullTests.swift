import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSync

/// The transport to an in-process host that counts pull requests and keeps the cursors they asked
/// from. It can spoil one page: the pull reply numbered `spoiling` (from 1) names an entity the
/// replica does not have, so its merge fails. And it can run `before` once, before it forwards the
/// pull numbered `beforePull` (a save of the app while a round is under way).
final class PullCountingTransport: SyncTransport {
    private let inner: InProcessSyncTransport
    private let spoiling: Int?
    private let beforePull: Int?
    private let before: (@Sendable () throws -> Void)?
    /// How many pull requests arrived so far.
    let pulls = LockedValue(0)
    /// The cursors the pull requests asked from, in order.
    let cursors = LockedValue<[SyncCursor]>([])

    init(
        host: SyncHost, spoiling: Int? = nil, beforePull: Int? = nil, before: (@Sendable () throws -> Void)? = nil
    ) {
        inner = InProcessSyncTransport(host: host)
        self.spoiling = spoiling
        self.beforePull = beforePull
        self.before = before
    }

    func hello(_ request: SyncHello) async throws -> SyncHelloReply { try await inner.hello(request) }

    func push(_ request: SyncPushRequest) async throws -> SyncPushReply { try await inner.push(request) }

    func pull(_ request: SyncPullRequest) async throws -> SyncPullReply {
        let number = pulls.withLock { pulls in
            pulls += 1
            return pulls
        }
        cursors.withLock { $0.append(request.cursor) }
        if number == beforePull, let before { try before() }
        var reply = try await inner.pull(request)
        if number == spoiling, !reply.models.isEmpty { reply.models[0].entity = "NoSuchEntity" }
        return reply
    }

    func fetch(_ request: SyncFetchRequest) async throws -> [SyncModelState] { try await inner.fetch(request) }
}

/// A pull of many pages reads the next page while the replica merges the one before it, and still
/// stores the pages one at a time, in order: a merge that fails drops the page read ahead, and the
/// next round reads it again, so every model arrives once.
@Suite struct SyncPipelinedPullTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// A shared store holding `count` journeys, pushed by another replica.
    func sharedStore(_ count: Int) async throws -> SyncHost {
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let writer = try Replica(url: "memory:", host: host)
        let context = writer.context()
        for number in 0..<count { context.insert(Journey(String(format: "j%03d", number), budget: number)) }
        try context.save()
        try await writer.engine.syncNow()
        return host
    }

    func replica(_ transport: PullCountingTransport, url: String) throws -> (ModelContainer, SyncEngine) {
        let container = try ModelContainer(for: Replica.schema, url: url)
        var configuration = SyncConfiguration()
        configuration.pageSize = 10
        return (container, try SyncEngine(container: container, transport: transport, configuration: configuration))
    }

    @Test func everyPageArrivesOnceAndEachIsAskedFromTheCursorBeforeIt() async throws {
        let host = try await sharedStore(95)
        let transport = PullCountingTransport(host: host)
        let (container, engine) = try replica(transport, url: "sqlite:" + directory.path("a.sqlite"))
        #expect(try await engine.syncNow().pulled == 95)
        let names = try ModelContext(container).fetch(FetchDescriptor<Journey>()).map(\.name)
        #expect(names.sorted() == (0..<95).map { String(format: "j%03d", $0) })
        // Each page asked once, from the cursor the page before it carried.
        let cursors = transport.cursors.withLock { $0 }
        #expect(cursors.count >= 10)
        #expect(Set(cursors.map { "\($0)" }).count == cursors.count)
        #expect(try await engine.syncNow().pulled == 0)
    }

    @Test func aMergeThatFailsDropsThePageReadAheadAndTheNextRoundReadsItAgain() async throws {
        let host = try await sharedStore(95)
        let url = "sqlite:" + directory.path("b.sqlite")
        do {
            let transport = PullCountingTransport(host: host, spoiling: 4)
            let (container, engine) = try replica(transport, url: url)
            await #expect(throws: (any Error).self) { try await engine.syncNow() }
            // The three pages before the spoiled one are stored; the one read ahead of it is not.
            #expect(try ModelContext(container).fetchCount(FetchDescriptor<Journey>()) == 30)
        }
        let transport = PullCountingTransport(host: host)
        let (container, engine) = try replica(transport, url: url)
        #expect(try await engine.syncNow().pulled == 65)
        let names = try ModelContext(container).fetch(FetchDescriptor<Journey>()).map(\.name)
        #expect(names.sorted() == (0..<95).map { String(format: "j%03d", $0) })
        // The round went on from the cursor the third page stored (seven pages of the ten are left),
        // not from the start.
        #expect(transport.pulls.withLock { $0 } <= 8)
    }
}
