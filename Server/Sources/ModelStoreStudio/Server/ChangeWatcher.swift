import Foundation
import ModelStore

/// Watches a store for committed transactions, its own and other processes', and tells every
/// subscriber the number of the newest one each time it reads it.
///
/// While anyone subscribes, it looks every ``interval`` at the store's files
/// (``StudioStore/fileSignature()``) and reads the number of the newest transaction from the store's
/// history when:
/// 1. the files changed since its last look;
/// 2. a file was modified less than ``settling`` ago: a commit can become visible to readers a moment
///    after its files last changed (SQLite appends to its log, then publishes the commit in the log's
///    index in shared memory, which changes no size or time the watch sees; and after a checkpoint it
///    rewrites the log in place, at the same size), so a read in that moment misses it and no later
///    change of the files calls for another;
/// 3. ``recheck`` passed since its last read, so that nothing the first two miss waits longer;
/// 4. the store has no files it can see (PostgreSQL): then at every look.
///
/// An idle store with files costs a few `stat` calls per look. The watch holds nothing a page's
/// updates depend on: each event stream (``ChangeFeed``) keeps its own place in the history and reads
/// the transactions after it itself; the numbers the watch sends only tell it when to read.
final class ChangeWatcher: @unchecked Sendable {
    // Safety: `state` is only touched under `lock`.
    /// How often the store is looked at.
    let interval: Duration
    /// How long after a file's modification every look reads the history.
    let settling: Duration
    /// The longest time between two reads of the history.
    let recheck: Duration
    private let store: StudioStore
    private let lock = NSLock()
    private var state = State()

    private struct State {
        var subscribers: [UUID: AsyncStream<Int64>.Continuation] = [:]
        var task: Task<Void, Never>?
    }

    init(
        store: StudioStore, interval: Duration = .milliseconds(150), settling: Duration = .seconds(2),
        recheck: Duration = .seconds(5)
    ) {
        self.store = store
        self.interval = interval
        self.settling = settling
        self.recheck = recheck
    }

    /// The number of the newest transaction at each of the watch's reads from now on; a subscriber
    /// that falls behind gets the latest only.
    func subscribe() -> AsyncStream<Int64> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Int64>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        lock.withLock {
            state.subscribers[id] = continuation
            if state.task == nil {
                state.task = Task.detached { [weak self] in await self?.run() }
            }
            StudioDebugLog.write("watch: a subscriber joined, \(state.subscribers.count) now")
        }
        return stream
    }

    private func unsubscribe(_ id: UUID) {
        let idle: Task<Void, Never>? = lock.withLock {
            state.subscribers[id] = nil
            StudioDebugLog.write("watch: a subscriber left, \(state.subscribers.count) now")
            guard state.subscribers.isEmpty else { return nil }
            defer { state.task = nil }
            return state.task
        }
        // Cancelled outside the lock, as `run` yields outside it.
        idle?.cancel()
    }

    /// Why a look at the store reads its history (the rules in the type's discussion), or `nil` when it
    /// need not.
    enum Reason: String, Sendable {
        case firstLook = "first look"
        case noFiles = "no files"
        case filesChanged = "files changed"
        case filesSettling = "files settling"
        case recheck

        /// The reason a look that found `files` (`previous` at the last read, none before the first)
        /// reads the history, `sinceRead` after the last read.
        init?(
            files: StudioStore.FileSignature?, previous: StudioStore.FileSignature??, sinceRead: Duration,
            settling: Duration, recheck: Duration, now: Date = Date()
        ) {
            guard let previous else {
                self = .firstLook
                return
            }
            guard let files else {
                self = .noFiles
                return
            }
            if files != previous {
                self = .filesChanged
            } else if files.changed(within: settling, of: now) {
                self = .filesSettling
            } else if sinceRead >= recheck {
                self = .recheck
            } else {
                return nil
            }
        }
    }

    private func run() async {
        // The files at the last read (`.some(nil)` for a store without files), `nil` before the first.
        var signature: StudioStore.FileSignature?? = nil
        var lastRead = ContinuousClock.now
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            let files = store.fileSignature()
            guard
                let reason = Reason(
                    files: files, previous: signature, sinceRead: .now - lastRead, settling: settling,
                    recheck: recheck)
            else { continue }
            signature = .some(files)
            lastRead = .now
            let newest: Int64
            do {
                newest = try store.newestTransactionNumber()
            } catch {
                StudioDebugLog.write("watch: reading the newest transaction failed (\(reason.rawValue))")
                continue
            }
            // Yielded outside the lock: a yield resumes a waiting task under that task's own lock, and
            // cancelling such a task runs its stream's `onTermination` (`unsubscribe`, which takes this
            // lock) under the same task lock. Yielding inside it deadlocked the two (seen in CI: the
            // studio then never stopped on SIGTERM).
            let subscribers = lock.withLock {
                if reason != .noFiles && reason != .recheck {
                    StudioDebugLog.write(
                        "watch: \(reason.rawValue), newest \(newest), \(state.subscribers.count) subscribers")
                }
                return Array(state.subscribers.values)
            }
            for subscriber in subscribers { subscriber.yield(newest) }
        }
    }

    /// Stops watching and ends every subscription.
    func stop() {
        let (task, subscribers) = lock.withLock {
            defer { state.task = nil }
            return (state.task, Array(state.subscribers.values))
        }
        task?.cancel()
        for subscriber in subscribers { subscriber.finish() }
    }
}
