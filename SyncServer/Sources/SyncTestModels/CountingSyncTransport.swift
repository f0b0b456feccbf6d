import Foundation
import ModelStore
import ModelStoreSync

/// A transport that passes every request to another one and counts them by kind, for tests and
/// the load run to see how many requests the engine makes (`hello`, `push`, `push+pull` for a
/// push that carries a pull, `pull`, `fetch`).
public final class CountingSyncTransport: SyncTransport {
    private let inner: any SyncTransport
    private let log = LockedValue<[String]>([])
    private let carried = LockedValue(0)

    /// Counts the requests sent through `inner`.
    public init(_ inner: any SyncTransport) { self.inner = inner }

    /// Every request so far, oldest first, by kind.
    public var requests: [String] { log.withLock { $0 } }

    /// How many requests of each kind so far.
    public var counts: [String: Int] { Dictionary(requests.map { ($0, 1) }, uniquingKeysWith: +) }

    private func note(_ kind: String) { log.withLock { $0.append(kind) } }

    /// Counts and sends a hello.
    public func hello(_ request: SyncHello) async throws -> SyncHelloReply {
        note("hello")
        return try await inner.hello(request)
    }

    /// Counts and sends a push.
    public func push(_ request: SyncPushRequest) async throws -> SyncPushReply {
        note(request.pull == nil ? "push" : "push+pull")
        return try await inner.push(request)
    }

    /// Counts and sends a pull.
    public func pull(_ request: SyncPullRequest) async throws -> SyncPullReply {
        note("pull")
        return try await inner.pull(request)
    }

    /// Counts and sends a fetch.
    public func fetch(_ request: SyncFetchRequest) async throws -> [SyncModelState] {
        note("fetch")
        return try await inner.fetch(request)
    }

    /// The inner transport's signal.
    public func remoteChanges() -> AsyncStream<Void>? { inner.remoteChanges() }

    /// The inner transport's signal, with the transaction numbers it knows.
    public func remoteTransactions() -> AsyncStream<Int64?>? { inner.remoteTransactions() }

    /// How many announcements that carried changes arrived (they are not requests).
    public var carriedAnnouncements: Int { carried.withLock { $0 } }

    /// The inner transport's announcements, counting those that carry changes.
    public func remoteAnnouncements(replica: String, pageSize: Int) -> AsyncStream<SyncAnnouncement>? {
        guard let announcements = inner.remoteAnnouncements(replica: replica, pageSize: pageSize) else { return nil }
        let carried = carried
        return AsyncStream(bufferingPolicy: .bufferingNewest(64)) { continuation in
            let task = Task {
                for await announcement in announcements {
                    if announcement.changes != nil { carried.withLock { $0 += 1 } }
                    continuation.yield(announcement)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
