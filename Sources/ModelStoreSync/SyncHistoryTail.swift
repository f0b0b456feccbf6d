import Foundation
import ModelStore

/// The newest part of a shared store's history, kept by a ``SyncHost`` so that many pulls at once
/// cost one read of the history, not one each.
///
/// Every answer comes from a read of the store that began after the call did, so it holds every
/// transaction committed before the call (what a pull straight from the store would see): a call
/// that arrives while a read runs waits for it to end and then for the next one, which serves
/// every call that arrived meanwhile. The window holds every transaction numbered above
/// ``start``, up to ``maximumCount`` of them; a cursor before the window is read from the store.
final class SyncHistoryTail: @unchecked Sendable {
    // Safety: every stored `var` is read and written only while `condition` is locked.
    private let condition = NSCondition()
    private let store: SyncStore
    private let maximumCount: Int
    /// The window holds every transaction numbered above this one; `nil` before the first read.
    private var start: Int64?
    private var window: [DefaultHistoryTransaction] = []
    private var readsStarted = 0
    private var readsEnded = 0
    private var reading = false
    private var lastFailure: (any Error)?

    init(store: SyncStore, maximumCount: Int = 4_096) {
        self.store = store
        self.maximumCount = maximumCount
    }

    /// The transactions after number `after`, oldest first, at most `limit`, as of a read that
    /// began after this call; `nil` when the window does not reach back to `after`.
    func transactions(after: Int64, limit: Int) throws -> [DefaultHistoryTransaction]? {
        try fresh { start, window in
            guard let start, after >= start else { return nil }
            let first = window.firstIndex { $0.transactionIdentifier > after } ?? window.endIndex
            return Array(window[first..<min(window.endIndex, first + limit)])
        }
    }

    /// The transactions after number `after`, oldest first, at most `limit`, from the window as it
    /// is, when it already holds transaction `through` (read before this call, so no read need
    /// begin after it); `nil` when it does not hold `through` or does not reach back to `after`.
    func transactions(after: Int64, limit: Int, holding through: Int64) -> [DefaultHistoryTransaction]? {
        condition.lock()
        defer { condition.unlock() }
        guard let start, after >= start, let last = window.last?.transactionIdentifier ?? self.start,
            last >= through
        else { return nil }
        let first = window.firstIndex { $0.transactionIdentifier > after } ?? window.endIndex
        return Array(window[first..<min(window.endIndex, first + limit)])
    }

    /// The number of the newest transaction, as of a read that began after this call.
    func newest() throws -> Int64 {
        try fresh { start, window in window.last?.transactionIdentifier ?? start ?? 0 }
    }

    /// `body` over the window once a read that began after this call has ended; throws that
    /// read's error if it failed.
    private func fresh<Result>(_ body: (Int64?, [DefaultHistoryTransaction]) throws -> Result) throws -> Result {
        condition.lock()
        defer { condition.unlock() }
        // A read running now may have begun before this call: only the one after it counts.
        let needed = readsStarted + 1
        while readsEnded < needed {
            if reading {
                condition.wait()
                continue
            }
            reading = true
            readsStarted += 1
            let number = readsStarted
            let (start, head) = (self.start, window.last?.transactionIdentifier ?? self.start)
            condition.unlock()
            let result = Swift.Result { try read(start: start, head: head) }
            condition.lock()
            reading = false
            readsEnded = number
            switch result {
            case .success(let (start, added)):
                lastFailure = nil
                if start != self.start { window = [] }
                self.start = start
                window += added
                if window.count > maximumCount {
                    let dropped = window.count - maximumCount
                    self.start = window[dropped - 1].transactionIdentifier
                    window.removeFirst(dropped)
                }
            case .failure(let error):
                lastFailure = error
            }
            condition.broadcast()
        }
        if let lastFailure { throw lastFailure }
        return try body(start, window)
    }

    /// What a read adds: the window's start (a new one when the window begins afresh) and the
    /// transactions after `head`.
    private func read(start: Int64?, head: Int64?) throws -> (Int64, [DefaultHistoryTransaction]) {
        if let start, let head {
            do {
                var added: [DefaultHistoryTransaction] = []
                var after = head
                while true {
                    let page = try store.transactions(after: after, limit: 1_000)
                    added += page
                    guard page.count == 1_000, let last = page.last else { break }
                    after = last.transactionIdentifier
                }
                return (start, added)
            } catch DataStoreError.historyTokenExpired {
                // The store trimmed history this window had not read yet: begin afresh at the
                // newest transaction; cursors before it are read from the store.
            }
        }
        return (try store.newestTransaction(), [])
    }
}
