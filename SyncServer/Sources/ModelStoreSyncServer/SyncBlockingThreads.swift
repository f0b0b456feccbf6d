import Foundation
import ModelStore
import NIOPosix

/// The threads a ``SyncServer`` runs the host's blocking work on (its reads and writes of the
/// store), so that they never hold the server's event loops or the cooperative pool.
///
/// Why not Dispatch's global queue: on Linux it runs as many items at once as the machine has
/// cores, and adds a thread for blocked ones at most once a second; the host's work spends nearly
/// all its time blocked on the database, so requests queued behind a few blocked ones for up to
/// seconds. These threads are as many as the configuration says, all started at once; a request
/// waits for one only when that many are busy.
final class SyncBlockingThreads: Sendable {
    private let pool: NIOThreadPool

    /// `count` threads, started now and stopped when the last reference goes.
    init(count: Int) {
        pool = NIOThreadPool(numberOfThreads: max(1, count))
        pool.start()
    }

    deinit { pool.shutdownGracefully { _ in } }

    /// Runs `work` on one of the threads and returns its result; the current request's timing
    /// (``SyncRequestTiming/current``), if any, gets the wait for the thread and the work's time.
    func run<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        let timing = SyncRequestTiming.current
        let enqueued = ContinuousClock.now
        return try await pool.runIfActive {
            let started = ContinuousClock.now
            defer { timing?.add(queued: started - enqueued, working: ContinuousClock.now - started) }
            return try work()
        }
    }
}

/// Where one request's time went: the waits for a blocking thread and the blocking work, summed
/// over the request's steps; the request log line shows both.
final class SyncRequestTiming: Sendable {
    /// The timing of the request the current task serves.
    @TaskLocal static var current: SyncRequestTiming?

    private let spans = LockedValue<(queued: Duration, working: Duration)>((.zero, .zero))

    /// Adds one step's wait for a thread and its work.
    func add(queued: Duration, working: Duration) {
        spans.withLock {
            $0.queued += queued
            $0.working += working
        }
    }

    /// The waits and the work so far.
    var totals: (queued: Duration, working: Duration) { spans.withLock { $0 } }
}
