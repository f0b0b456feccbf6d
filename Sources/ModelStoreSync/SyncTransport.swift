import Foundation
import ModelStore

/// How a sync engine talks to its remote: four requests whose messages are plain `Codable` values,
/// so the same engine runs against a store in this process (``InProcessSyncTransport``) or a
/// server across a network.
///
/// Implementations throw ``SyncError`` with ``SyncError/isTransient`` set for failures worth
/// retrying (the network, a busy server) and unset for those that are not (a refused request).
public protocol SyncTransport: Sendable {
    /// Exchanges identities and schema digests; the first request of every round.
    func hello(_ request: SyncHello) async throws -> SyncHelloReply
    /// Applies local changes to the remote, all or nothing.
    func push(_ request: SyncPushRequest) async throws -> SyncPushReply
    /// Reads a page of the remote's changes after a cursor.
    func pull(_ request: SyncPullRequest) async throws -> SyncPullReply
    /// Reads the current state of models by global identifier.
    func fetch(_ request: SyncFetchRequest) async throws -> [SyncModelState]
    /// A signal each time the remote changes, if the transport can tell; `nil` makes a running
    /// engine poll instead.
    func remoteChanges() -> AsyncStream<Void>?
    /// The same signal with the number of the remote's newest transaction when the transport
    /// knows it (`nil` otherwise): a running engine skips a signal for a transaction its pulls
    /// have read already, such as the announcement of its own push.
    func remoteTransactions() -> AsyncStream<Int64?>?
    /// The announcements of ``remoteTransactions()``, for `replica`: a remote that can send each
    /// announcement with the changes `replica` may read (in pages of at most `pageSize` models)
    /// does, and a running engine stores them without pulling (see ``SyncCarriedChanges``).
    func remoteAnnouncements(replica: String, pageSize: Int) -> AsyncStream<SyncAnnouncement>?
}

extension SyncTransport {
    /// No signal: a running engine polls.
    public func remoteChanges() -> AsyncStream<Void>? { nil }

    /// The signals of ``remoteChanges()``, without numbers.
    public func remoteTransactions() -> AsyncStream<Int64?>? {
        guard let changes = remoteChanges() else { return nil }
        return AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task {
                for await _ in changes { continuation.yield(nil) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The signals of ``remoteTransactions()``, without changes.
    public func remoteAnnouncements(replica: String, pageSize: Int) -> AsyncStream<SyncAnnouncement>? {
        guard let transactions = remoteTransactions() else { return nil }
        return AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let task = Task {
                for await transaction in transactions { continuation.yield(SyncAnnouncement(transaction: transaction)) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

/// The transport to a remote store this process opens itself: a file store, SQLite or PostgreSQL.
///
/// Every message is encoded and decoded as JSON on the way, as a network transport would, so
/// nothing but the `Codable` change sets crosses between the two sides; a push's changes and a
/// pulled page's models travel in their packed form (one blob in the JSON), since both sides are
/// this version.
public struct InProcessSyncTransport: SyncTransport {
    /// The remote side.
    public let host: SyncHost
    /// Who the requests come from, for the host's scope.
    public let access: SyncAccess

    /// A transport to `host`, asking as `access`.
    public init(host: SyncHost, access: SyncAccess = .unrestricted) {
        self.host = host
        self.access = access
    }

    /// Answers with the host's identity and schema digest.
    public func hello(_ request: SyncHello) async throws -> SyncHelloReply {
        try Self.roundTrip(host.hello(Self.roundTrip(request)))
    }

    /// Applies the changes to the host's store.
    public func push(_ request: SyncPushRequest) async throws -> SyncPushReply {
        try Self.roundTrip(host.push(Self.roundTrip(request), access: access))
    }

    /// Reads a page of the host's changes.
    public func pull(_ request: SyncPullRequest) async throws -> SyncPullReply {
        try Self.roundTrip(host.pull(Self.roundTrip(request), access: access))
    }

    /// Reads models from the host's store.
    public func fetch(_ request: SyncFetchRequest) async throws -> [SyncModelState] {
        try Self.roundTrip(host.fetch(Self.roundTrip(request), access: access))
    }

    /// A signal after every change committed to the host's container.
    public func remoteChanges() -> AsyncStream<Void>? {
        let changes = host.container.changes
        return AsyncStream { continuation in
            let task = Task {
                for await _ in changes { continuation.yield() }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private static func roundTrip<Message: Codable>(_ message: Message) throws -> Message {
        // Both sides are this version: a push's changes and a pulled page's models travel packed
        // (see SyncPushRequest's and SyncPullReply's coding).
        let encoder = JSONEncoder()
        encoder.userInfo[SyncMessageCoding.packedChanges] = true
        return try JSONDecoder().decode(Message.self, from: encoder.encode(message))
    }
}
