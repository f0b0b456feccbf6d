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
        if MultiThreadedEventLoopGroup.currentEventLoop != nil {
            throw ModelStoreErrors.onEventLoop(storeURL)
        }
        let semaphore = DispatchSemaphore(value: 0)
        let outcome = Outcome<Value>()
        Task(executorPreference: self) {
            do {
                outcome.result = .success(try await work())
            } catch {
                outcome.result = .failure(error)
            }
            semaphore.signal()
        }
        semaphore.wait()
        return try outcome.result!.get()
    }
}

/// The result of work a synchronous call waits for.
///
/// Safety: written once by the task before it signals the semaphore, read once by the waiting
/// thread after the wait returns; the semaphore orders the two.
private final class Outcome<Value>: @unchecked Sendable {
    var result: Result<Value, any Error>?
}
