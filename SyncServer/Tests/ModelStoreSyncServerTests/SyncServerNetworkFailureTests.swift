import Foundation
import ModelStore
import SyncTestModels
import Testing

/// A client in a network namespace of its own, the server in this one, the link between them
/// throttled and cut while a push or a pull is in flight, then restored: nothing acknowledged is
/// lost and nothing is applied twice. And a server killed (SIGKILL) mid-push, then restarted.
@Suite(
    .enabled(if: Database.isConfigured, Database.skipMessage),
    .enabled(if: NetworkNamespace.isAvailable, NetworkNamespace.skipMessage))
struct SyncServerNetworkFailureTests {
    /// The client process built beside the test bundle.
    private static var client: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("sync-test-client").path
    }

    private static let titles = (0..<150).map { "note-\($0)" }
    private static let body = String(repeating: "lorem ipsum ", count: 200)
    /// Four times ``body``: a pull of 150 of them takes about ten seconds over the throttled link,
    /// so the cut always falls inside it, however few requests the engine makes.
    private static let longBody = String(repeating: body, count: 4)

    /// Runs a sync round of `client` in the namespace over a throttled link, cuts the link `after`
    /// into it (the round must fail as transient), restores the link and syncs again: a round must
    /// succeed within three, as a running engine retries a transient failure. (Right after a cut,
    /// on a loaded machine, a round has failed as unreachable though the server's port already
    /// answered from the namespace; the messages of such failures are kept in the expectation.)
    private static func syncCutMidway(_ net: NetworkNamespace, _ client: [String], after delay: Duration) async throws {
        try net.throttle("1mbit")
        let output = Pipe()
        let process = try net.start(client + ["sync"], output: output)
        try await Task.sleep(for: delay)
        try net.link(up: false)
        let first = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(first.contains("failed: unreachable transient"), "the cut round ended with: \(first)")
        try net.link(up: true)
        try net.unthrottle()
        // The round after the cut starts once the link carries traffic again (client[2] is the server's URL).
        let port = try #require(URL(string: client[2])?.port)
        var rounds: [String] = []
        for _ in 0..<3 {
            try await net.waitUntilReachable(port: port)
            rounds.append(try net.inside(client + ["sync"]))
            if rounds.last?.contains("synced") == true { break }
            #expect(rounds.last?.contains("transient") == true, "a round failed for good: \(rounds)")
            try await Task.sleep(for: .seconds(1))
        }
        #expect(rounds.last?.contains("synced") == true, "the rounds after the link came back ended with: \(rounds)")
    }

    @Test func aPushCutMidwayIsRetriedWithoutLossOrDuplicates() async throws {
        let net = try NetworkNamespace()
        defer { net.remove() }
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture, host: net.hostAddress)
        let tokenFile = try await fixture.tokenFile("alice")
        let store = "sqlite:" + fixture.directory.appendingPathComponent("far.sqlite").path
        let client = [Self.client, store, server.baseURL.absoluteString, tokenFile.path, "4"]
        // Notes with long bodies, so the push takes seconds over the throttled link: about fifteen,
        // so the cut falls inside it even when this process's timer fires seconds late (a full
        // parallel run on two cores delays it that much).
        let local = try ModelContainer(for: SyncTestSchema.schema, url: store)
        let context = ModelContext(local)
        for title in Self.titles { context.insert(Note(owner: "alice", title: title, body: Self.longBody)) }
        try context.save()
        try await Self.syncCutMidway(net, client, after: .milliseconds(1200))
        let shared = try fixture.sharedNotes()
        #expect(shared.count == Self.titles.count)
        #expect(Set(shared).count == shared.count)
        #expect(try SyncTestSchema.notes(in: local) == shared)
    }

    @Test func aPullCutMidwayIsResumedWithoutLossOrDuplicates() async throws {
        let net = try NetworkNamespace()
        defer { net.remove() }
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture, host: net.hostAddress)
        let writer = try await fixture.client("writer", subject: "alice", through: server)
        try writer.add(Self.titles[0], body: Self.longBody)
        for title in Self.titles.dropFirst() { try writer.add(title, body: Self.longBody) }
        try await writer.engine.syncNow()

        let tokenFile = try await fixture.tokenFile("alice")
        let store = "json:" + fixture.directory.appendingPathComponent("far.json").path
        let client = [Self.client, store, server.baseURL.absoluteString, tokenFile.path, "4"]
        try await Self.syncCutMidway(net, client, after: .milliseconds(1500))
        let pulled = try net.inside(client + ["list"]).split(separator: "\n").map(String.init)
        #expect(pulled == (try fixture.sharedNotes()))
        #expect(pulled.count == Self.titles.count)
    }
}
