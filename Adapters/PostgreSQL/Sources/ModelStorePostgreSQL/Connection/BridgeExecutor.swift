import Dispatch
import Foundation
import NIOCore
import NIOPosix

/// The threads the store's asynchronous work runs on when a synchronous `DataStore` call waits
/// for it: Dispatch's, not Swift's cooperative pool and not an event loop.
///
/// A synchronous call blocks its own thread on a semaphore while the work runs here, so it holds
/// no thread that the work itself needs; the network I/O runs on NIO's event loops.
final class BridgeExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "ModelStorePostgreSQL.bridge", attributes: .concurrent)

    /// Runs a job on a Dispatch thread.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// One executor for every store of the process.
    static let shared = BridgeExecutor()

    /// Runs `work` on the bridge's threads and blocks the calling thread until it finishes.
    ///
    /// Throws ``ModelStore/DataStoreError/Code/unsupportedFeature`` on a NIO event-loop thread,
    /// where blocking would stop the loop (and, if the work needs that loop, never end).
    func wait<Value: Sendable>(
        for work: @escaping @Sendable () async throws -> Value, storeURL: String
    ) throws -> Value {
        try wait(lending: { _ in try await work() }, storeURL: storeURL)
    }

    /// Runs `work` on the bridge's threads and blocks the calling thread until it finishes,
    /// lending that thread to `work` for synchronous code (see ``WaitingThread``).
    func wait<Value: Sendable>(
        lending work: @escaping @Sendable (WaitingThread) async throws -> Value, storeURL: String
    ) throws -> Value {
        if MultiThreadedEventLoopGroup.currentEventLoop != nil {
            throw ModelStoreErrors.onEventLoop(storeURL)
        }
        let thread = WaitingThread()
        let outcome = Outcome<Value>()
        Task(executorPreference: self) {
            do {
                outcome.result = .success(try await work(thread))
            } catch {
                outcome.result = .failure(error)
            }
            thread.finish()
        }
        thread.serve()
        return try outcome.result!.get()
    }
}

/// The thread blocked in ``BridgeExecutor/wait(lending:storeURL:)``, lent back to the work it
/// waits for: synchronous code that itself waits for the store (a migration plan's stages, which
/// run the store's statements one by one) runs there, while the task that asked for it is
/// suspended, so no thread of the bridge ever blocks waiting for another.
///
/// Safety: `job` and `finished` are read and written only under the lock; the semaphore wakes the
/// waiting thread once per job and once at the end.
final class WaitingThread: @unchecked Sendable {
    private let lock = NSLock()
    private let wake = DispatchSemaphore(value: 0)
    private var job: (@Sendable () -> Void)?
    private var finished = false

    /// Runs `work` on the waiting thread and returns its result; the calling task is suspended
    /// meanwhile, holding no thread.
    func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            lock.withLock { job = { continuation.resume(with: Result { try work() }) } }
            wake.signal()
        }
    }

    /// The work is done: the waiting thread returns.
    fileprivate func finish() {
        lock.withLock { finished = true }
        wake.signal()
    }

    /// Runs the jobs handed over until the work is done.
    fileprivate func serve() {
        while true {
            wake.wait()
            let next: (job: (@Sendable () -> Void)?, finished: Bool) = lock.withLock {
                defer { job = nil }
                return (job, finished)
            }
            next.job?()
            if next.finished { return }
        }
    }
}

/// The result of work a synchronous call waits for.
///
/// Safety: written once by the task before it signals the semaphore, read once by the waiting
/// thread after the wait returns; the semaphore orders the two.
private final class Outcome<Value>: @unchecked Sendable {
    var result: Result<Value, any Error>?
}
