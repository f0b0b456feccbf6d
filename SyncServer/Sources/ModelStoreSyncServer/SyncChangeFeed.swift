import Foundation
import ModelStore

/// Tells every listening client when the shared store changed, whichever server process wrote it:
/// it reads the store's newest history transaction every poll interval (and at once after a commit
/// of this process), and sends each listener the new number. Polling runs only while someone
/// listens.
final class SyncChangeFeed: Sendable {
    /// What a listener receives.
    enum Event: Sendable {
        /// The store's newest transaction is now this one.
        case change(Int64)
        /// Nothing happened for a while.
        case keepAlive
    }

    private struct State {
        var listeners: [UUID: AsyncStream<Event>.Continuation] = [:]
        var newest: Int64 = -1
        var poller: Task<Void, Never>?
    }

    private let container: ModelContainer
    private let interval: Duration
    private let keepAlive: Duration
    private let state = LockedValue(State())

    init(container: ModelContainer, interval: Duration, keepAlive: Duration) {
        self.container = container
        self.interval = interval
        self.keepAlive = keepAlive
    }

    /// The store's newest transaction number, or 0 when it keeps no history or has none.
    func newestTransaction() throws -> Int64 {
        guard let history = container.stores.first as? any HistoryProviding else { return 0 }
        var descriptor = HistoryDescriptor<DefaultHistoryTransaction>(
            sortBy: [SortDescriptor(\.transactionIdentifier, order: .reverse)])
        descriptor.fetchLimit = 1
        return try history.fetchHistory(descriptor).first?.transactionIdentifier ?? 0
    }

    /// A stream of events until the listener stops iterating.
    func listen() -> AsyncStream<Event> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(4))
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        let start = state.withLock { state -> Bool in
            state.listeners[id] = continuation
            return state.poller == nil
        }
        if start {
            let task = Task<Void, Never> { [weak self] in await self?.poll() }
            state.withLock { $0.poller = task }
        }
        return stream
    }

    private func remove(_ id: UUID) {
        let poller = state.withLock { state -> Task<Void, Never>? in
            state.listeners[id] = nil
            guard state.listeners.isEmpty else { return nil }
            defer { state.poller = nil }
            return state.poller
        }
        poller?.cancel()
    }

    private func poll() async {
        let commits = container.changes
        let wake = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let watcher = Task {
            for await _ in commits { wake.continuation.yield() }
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                wake.continuation.yield()
            }
        }
        defer {
            watcher.cancel()
            ticker.cancel()
        }
        let clock = ContinuousClock()
        var lastSent = clock.now
        for await _ in wake.stream {
            if Task.isCancelled { return }
            let newest = await Task.detached { [self] in try? self.newestTransaction() }.value
            let event: Event?
            if let newest, state.withLock({ $0.newest }) != newest {
                let first = state.withLock { state -> Bool in
                    defer { state.newest = newest }
                    return state.newest < 0
                }
                event = first ? nil : .change(newest)
            } else {
                event = clock.now - lastSent >= keepAlive ? .keepAlive : nil
            }
            guard let event else { continue }
            lastSent = clock.now
            for listener in state.withLock({ Array($0.listeners.values) }) { listener.yield(event) }
        }
    }
}

/// Token buckets by subject: each subject may make `rate` requests a second on average and
/// `burst` at once.
final class SyncRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let rate: Double
    private let burst: Double
    private let buckets = LockedValue<[String: Bucket]>([:])

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = max(1, burst)
    }

    /// `nil` when `subject` may make a request now (which takes a token), or the seconds to wait.
    func take(_ subject: String) -> Int? {
        let now = ContinuousClock.now
        return buckets.withLock { buckets in
            if buckets.count > 100_000 { buckets.removeAll() }  // bounded memory; a reset only gives tokens back
            var bucket = buckets[subject] ?? Bucket(tokens: burst, updated: now)
            let elapsed = now - bucket.updated
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + seconds * rate)
            bucket.updated = now
            defer { buckets[subject] = bucket }
            guard bucket.tokens >= 1 else { return max(1, Int(((1 - bucket.tokens) / rate).rounded(.up))) }
            bucket.tokens -= 1
            return nil
        }
    }
}
