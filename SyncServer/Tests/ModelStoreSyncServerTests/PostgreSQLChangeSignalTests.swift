import Foundation
import ModelStore
import ModelStorePostgreSQL
import Testing

@testable import ModelStoreSyncServer

/// The PostgreSQL change signal on its own, against the real server: what one instance announces,
/// every instance on the same store hears, and the channel is a valid PostgreSQL name.
struct PostgreSQLChangeSignalTests {
    @Test func aChannelIsTheNamespaceWhenItFitsAndADigestOtherwise() {
        #expect(PostgreSQLChangeSignal.channel(for: "sync_abc") == "modelstore_sync_sync_abc")
        let long = String(repeating: "n", count: 63)
        let hashed = PostgreSQLChangeSignal.channel(for: long)
        #expect(hashed.utf8.count <= 63 && hashed.hasPrefix("modelstore_sync_") && hashed != "modelstore_sync_" + long)
        #expect(PostgreSQLChangeSignal.channel(for: "Quote\"d") != PostgreSQLChangeSignal.channel(for: "Quoted"))
        #expect(!PostgreSQLChangeSignal.channel(for: "Quote\"d").contains("\""))
        #expect(hashed != PostgreSQLChangeSignal.channel(for: String(repeating: "m", count: 63)))
    }

    @Test(.enabled(if: Database.isConfigured, Database.skipMessage))
    func anAnnouncementReachesEverySignalOnTheStoreAndNoOther() async throws {
        let store = try Database.freshStore()
        let configuration = try PostgreSQLStoreConfiguration(url: store)
        var elsewhere = configuration
        elsewhere.namespace += "_other"
        let announcer = PostgreSQLChangeSignal(configuration: configuration)
        let listener = PostgreSQLChangeSignal(configuration: configuration)
        let stranger = PostgreSQLChangeSignal(configuration: elsewhere)
        defer {
            for signal in [announcer, listener, stranger] { signal.close() }
        }
        let heard = Counter(listener.signals())
        let strangerHeard = Counter(stranger.signals())
        for _ in 0..<100 where !(announcer.isListening && listener.isListening && stranger.isListening) {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(announcer.isListening && listener.isListening && stranger.isListening)
        // Each signal also wakes its subscribers when it starts listening: let that pass.
        try await Task.sleep(for: .milliseconds(200))
        let (before, strangerBefore) = (heard.value, strangerHeard.value)

        await announcer.announce()
        #expect(try await eventually(5) { heard.value == before + 1 })
        await announcer.announce()
        #expect(try await eventually(5) { heard.value == before + 2 })
        try await Task.sleep(for: .milliseconds(300))
        #expect(strangerHeard.value == strangerBefore, "a store in another namespace hears nothing")
    }

    /// Counts what a stream yields.
    final class Counter: Sendable {
        private let count = LockedValue(0)
        private let task: Task<Void, Never>

        init(_ stream: AsyncStream<Void>) {
            task = Task { [count] in
                for await _ in stream { count.withLock { $0 += 1 } }
            }
        }

        var value: Int { count.withLock { $0 } }
        deinit { task.cancel() }
    }
}
