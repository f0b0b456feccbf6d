import NIOCore

/// A connection's event loop as the executor of a task that only talks to that connection: a
/// prepared statement, which PostgresNIO runs only as an `async` call (see `Session.collect`).
///
/// The task writes its statement on the loop itself and is resumed there when the answer comes,
/// so the statement costs the caller one hand-off to the loop and one back, as an unprepared
/// statement's future does, instead of two more through another thread. The task never blocks:
/// it only writes, awaits, and collects the rows PostgresNIO has already buffered.
final class EventLoopTaskExecutor: TaskExecutor {
    private let loop: any EventLoop

    /// The executor of `loop`.
    init(_ loop: any EventLoop) { self.loop = loop }

    /// Runs a job of the task on the loop.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
