import Dispatch
import ModelStore

/// An executor that runs the jobs of a model actor and owns the actor's context, as SwiftData's
/// `ModelExecutor`: what `@ModelActor` gives each actor.
public protocol ModelExecutor: AnyObject, Sendable {
    /// The context of the actor whose jobs the executor runs. Use it only from that actor.
    var modelContext: ModelContext { get }
}

/// A ``ModelExecutor`` that runs jobs one at a time, as SwiftData's `SerialModelExecutor`.
public protocol SerialModelExecutor: ModelExecutor, SerialExecutor {}

/// Runs a model actor's jobs one at a time on a dispatch queue of its own, and holds the actor's
/// context: SwiftData's `DefaultSerialModelExecutor`.
public final class DefaultSerialModelExecutor: SerialModelExecutor, @unchecked Sendable {
    // Safety: `modelContext` is immutable, and the context it holds is only used by the actor whose
    // jobs this executor runs, one at a time, on its queue.
    /// The actor's context.
    public let modelContext: ModelContext
    private let queue = DispatchQueue(label: "ModelStoreMacros.DefaultSerialModelExecutor")

    /// An executor for an actor that uses `modelContext`.
    public init(modelContext: ModelContext) {
        self.modelContext = modelContext
    }

    /// Runs `job` after the jobs enqueued before it, on the executor's queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// The executor as the actor refers to it.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
