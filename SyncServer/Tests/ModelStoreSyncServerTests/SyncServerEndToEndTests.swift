import Foundation
import ModelStore
import ModelStoreSync
import SyncTestModels
import Testing

/// Clients with local SQLite and JSON stores syncing through two real server processes on one
/// PostgreSQL database, over loopback HTTP.
@Suite(.enabled(if: Database.isConfigured, Database.skipMessage))
struct SyncServerEndToEndTests {
    @Test func clientsOfTwoServerProcessesConvergeOnOneDatabase() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let first = try ServerProcess(fixture)
        let second = try ServerProcess(fixture)
        let phone = try await fixture.client("phone", subject: "alice", through: first)
        let laptop = try await fixture.client("laptop", scheme: "json", subject: "alice", through: second)

        try phone.add("groceries", "books", body: "draft")
        try await phone.engine.syncNow()
        try await laptop.engine.syncNow()
        #expect(try laptop.notes() == ["alice/books: draft (0)", "alice/groceries: draft (0)"])

        // Both edit offline, different properties of one note and one note each; then sync.
        try phone.edit("books") { $0.body = "read Dune" }
        try laptop.edit("books") { $0.edits = 3 }
        try laptop.add("travel", body: "Lisbon")
        try await phone.engine.syncNow()
        try await laptop.engine.syncNow()
        try await phone.engine.syncNow()
        let expected = ["alice/books: read Dune (3)", "alice/groceries: draft (0)", "alice/travel: Lisbon (0)"]
        #expect(try phone.notes() == expected)
        #expect(try laptop.notes() == expected)
        #expect(try fixture.sharedNotes() == expected)
    }

    @Test func theLiveChannelOfOneProcessAnnouncesAPushThroughAnother() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let first = try ServerProcess(fixture)
        let second = try ServerProcess(fixture)
        let writer = try await fixture.client("writer", subject: "alice", through: first)
        var quiet = SyncConfiguration()
        quiet.pollInterval = .seconds(3600)  // only the server's announcement can start a round
        let reader = try await fixture.client("reader", subject: "alice", through: second, configuration: quiet)
        try await reader.engine.syncNow()
        await reader.engine.start()
        defer { Task { await reader.engine.stop() } }
        try await Task.sleep(for: .milliseconds(500))  // the change stream is open

        try writer.add("announced")
        try await writer.engine.syncNow()
        #expect(try await eventually(10) { try reader.notes() == ["alice/announced:  (0)"] })
    }

    @Test func aClientPullsOnlyItsOwnNotesAndCannotWriteAnothers() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture)
        let alice = try await fixture.client("alice", subject: "alice", through: server)
        let bob = try await fixture.client("bob", subject: "bob", through: server)
        try alice.add("alice's diary", body: "private words")
        try await alice.engine.syncNow()
        try bob.add("bob's list")
        try await bob.engine.syncNow()
        #expect(try bob.notes() == ["bob/bob's list:  (0)"])

        // Bob saves a note in Alice's name: the push is refused whole, and nothing of it is stored.
        let context = ModelContext(bob.container)
        context.insert(Note(owner: "alice", title: "forged"))
        context.insert(Note(owner: "bob", title: "in the same push"))
        try context.save()
        let refusal = await #expect(throws: SyncError.self) { try await bob.engine.syncNow() }
        #expect(refusal?.code == .refused)
        #expect(refusal?.isTransient == false)
        #expect(refusal?.message.contains("outside this replica's scope") == true)
        #expect(
            try fixture.sharedNotes() == ["alice/alice's diary: private words (0)", "bob/bob's list:  (0)"])
        #expect(!server.log.contains("private words"))
    }
}

/// A server process killed (SIGKILL) while a push is in flight: the client's round fails as
/// transient, and the next round through another process stores every note exactly once.
@Suite(.enabled(if: Database.isConfigured, Database.skipMessage))
struct SyncServerKillTests {
    @Test func aServerKilledMidPushLosesNothingAndAppliesNothingTwice() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let doomed = try ServerProcess(fixture)
        let client = try await fixture.client("phone", subject: "alice", through: doomed)
        let titles = (0..<1500).map { "note-\($0)" }
        let context = ModelContext(client.container)
        for title in titles { context.insert(Note(owner: "alice", title: title, body: "text of \(title)")) }
        try context.save()
        let round = Task { try await client.engine.syncNow() }
        // Kill once the push has reached the server (its log shows the push line) or after 2 s.
        _ = try await eventually(2) { doomed.log.contains("push") }
        doomed.stop(SIGKILL)
        let outcome = await round.result
        if case .failure(let error) = outcome {
            #expect((error as? SyncError)?.isTransient == true, "the killed round failed with \(error)")
        }

        let replacement = try ServerProcess(fixture)
        let transport = HTTPSyncTransport(
            baseURL: replacement.baseURL, token: try await fixture.token("alice"), timeout: 30)
        let engine = try SyncEngine(container: client.container, transport: transport)
        try await engine.syncNow()
        let shared = try fixture.sharedNotes()
        #expect(shared.count == titles.count)
        #expect(Set(shared).count == shared.count)
        #expect(try client.notes() == shared)
    }
}
