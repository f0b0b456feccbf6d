import Foundation
import Observation
import Synchronization

/// What one round moved.
public struct SyncSummary: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Local changes the remote stored.
    public var pushed = 0
    /// Remote changes stored here.
    public var pulled = 0
    /// Clashes decided (each also a ``SyncConflict``).
    public var conflicts = 0

    /// An empty summary.
    public init() {}

    /// `pushed N, pulled N, N conflict(s)`.
    public var description: String { "pushed \(pushed), pulled \(pulled), \(conflicts) conflict(s)" }
}

/// Something a sync engine did, in the order it did it.
public enum SyncEvent: Sendable, CustomStringConvertible {
    /// A round started.
    case started
    /// A page of remote changes was stored here.
    case pulled(Int)
    /// Local changes were stored on the remote.
    case pushed(Int)
    /// A clash was decided and recorded.
    case conflict(SyncConflict)
    /// A round failed; when the failure is transient, the engine tries again at `retryAt`.
    case failed(SyncError, retryAt: Date?)
    /// A round finished with nothing left to move.
    case upToDate(SyncSummary)

    /// One line per event.
    public var description: String {
        switch self {
        case .started: "started"
        case .pulled(let count): "pulled \(count)"
        case .pushed(let count): "pushed \(count)"
        case .conflict(let conflict): "conflict: \(conflict)"
        case .failed(let error, let retryAt): "failed: \(error)" + (retryAt.map { ", retrying at \($0)" } ?? "")
        case .upToDate(let summary): "up to date (\(summary))"
        }
    }
}

/// What a sync engine is doing now, for an app to show: observable with Observation, readable from
/// any thread.
@Observable
public final class SyncStatus: Sendable {
    /// What the engine is doing.
    public enum Phase: String, Sendable {
        /// Waiting for the next round.
        case idle
        /// In a round.
        case syncing
        /// The last round failed; see ``SyncStatus/lastError``.
        case failed
    }

    @ObservationIgnored private let state = Mutex(
        State(phase: .idle, pendingChanges: 0, lastSync: nil, lastError: nil, nextRetry: nil))

    private struct State {
        var phase: Phase
        var pendingChanges: Int
        var lastSync: Date?
        var lastError: SyncError?
        var nextRetry: Date?
    }

    init() {}

    /// What the engine is doing.
    public var phase: Phase {
        access(keyPath: \.phase)
        return state.withLock { $0.phase }
    }
    /// Local changes not yet stored on the remote, as the last round counted them.
    public var pendingChanges: Int {
        access(keyPath: \.pendingChanges)
        return state.withLock { $0.pendingChanges }
    }
    /// When a round last finished.
    public var lastSync: Date? {
        access(keyPath: \.lastSync)
        return state.withLock { $0.lastSync }
    }
    /// Why the last round failed, until one succeeds.
    public var lastError: SyncError? {
        access(keyPath: \.lastError)
        return state.withLock { $0.lastError }
    }
    /// When the engine tries again after a transient failure.
    public var nextRetry: Date? {
        access(keyPath: \.nextRetry)
        return state.withLock { $0.nextRetry }
    }

    func update(phase: Phase) {
        withMutation(keyPath: \.phase) { state.withLock { $0.phase = phase } }
    }
    func update(pendingChanges: Int) {
        withMutation(keyPath: \.pendingChanges) { state.withLock { $0.pendingChanges = pendingChanges } }
    }
    func finished(at date: Date) {
        withMutation(keyPath: \.lastSync) { state.withLock { $0.lastSync = date } }
        withMutation(keyPath: \.lastError) { state.withLock { $0.lastError = nil } }
        withMutation(keyPath: \.nextRetry) { state.withLock { $0.nextRetry = nil } }
        update(phase: .idle)
    }
    func failed(_ error: SyncError, retryAt: Date?) {
        withMutation(keyPath: \.lastError) { state.withLock { $0.lastError = error } }
        withMutation(keyPath: \.nextRetry) { state.withLock { $0.nextRetry = retryAt } }
        update(phase: .failed)
    }
}

/// The subscribers to an engine's events.
final class SyncEventHub: Sendable {
    private let subscribers = Mutex<[UUID: AsyncStream<SyncEvent>.Continuation]>([:])

    func subscribe() -> AsyncStream<SyncEvent> {
        let (stream, continuation) = AsyncStream<SyncEvent>.makeStream()
        let id = UUID()
        subscribers.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.subscribers.withLock { $0.removeValue(forKey: id) } }
        return stream
    }

    func emit(_ event: SyncEvent) {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.yield(event) }
    }

    func finish() {
        for continuation in subscribers.withLock({ Array($0.values) }) { continuation.finish() }
    }
}
