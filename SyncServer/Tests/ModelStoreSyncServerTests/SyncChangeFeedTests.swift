import Foundation
import ModelStore
import ModelStoreSync
import SyncTestModels
import Testing

/// The live channel tells a client of a change only when the change touches its scope, whichever
/// server process the change went through.
@Suite(.enabled(if: Database.isConfigured, Database.skipMessage))
struct SyncChangeFeedTests {
    /// Counts the signals of a transport's change stream.
    final class Signals: Sendable {
        private let count = LockedValue(0)
        private let task: Task<Void, Never>

        init(_ transport: HTTPSyncTransport) throws {
            let stream = try #require(transport.remoteChanges())
            task = Task { [count] in
                for await _ in stream { count.withLock { $0 += 1 } }
            }
        }

        var value: Int { count.withLock { $0 } }
        deinit { task.cancel() }
    }

    @Test func aChangeWakesOnlyTheListenersWhoseScopeItTouches() async throws {
        let fixture = try await Fixture()
        defer { fixture.remove() }
        let first = try ServerProcess(fixture)
        let second = try ServerProcess(fixture)
        let alice = try await fixture.client("alice", subject: "alice", through: first)
        let bob = try await fixture.client("bob", subject: "bob", through: first)
        try await alice.engine.syncNow()
        try await bob.engine.syncNow()
        // Listeners on the other process.
        let aliceListener = HTTPSyncTransport(baseURL: second.baseURL, token: try await fixture.token("alice"))
        let bobListener = HTTPSyncTransport(baseURL: second.baseURL, token: try await fixture.token("bob"))
        let aliceSignals = try Signals(aliceListener)
        let bobSignals = try Signals(bobListener)
        // Each stream signals when it opens, and again when that process's poller first reads
        // the history (a change between the two must not go unannounced); then they settle.
        #expect(try await eventually(10) { aliceSignals.value >= 1 && bobSignals.value >= 1 })
        try await Task.sleep(for: .seconds(1))
        let (alice0, bob0) = (aliceSignals.value, bobSignals.value)

        try alice.add("alice's note")
        try await alice.engine.syncNow()
        #expect(try await eventually(10) { aliceSignals.value == alice0 + 1 })
        // The poller has read the change (it told Alice); a second poll interval passes too.
        try await Task.sleep(for: .milliseconds(500))
        #expect(bobSignals.value == bob0, "Bob's stream was told of a change to Alice's notes only")

        try bob.add("bob's note")
        try await bob.engine.syncNow()
        #expect(try await eventually(10) { bobSignals.value == bob0 + 1 })
        try await Task.sleep(for: .milliseconds(500))
        #expect(aliceSignals.value == alice0 + 1, "Alice's stream was told of a change to Bob's notes only")
    }
}
