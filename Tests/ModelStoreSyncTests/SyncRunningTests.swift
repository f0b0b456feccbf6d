import Foundation
import ModelStore
import ModelStoreAdapters
import ModelStoreSync
import ModelStoreTestSupport
import Testing

/// A started engine: rounds after local saves and remote changes, events and status.
@Suite struct SyncRunningTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    /// Waits for an event the predicate accepts (giving up after 100 others), recording what it
    /// saw on the way for the failure message.
    func next(
        _ events: inout AsyncStream<SyncEvent>.Iterator, seen: inout [String], where accept: (SyncEvent) -> Bool
    ) async -> SyncEvent? {
        for _ in 0..<100 {
            guard let event = await events.next() else { return nil }
            seen.append("\(event)")
            if accept(event) { return event }
        }
        return nil
    }

    @Test func aSaveAndARemoteChangeEachStartARound() async throws {
        var quick = SyncConfiguration()
        quick.debounce = .milliseconds(20)
        quick.pollInterval = .seconds(600)  // only saves and remote changes start rounds here
        let host = try makeHost(url: "sqlite:" + directory.path("shared.sqlite"))
        let a = try Replica(url: "sqlite:" + directory.path("a.sqlite"), host: host, configuration: quick)
        let b = try Replica(url: "json:" + directory.path("b.json"), host: host, configuration: quick)
        var aEvents = a.engine.events.makeAsyncIterator()
        var bEvents = b.engine.events.makeAsyncIterator()
        await a.engine.start()
        await b.engine.start()
        // The first rounds run at start.
        var seen: [String] = []
        #expect(await next(&aEvents, seen: &seen) { if case .upToDate = $0 { true } else { false } } != nil, "\(seen)")
        #expect(await next(&bEvents, seen: &seen) { if case .upToDate = $0 { true } else { false } } != nil, "\(seen)")

        let context = a.context()
        context.insert(Journey("Tromsø"))
        try context.save()
        let pushed = await next(&aEvents, seen: &seen) { if case .pushed = $0 { true } else { false } }
        #expect(pushed.map { "\($0)" } == "pushed 1", "\(seen)")
        // The host announces the change; B pulls it without a save of its own.
        let pulled = await next(&bEvents, seen: &seen) { if case .pulled = $0 { true } else { false } }
        #expect(pulled.map { "\($0)" } == "pulled 1", "\(seen)")
        #expect(try b.journeys() == ["Tromsø: 0  []"])
        #expect(a.engine.status.pendingChanges == 0)
        #expect(a.engine.status.lastSync != nil)
        #expect(a.engine.status.phase != .failed)
        await a.engine.stop()
        await b.engine.stop()
        var buffered = 0
        while await aEvents.next() != nil, buffered < 1000 { buffered += 1 }
        #expect(buffered < 1000, "stop ends the events, after the ones already sent")
    }

    @Test func retriesWaitLongerEachTimeUpToTheMostAndVary() {
        var configuration = SyncConfiguration()
        configuration.retryDelay = .seconds(1)
        configuration.maximumRetryDelay = .seconds(8)
        let waits = (1...6).map { failures in
            (1...20).map { _ in SyncEngine.retryDelay(after: failures, configuration: configuration) }
        }
        for (index, samples) in waits.enumerated() {
            let ceiling = min(8.0, pow(2, Double(index)))
            for wait in samples {
                let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
                #expect(
                    seconds >= ceiling / 2 - 0.001 && seconds <= ceiling + 0.001, "failure \(index + 1): \(seconds)")
            }
            #expect(Set(samples).count > 1, "jittered")
        }
    }
}
