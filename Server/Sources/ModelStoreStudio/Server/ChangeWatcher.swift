import Foundation
import ModelStore

/// Watches a store for committed transactions, its own and other processes', and tells every
/// subscriber the number of the newest one.
///
/// While anyone subscribes, it looks every ``interval`` at the store's files (their sizes and
/// modification times, as the scheme's maintenance lists them) and reads the newest transaction
/// from the store's history only when they changed, so an idle store costs a few `stat` calls; a
/// store with no files (PostgreSQL) has its history read each time.
///
/// A page learns of every change made after it read the store, however its subscription lines up with
/// the watch's turns:
/// 1. The page carries the number of the newest transaction it read (``StudioStore/newestTransactionNumber()``,
///    read before its content) and subscribes with it (``subscribe(after:)``), so a change committed
///    between the page's render and its subscription is sent at once instead of being taken as the
///    starting point.
/// 2. A subscriber gets the number the watch holds and is registered in one step under the lock, so a
///    number the watch publishes meanwhile cannot fall between the two.
/// 3. Only a newer number is published, and only by the current turn of the watch: a watch cancelled
///    while it read the store (its last subscriber left, and a new one started another) cannot send
///    an older number after a newer one.
final class ChangeWatcher: @unchecked Sendable {
    // Safety: `state` is only touched under `lock`.
    /// How often the store is looked at.
    let interval: Duration
    private let store: StudioStore
    private let lock = NSLock()
    private var state = State()

    private struct State {
        var subscribers: [UUID: Subscriber] = [:]
        var task: Task<Void, Never>?
        var newest: Int64?
        /// Counts the watches started, so that a cancelled one knows it is no longer current.
        var generation = 0
    }

    init(store: StudioStore, interval: Duration = .milliseconds(150)) {
        self.store = store
        self.interval = interval
    }

    /// The numbers of the newest transaction above `after`: the current one first if it is above,
    /// then each newer one as it is seen.
    ///
    /// `after` is the number a page was rendered at (0 for none), so a change committed since then
    /// reaches the page however late it subscribes.
    func subscribe(after: Int64 = 0) -> AsyncStream<Int64> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Int64>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        // A running watch holds a number current up to one turn, and publishes a newer one to every
        // subscriber at its next turn; with none running, the store is read once here.
        let fresh = lock.withLock { state.task == nil } ? (try? store.newestTransactionNumber()) : nil
        lock.withLock {
            if let fresh { state.newest = max(state.newest ?? fresh, fresh) }
            let current = state.newest ?? 0
            if current > after { continuation.yield(current) }
            state.subscribers[id] = Subscriber(after: after, continuation: continuation)
            if state.task == nil {
                state.generation += 1
                let generation = state.generation
                state.task = Task.detached { [weak self] in await self?.run(generation: generation) }
            }
        }
        return stream
    }

    /// A subscriber's stream and the number of the transaction its page was rendered at.
    private struct Subscriber {
        var after: Int64
        var continuation: AsyncStream<Int64>.Continuation
    }

    private func unsubscribe(_ id: UUID) {
        lock.withLock {
            state.subscribers[id] = nil
            if state.subscribers.isEmpty {
                state.task?.cancel()
                state.task = nil
                state.newest = nil
                state.generation += 1
            }
        }
    }

    private func run(generation: Int) async {
        // No signature yet: the first turn reads the history, which catches a commit made between
        // `subscribe()` reading the newest transaction and this task starting.
        var signature: [String]? = nil
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let next = store.fileSignature()
            if next != nil && next == signature { continue }
            signature = next
            guard let newest = try? store.newestTransactionNumber() else { continue }
            lock.withLock {
                guard generation == state.generation, newest > state.newest ?? 0 else { return }
                state.newest = newest
                for subscriber in state.subscribers.values where newest > subscriber.after {
                    subscriber.continuation.yield(newest)
                }
            }
        }
    }

    /// Stops watching and ends every subscription.
    func stop() {
        let subscribers = lock.withLock {
            state.task?.cancel()
            state.task = nil
            state.generation += 1
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.continuation.finish() }
    }
}
