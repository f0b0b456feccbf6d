import Foundation
import ModelStore

/// What a page's event stream sends: the number of every transaction committed after the one the
/// page was rendered at, oldest first, each once.
///
/// A page carries the history token it was rendered at (the number of the newest transaction read
/// before its content) and its stream starts after it, so no change between the render and the
/// stream's start can be missed:
/// 1. The feed joins the watch (``ChangeWatcher/subscribe()``) when it is made, before it first reads
///    the store.
/// 2. Its first read sends the transactions committed after the page's: those made while the page
///    travelled to the browser and its script connected.
/// 3. A transaction committed after that read is seen by a later read of the watch, which the feed
///    hears of because it joined before; it then reads the history after the last number it sent.
///
/// The feed keeps its own place in the history; the watch's numbers only say when to read.
struct ChangeFeed: AsyncSequence, Sendable {
    typealias Element = Int64

    /// At most this many transactions are read at a time.
    static let batch = 100

    let store: StudioStore
    /// The number of the transaction the page was rendered at.
    let after: Int64
    private let newest: AsyncStream<Int64>

    /// A feed of the transactions after transaction `after`, watching for new ones through `watcher`
    /// from now on.
    init(store: StudioStore, watcher: ChangeWatcher, after: Int64) {
        self.store = store
        self.after = after
        newest = watcher.subscribe()
    }

    func makeAsyncIterator() -> Iterator {
        Iterator(store: store, newest: newest.makeAsyncIterator(), sent: after)
    }

    /// Reads the store's history after the last number it returned: at once, again at once while a
    /// read fills a batch, then whenever the watch reads a newer number.
    struct Iterator: AsyncIteratorProtocol {
        let store: StudioStore
        var newest: AsyncStream<Int64>.Iterator
        /// The number of the last transaction returned (the page's own at first).
        var sent: Int64
        var pending: [Int64] = []
        /// Whether the history may hold transactions after `sent` that no read returned yet.
        var unread = true

        mutating func next() async throws -> Int64? {
            while pending.isEmpty {
                var watched: Int64?
                if !unread {
                    guard let number = await newest.next() else { return nil }
                    guard number > sent else { continue }
                    watched = number
                }
                pending = try store.transactionNumbers(after: sent, limit: ChangeFeed.batch)
                unread = pending.count == ChangeFeed.batch
                // History deleted meanwhile: nothing to send, and no read until a newer number.
                if pending.isEmpty, let watched { sent = watched }
            }
            sent = pending.removeFirst()
            return sent
        }
    }
}
