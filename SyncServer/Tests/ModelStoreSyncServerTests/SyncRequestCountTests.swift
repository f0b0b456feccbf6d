import Foundation
import ModelStore
import ModelStoreSync
import SyncTestModels
import Testing

/// The requests an engine makes through the real HTTP transport to a real server: one hello per
/// engine, and one request for a save (its push, carrying the pull); after the hello, the server
/// refuses a request of another schema and the engine says which side is behind.
@Suite(.enabled(if: Database.isConfigured, Database.skipMessage))
struct SyncRequestCountTests {
    /// A client of `subject` through `server` whose requests are counted.
    private func countedClient(
        _ name: String, _ fixture: Fixture, subject: String, through server: ServerProcess
    ) async throws -> (Client, CountingSyncTransport) {
        var configuration = SyncConfiguration()
        configuration.debounce = .milliseconds(10)
        configuration.pollInterval = .seconds(3600)  // saves and the server's announcements start rounds
        let container = try ModelContainer(
            for: SyncTestSchema.schema, url: "sqlite:" + fixture.directory.appendingPathComponent(name).path)
        let transport = CountingSyncTransport(
            HTTPSyncTransport(baseURL: server.baseURL, token: try await fixture.token(subject), timeout: 10))
        let engine = try SyncEngine(container: container, transport: transport, configuration: configuration)
        return (Client(container: container, engine: engine, owner: subject), transport)
    }

    @Test func aSaveCostsOnePushCarryingItsPullAndTheEngineSaysHelloOnce() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let server = try ServerProcess(fixture)
        let (writer, counted) = try await countedClient("writer.sqlite", fixture, subject: "alice", through: server)
        let reader = try await fixture.client("reader", subject: "alice", through: server)
        await writer.engine.start()
        await reader.engine.start()
        #expect(try await eventually(60) { writer.engine.status.lastSync != nil })
        // The round the change stream's opening starts ends too.
        let engines = [writer.engine, reader.engine]
        #expect(try await settled(idle: engines) { counted.requests.count })
        let before = counted.requests.count
        let saves = 5
        for index in 0..<saves {
            try writer.add("note \(index)")
            #expect(try await eventually(60) { try reader.notes().count == index + 1 })
            // The writer's round for the server's announcement of its own push, if any, ends.
            _ = try await settled(quiet: .milliseconds(300), idle: engines) { counted.requests.count }
        }
        await writer.engine.stop()
        await reader.engine.stop()
        let requests = Array(counted.requests[before...])
        let kinds = Dictionary(requests.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(counted.requests.filter { $0 == "hello" }.count == 1, "\(counted.requests)")
        // Each save leaves in a push that carries the pull (a save made while a round for an
        // announcement runs may leave in that round's push, which pulled before it).
        #expect(kinds["push+pull", default: 0] + kinds["push", default: 0] == saves, "\(requests)")
        #expect(kinds["push+pull", default: 0] >= 1, "\(requests)")
        // Fewer than three requests a save, where a round of hello, pull and push took three alone:
        // the push, and pulls for announcements that carry changes the writer has not read (the
        // reader's pulls record global identifiers, which are transactions too).
        #expect(requests.count < 3 * saves, "\(requests)")
        #expect(try fixture.sharedNotes().count == saves)
    }

    @Test func aSchemaChangedAfterTheSingleHelloIsRefusedSayingWhichSideIsBehind() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let first = try ServerProcess(fixture)
        let (client, counted) = try await countedClient("client.sqlite", fixture, subject: "alice", through: first)
        try client.add("before")
        try await client.engine.syncNow()
        // The store is migrated to a newer schema by a server started on the same address.
        let newer = Schema([Note.self, OtherNote.self], version: Schema.Version(2, 0, 0)).includingSyncMetadata()
        let newerFile = fixture.directory.appendingPathComponent("schema-2.json")
        try SyncTestSchema.write(newer, to: newerFile)
        first.stop()
        let second = try ServerProcess(fixture, extra: ["--port", "\(first.port)", "--schema", newerFile.path])
        try client.add("after")
        let before = counted.requests.count
        let error = await #expect(throws: SyncError.self) { try await client.engine.syncNow() }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.isTransient == false)
        #expect(
            error?.message.contains("this replica (version 1.0.0) is behind the remote (version 2.0.0)") == true,
            "\(String(describing: error))")
        #expect(error?.remedy?.contains("Migrate") == true)
        // The first request after the hello is refused by the server; a new hello says who is behind.
        #expect(Array(counted.requests[before...]) == ["pull", "hello"])
        #expect(second.log.contains("schemaMismatch"))
        let shared = try ModelContainer(for: newer, url: fixture.store)
        #expect(try SyncTestSchema.notes(in: shared) == ["alice/before:  (0)"])
    }
}
