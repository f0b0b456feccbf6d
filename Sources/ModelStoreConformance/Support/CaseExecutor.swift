import Foundation
import ModelStore

/// A task executor of one thread of its own: the asynchronous cases run their tasks on it, so they
/// neither block a thread of Swift's cooperative pool while waiting for them nor depend on its width,
/// and so a task that blocks its thread visibly keeps every other task of the executor waiting.
final class CaseExecutor: TaskExecutor, @unchecked Sendable {
    // Safety: `jobs` and `stopped` are read and written only under `condition`'s lock.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var stopped = false

    init() {
        let thread = Thread { [self] in runJobs() }
        thread.name = "ModelStoreConformance.CaseExecutor"
        thread.start()
    }

    func enqueue(_ job: UnownedJob) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Ends the thread once the jobs already enqueued have run.
    func shutdown() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Runs `body` in a task that prefers this executor and waits for its result on the calling thread.
    func run<Result: Sendable>(_ body: @escaping @Sendable () async throws -> Result) throws -> Result {
        let outcome = LockedValue<Swift.Result<Result, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: self) {
            do {
                let value = try await body()
                outcome.withLock { $0 = .success(value) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        guard let result = outcome.withLock({ $0 }) else { preconditionFailure("the task ended without a result") }
        return try result.get()
    }
}
