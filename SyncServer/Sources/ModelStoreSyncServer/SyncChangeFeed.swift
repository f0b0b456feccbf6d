import Foundation
import ModelStore
import ModelStoreSync

/// Tells listening clients when the shared store changed what their scope holds, whichever server
/// process wrote it: one poller per process reads the history after the last transaction it saw
/// every poll interval, at once after a commit of this process, and at once when the change signal
/// (another process's announcement) says so; it works out once which requesters' scopes the new
/// transactions touch (``ModelStoreSync/SyncHost/touches(_:access:)``), and sends only their
/// listeners the new number. Reads are at least `gap` apart: the wake-ups that arrive during a
/// read and the gap after it make one read, whose answer every listener shares, so a burst of
/// pushes costs a few reads per process, not one per push. Polling runs only while someone listens.
///
/// A listener that asks for changes (``Carry``) gets, instead of the number, the page a pull of its
/// replica from where that replica stands would answer (``ModelStoreSync/SyncCarriedChanges``),
/// when the feed knows where it stands: where this process's last answer to a pull of that replica
/// left it (``note(replica:cursor:)``), or the end of the last page sent to it. The page covers
/// everything after that place, stretches that touched nothing in its scope included (the client
/// was not told of those, so its cursor is still there), as the pull would. A page too large for
/// one pull reply or ``SyncServerConfiguration/maximumCarriedBytes``, or a place unknown, gets the
/// number alone.
final class SyncChangeFeed: Sendable {
    /// What a listener receives.
    enum Event: Sendable {
        /// The store's newest transaction is now this one.
        case change(Int64)
        /// An announcement carrying changes, as the JSON of a ``ModelStoreSync/SyncAnnouncement``.
        case carried(String)
        /// Nothing happened for a while.
        case keepAlive
    }

    /// What a listener that wants changes with its announcements is: its replica and page size,
    /// and whether it reads pages in the packed form.
    struct Carry: Sendable {
        var replica: String
        var limit: Int
        var packed = false
    }

    private struct Listener: Sendable {
        var continuation: AsyncStream<Event>.Continuation
        var carry: Carry?
    }

    /// A page to read for a listener.
    private struct Delivery: Sendable {
        var continuation: AsyncStream<Event>.Continuation
        var access: SyncAccess
        var carry: Carry
        var after: Int64
    }

    private struct State: Sendable {
        /// The listeners by who they are: listeners of one requester share one scope check.
        var listeners: [SyncAccess: [UUID: Listener]] = [:]
        var newest: Int64 = -1
        var poller: Task<Void, Never>?
        /// Where each replica's pulls stand, by replica, as far as this process knows.
        var positions: [String: Int64] = [:]
    }

    private let host: SyncHost
    private let interval: Duration
    private let gap: Duration
    private let keepAlive: Duration
    private let signal: (any SyncChangeSignal)?
    private let threads: SyncBlockingThreads
    private let remote: String
    private let fingerprint: String
    private let maximumBytes: Int
    private let state = LockedValue(State())

    init(
        host: SyncHost, interval: Duration, gap: Duration, keepAlive: Duration, signal: (any SyncChangeSignal)?,
        threads: SyncBlockingThreads, remote: String, fingerprint: String, maximumBytes: Int
    ) {
        self.host = host
        self.threads = threads
        self.interval = interval
        self.gap = gap
        self.keepAlive = keepAlive
        self.signal = signal
        self.remote = remote
        self.fingerprint = fingerprint
        self.maximumBytes = maximumBytes
    }

    /// A stream of the events for a requester with `access`, until the listener stops iterating;
    /// with `carry`, announcements carry changes when they can.
    func listen(access: SyncAccess, carry: Carry? = nil) -> AsyncStream<Event> {
        let id = UUID()
        // Pages that carry changes each need the one before them: a dropped one costs a pull.
        let (stream, continuation) = AsyncStream<Event>.makeStream(
            bufferingPolicy: .bufferingNewest(carry == nil ? 4 : 32))
        continuation.onTermination = { [weak self] _ in self?.remove(id, access: access) }
        // One poller per feed: it starts under the lock, so listeners that open together start one.
        state.withLock { state in
            state.listeners[access, default: [:]][id] = Listener(continuation: continuation, carry: carry)
            if state.poller == nil { state.poller = Task { [weak self] in await self?.poll() } }
        }
        return stream
    }

    /// Records where `replica` stands once it stores a pull reply this process answered, whose
    /// cursor is `cursor`: the next page carried to it starts there.
    func note(replica: String, cursor: SyncCursor) {
        state.withLock { state in
            if state.positions.count > 100_000 { state.positions.removeAll() }  // bounded; a miss costs a pull
            state.positions[replica] = cursor.snapshot == nil ? cursor.transaction : nil
        }
    }

    private func remove(_ id: UUID, access: SyncAccess) {
        let poller = state.withLock { state -> Task<Void, Never>? in
            state.listeners[access]?[id] = nil
            if state.listeners[access]?.isEmpty == true { state.listeners[access] = nil }
            guard state.listeners.isEmpty else { return nil }
            defer { state.poller = nil }
            return state.poller
        }
        poller?.cancel()
    }

    private func poll() async {
        let commits = host.container.changes
        let announcements = signal?.signals()
        let wake = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let watcher = Task {
            for await _ in commits { wake.continuation.yield() }
        }
        let announcementWatcher = Task {
            guard let announcements else { return }
            for await _ in announcements { wake.continuation.yield() }
        }
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                wake.continuation.yield()
            }
        }
        defer {
            watcher.cancel()
            announcementWatcher.cancel()
            ticker.cancel()
        }
        // The first read at once: where the history stands, for listeners that opened before it.
        wake.continuation.yield()
        let clock = ContinuousClock()
        var lastKeepAlive = clock.now
        var lastRead: ContinuousClock.Instant?
        for await _ in wake.stream {
            if Task.isCancelled { return }
            // Wake-ups that arrive during the wait fold into the one being served.
            if let lastRead, clock.now - lastRead < gap { try? await Task.sleep(until: lastRead + gap, clock: clock) }
            lastRead = clock.now
            let (last, accesses) = state.withLock { ($0.newest, Array($0.listeners.keys)) }
            // The host's reads block: on the server's blocking threads, as the requests' are, since
            // a detached task would hold one of the cooperative pool's few threads for the read.
            let read = try? await threads.run { [host] in Self.read(host, after: last, accesses: accesses) }
            if let read, read.newest != last {
                let (plain, carried) = state.withLock { state in
                    state.newest = read.newest
                    return Self.deliveries(state, newest: read.newest, read.touched)
                }
                for listener in plain { listener.yield(.change(read.newest)) }
                if !carried.isEmpty { await carry(carried, newest: read.newest) }
            }
            // Every stream gets a comment now and then, however often others get changes.
            guard clock.now - lastKeepAlive >= keepAlive else { continue }
            lastKeepAlive = clock.now
            for listener in state.withLock({ $0.listeners.values.flatMap(\.values) }) {
                listener.continuation.yield(.keepAlive)
            }
        }
    }

    /// Who hears of the history up to `newest`, whose changes touch the scopes of `touched`:
    /// listeners without pages get the number, listeners that carry changes and stand somewhere
    /// known before `newest` get a page from there.
    private static func deliveries(
        _ state: State, newest: Int64, _ touched: [SyncAccess]
    ) -> (plain: [AsyncStream<Event>.Continuation], carried: [Delivery]) {
        var plain: [AsyncStream<Event>.Continuation] = []
        var carried: [Delivery] = []
        for access in Set(touched) {
            for listener in (state.listeners[access] ?? [:]).values {
                if let carry = listener.carry, let position = state.positions[carry.replica], position < newest {
                    carried.append(
                        Delivery(continuation: listener.continuation, access: access, carry: carry, after: position))
                } else {
                    plain.append(listener.continuation)
                }
            }
        }
        return (plain, carried)
    }

    /// Reads each delivery's page (at once, on the blocking threads) and sends it, or the number
    /// `newest` alone when the page cannot go whole. The deliveries of one requester are read
    /// together: those standing at the same place share one page (``ModelStoreSync/SyncHost/pull(_:access:knownThrough:)``),
    /// from the history this feed's read just brought up to `newest`.
    private func carry(_ deliveries: [Delivery], newest: Int64) async {
        await withTaskGroup(of: Void.self) { group in
            for (access, deliveries) in Dictionary(grouping: deliveries, by: \.access) {
                group.addTask { [self] in
                    let requests = deliveries.map { delivery in
                        SyncPullRequest(
                            replica: delivery.carry.replica, cursor: SyncCursor(transaction: delivery.after),
                            limit: delivery.carry.limit)
                    }
                    let pages = try? await threads.run { [host] in
                        try host.pull(requests, access: access, knownThrough: newest)
                    }
                    for (index, delivery) in deliveries.enumerated() {
                        send(pages?[index], to: delivery, newest: newest)
                    }
                }
            }
        }
    }

    /// Sends a delivery its page, or the number `newest` alone when there is none or it cannot go whole.
    private func send(_ page: SyncPullReply?, to delivery: Delivery, newest: Int64) {
        guard let page, page.cursor.snapshot == nil, !page.hasMore,
            page.cursor.transaction > delivery.after,
            let text = announcement(page, after: delivery.after, newest: newest, packed: delivery.carry.packed)
        else {
            delivery.continuation.yield(.change(newest))
            return
        }
        // Unless a pull answered since moved it: then the client stands where that left it.
        state.withLock { state in
            if state.positions[delivery.carry.replica] == delivery.after {
                state.positions[delivery.carry.replica] = page.cursor.transaction
            }
        }
        delivery.continuation.yield(.carried(text))
    }

    /// The JSON of an announcement of `newest` carrying `page` (read after `after`), on one line,
    /// with the page's models packed when `packed`, or `nil` when it is longer than the limit.
    private func announcement(_ page: SyncPullReply, after: Int64, newest: Int64, packed: Bool) -> String? {
        let announcement = SyncAnnouncement(
            transaction: max(newest, page.cursor.transaction),
            changes: SyncCarriedChanges(remote: remote, schemaFingerprint: fingerprint, after: after, page: page))
        let encoder = JSONEncoder()
        if packed { encoder.userInfo[HTTPSyncTransport.packedCodingKey] = true }
        guard let data = try? encoder.encode(announcement), data.count <= maximumBytes else { return nil }
        return String(decoding: data, as: UTF8.self)
    }
}

extension SyncChangeFeed {
    /// The newest transaction after `last` and which of `accesses` it touches, or `nil` when the
    /// history cannot be read now.
    fileprivate static func read(
        _ host: SyncHost, after last: Int64, accesses: [SyncAccess]
    ) -> (newest: Int64, touched: [SyncAccess])? {
        guard let digest = try? host.changes(after: last) else { return nil }
        // The first read finds where the history stands; a change committed between a listener's
        // opening (whose signal made it pull) and this read would otherwise go unannounced, so
        // every listener hears of it.
        guard last >= 0 else { return (digest.newest, accesses) }
        guard !digest.isEmpty else { return (digest.newest, []) }
        return (digest.newest, accesses.filter { host.touches(digest, access: $0) })
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
