import Foundation
import Logging
import ModelStore
import ModelStorePostgreSQL
import ModelStoreSync
import PostgresNIO
import SyncTestModels
import Testing

/// Server processes on one database wake each other's live channels through PostgreSQL's
/// `LISTEN`/`NOTIFY`: the servers here poll the history once a minute, so a change that reaches a
/// client of another process within seconds was carried by a notification.
@Suite(.enabled(if: Database.isConfigured, Database.skipMessage))
struct SyncChangeNotificationTests {
    /// Two server processes with `extra` options, a client writing through the first, a live
    /// client (which syncs only when told to) of the same user through the second, and a probe
    /// listener on the second's live channel that counts its announcements.
    struct Pair {
        let fixture: Fixture
        let first: ServerProcess
        let second: ServerProcess
        let writer: Client
        let reader: Client
        let probe: SyncChangeFeedTests.Signals

        init(first firstOptions: [String], second secondOptions: [String]) async throws {
            fixture = try await Fixture()
            first = try ServerProcess(fixture, extra: firstOptions)
            second = try ServerProcess(fixture, extra: secondOptions)
            writer = try await fixture.client("writer", subject: "alice", through: first)
            try writer.add("warm-up")
            try await writer.engine.syncNow()
            var quiet = SyncConfiguration()
            quiet.pollInterval = .seconds(3600)  // only the server's live channel starts a round
            reader = try await fixture.client("reader", subject: "alice", through: second, configuration: quiet)
            try await reader.engine.syncNow()
            // The second process's poller reads the history as soon as its first listener opens
            // and tells every listener of what it finds. The probe waits for that read (its
            // stream's opening is one signal, the read a second), so that what is written after
            // it reaches the second process only by a notification or a poll.
            probe = try SyncChangeFeedTests.Signals(
                HTTPSyncTransport(baseURL: second.baseURL, token: try await fixture.token("alice")))
            for _ in 0..<200 where probe.value < 2 { try await Task.sleep(for: .milliseconds(50)) }
            try #require(probe.value >= 2, "the second process's first read of the history")
            await reader.engine.start()
            try await Task.sleep(for: .milliseconds(500))  // the reader's change stream is open
        }

        /// Saves a note through the first process and waits up to `seconds` for the second's live
        /// channel to announce it and for the reader to hold it.
        func write(_ title: String, seconds: Double) async throws -> (announced: Bool, delivered: Bool) {
            let before = probe.value
            try writer.add(title)
            try await writer.engine.syncNow()
            let announced = try await eventually(seconds) { probe.value > before }
            let delivered = try await eventually(announced ? seconds : 0) {
                try reader.notes().contains("alice/\(title):  (0)")
            }
            return (announced, delivered)
        }

        func finish() async {
            await reader.engine.stop()
            fixture.remove()
        }
    }

    static let slowPoll = ["--poll-interval", "60000"]

    @Test func aPushThroughOneProcessReachesALiveClientOfAnotherAtOnce() async throws {
        let pair = try await Pair(first: Self.slowPoll, second: Self.slowPoll)
        #expect(pair.second.log.contains("change notifications on 'modelstore_sync_sync_"))
        // A minute's poll cannot explain an announcement within 5 s.
        for title in ["first", "second"] {
            let result = try await pair.write(title, seconds: 5)
            #expect(result.announced && result.delivered, "'\(title)'")
        }
        await pair.finish()
    }

    @Test func withoutNotificationsTheSameChangeWaitsForThePoll() async throws {
        // The control for the test above: with notifications off, nothing else carries the change.
        let off = Self.slowPoll + ["--change-notifications", "off"]
        let pair = try await Pair(first: off, second: off)
        #expect(!pair.second.log.contains("change notifications on"))
        #expect(try await !pair.write("unannounced", seconds: 3).announced)
        await pair.finish()
    }

    @Test func aProcessThatMissesTheNotificationStillPollsTheChange() async throws {
        // The first process sends no notification; the second hears none and finds the change by polling.
        let pair = try await Pair(first: ["--change-notifications", "off"], second: ["--poll-interval", "500"])
        let result = try await pair.write("polled", seconds: 10)
        #expect(result.announced && result.delivered)
        await pair.finish()
    }

    @Test func aDroppedListenConnectionReconnectsAndCatchesUpOnWhatItMissed() async throws {
        let pair = try await Pair(first: Self.slowPoll, second: Self.slowPoll)
        let admin = try await PostgreSQLStoreConfiguration(url: try #require(Database.url)).openConnection()
        let logger = Logger(label: "SyncChangeNotificationTests")
        let channel = try #require(
            pair.second.log.components(separatedBy: "change notifications on '").last?.prefix { $0 != "'" })
        // A listening connection's last statement is its LISTEN, or the notification it sent last.
        let listening = PostgresQuery(
            unsafeSQL: "SELECT pid FROM pg_stat_activity WHERE query IN ('LISTEN \"\(channel)\";', "
                + "'SELECT pg_notify($1, '''')')")
        func listeners() async throws -> [Int32] {
            var pids: [Int32] = []
            for try await pid in try await admin.query(listening, logger: logger).decode(Int32.self) {
                pids.append(pid)
            }
            return pids
        }
        func bothListen() async throws -> Bool {
            for _ in 0..<100 {
                if try await listeners().count == 2 { return true }
                try await Task.sleep(for: .milliseconds(100))
            }
            return false
        }
        #expect(try await bothListen())

        // Both processes lose their listening connections; a push right after is announced to no one.
        for pid in try await listeners() {
            for try await _ in try await admin.query("SELECT pg_terminate_backend(\(pid))", logger: logger) {}
        }
        let missed = try await pair.write("missed", seconds: 10)
        #expect(missed.announced && missed.delivered, "the reconnection's read finds the change")

        // Both listen again, and notifications carry the next change.
        #expect(try await bothListen())
        let after = try await pair.write("after", seconds: 5)
        #expect(after.announced && after.delivered)
        #expect(pair.second.log.contains("listen again"))
        try await admin.close()
        await pair.finish()
    }
}
