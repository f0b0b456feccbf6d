import Foundation
import ModelStore

/// Watches a store for committed transactions, its own and other processes', and tells every
/// subscriber the number of the newest one.
///
/// While anyone subscribes, it looks every ``interval`` at the store's files (their sizes and
/// modification times, as the scheme's maintenance lists them) and reads the newest transaction
/// from the store's history only when they changed, so an idle store costs a few `stat` calls; a
/// store with no files (PostgreSQL) has its history read each time.
final class ChangeWatcher: @unchecked Sendable {
    // Safety: `state` is only touched under `lock`.
    /// How often the store is looked at.
    let interval: Duration
    private let store: StudioStore
    private let lock = NSLock()
    private var state = State()

    private struct State {
        var subscribers: [UUID: AsyncStream<Int64>.Continuation] = [:]
        var task: Task<Void, Never>?
        var newest: Int64?
    }

    init(store: StudioStore, interval: Duration = .milliseconds(150)) {
        self.store = store
        self.interval = interval
    }

    /// The numbers of the newest transaction: the current one first, then each newer one as it is seen.
    func subscribe() -> AsyncStream<Int64> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Int64>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        // While the watch runs, the number it holds is current up to one turn; a newer one reaches this
        // subscriber at the watch's next turn. Reading the history costs more (SQLite's reads all of it).
        let current = lock.withLock { state.newest } ?? (try? store.newestTransactionNumber()) ?? 0
        continuation.yield(current)
        lock.withLock {
            state.subscribers[id] = continuation
            if state.newest == nil { state.newest = current }
            if state.task == nil {
                state.task = Task.detached { [weak self] in await self?.run() }
            }
        }
        return stream
    }

    private func unsubscribe(_ id: UUID) {
        lock.withLock {
            state.subscribers[id] = nil
            if state.subscribers.isEmpty {
                state.task?.cancel()
                state.task = nil
                state.newest = nil
            }
        }
    }

    private func run() async {
        // No signature yet: the first turn reads the history, which catches a commit made between
        // `subscribe()` reading the newest transaction and this task starting.
        var signature: [String]? = nil
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let next = store.fileSignature()
            if next != nil && next == signature { continue }
            signature = next
            guard let newest = try? store.newestTransactionNumber() else { continue }
            let subscribers: [AsyncStream<Int64>.Continuation] = lock.withLock {
                guard newest != state.newest else { return [] }
                state.newest = newest
                return Array(state.subscribers.values)
            }
            for subscriber in subscribers { subscriber.yield(newest) }
        }
    }

    /// Stops watching and ends every subscription.
    func stop() {
        let subscribers = lock.withLock {
            state.task?.cancel()
            state.task = nil
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
