import Dispatch
import Foundation
import NIOCore
import NIOPosix

/// How a synchronous `DataStore` call waits for the store's asynchronous work, and the Dispatch
/// threads that run the connection pool's own task.
///
/// A synchronous call runs its work as a task whose executor is the calling thread itself (see
/// ``WaitingThread``): the thread blocks on a semaphore between the task's steps and runs each step
/// when it is enqueued, so the work costs no hop to another thread of the process; only the network
/// I/O runs on NIO's event loops. The thread holds nothing the work needs from elsewhere, so this
/// is safe on any thread that is not an event loop, a thread of Swift's cooperative pool included.
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

    /// Runs `work` on the calling thread and blocks that thread until it finishes.
    ///
    /// Throws ``ModelStore/DataStoreError/Code/unsupportedFeature`` on a NIO event-loop thread,
    /// where blocking would stop the loop (and, if the work needs that loop, never end).
    func wait<Value: Sendable>(
        for work: @escaping @Sendable () async throws -> Value, storeURL: String
    ) throws -> Value {
        try wait(lending: { _ in try await work() }, storeURL: storeURL)
    }

    /// Runs `work` on the calling thread and blocks that thread until it finishes, lending the
    /// thread to `work` for synchronous code too (see ``WaitingThread/run(_:)``).
    func wait<Value: Sendable>(
        lending work: @escaping @Sendable (WaitingThread) async throws -> Value, storeURL: String
    ) throws -> Value {
        if MultiThreadedEventLoopGroup.currentEventLoop != nil {
            throw ModelStoreErrors.onEventLoop(storeURL)
        }
        let thread = WaitingThread()
        let outcome = Outcome<Value>()
        Task(executorPreference: thread) {
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

/// The thread blocked in ``BridgeExecutor/wait(lending:storeURL:)``, as the executor of the task
/// it waits for: each step of the task (its start, and its resumption after each statement's
/// answer) is handed to the thread, which runs it and waits for the next, until the task ends.
///
/// Synchronous code that itself waits for the store (a migration plan's stages, which run the
/// store's statements one by one) runs there too, through ``run(_:)``, while the task that asked
/// for it is suspended; its own waits serve their own tasks on the same thread, one inside the
/// other, so no thread ever blocks waiting for another that waits for it.
///
/// Safety: `steps` and `finished` are read and written only under the lock; the semaphore wakes
/// the waiting thread once per step and once at the end.
final class WaitingThread: TaskExecutor, @unchecked Sendable {
    private enum Step {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private let lock = NSLock()
    private let wake = DispatchSemaphore(value: 0)
    private var steps: [Step] = []
    private var finished = false

    init() { steps.reserveCapacity(4) }

    /// Hands a step of the task to the waiting thread.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.withLock { steps.append(.job(job)) }
        wake.signal()
    }

    /// Runs `work` on the waiting thread and returns its result; the calling task is suspended
    /// meanwhile.
    func run<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            lock.withLock { steps.append(.closure({ continuation.resume(with: Result { try work() }) })) }
            wake.signal()
        }
    }

    /// The work is done: the waiting thread returns once it has run what was handed to it.
    fileprivate func finish() {
        lock.withLock { finished = true }
        wake.signal()
    }

    /// Runs the steps handed over until the work is done.
    fileprivate func serve() {
        let executor = asUnownedTaskExecutor()
        var taken = 0
        while true {
            wake.wait()
            let next: (step: Step?, finished: Bool) = lock.withLock {
                guard taken < steps.count else { return (nil, finished) }
                defer {
                    taken += 1
                    if taken == steps.count {
                        steps.removeAll(keepingCapacity: true)
                        taken = 0
                    }
                }
                return (steps[taken], false)
            }
            switch next.step {
            case .job(let job)?: job.runSynchronously(on: executor)
            case .closure(let closure)?: closure()
            case nil: if next.finished { return }
            }
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
