import Foundation

/// A remote's word that it changed, as a running engine hears it: the number of the remote's newest
/// transaction when known and, from a remote that sends them, the changes this replica may read.
///
/// The sync server sends announcements with changes to a client that asks for them
/// (``HTTPSyncTransport/remoteAnnouncements(replica:pageSize:)``); its engine then stores them as
/// it would a pulled page, without a request of its own.
public struct SyncAnnouncement: Codable, Sendable {
    /// The remote's newest transaction, or `nil` when the announcement does not say (after a
    /// reconnection, for instance).
    public var transaction: Int64?
    /// The changes the remote sent with the announcement, if any.
    public var changes: SyncCarriedChanges?

    /// An announcement of `transaction`, carrying `changes` when given.
    public init(transaction: Int64?, changes: SyncCarriedChanges? = nil) {
        self.transaction = transaction
        self.changes = changes
    }
}

/// Changes a remote sends with an announcement: the reply to a pull from the cursor
/// ``after``, as the remote would answer it to this replica (the same scope, the same page size),
/// for the store ``remote`` with the schema digest ``schemaFingerprint``.
///
/// An engine stores the page exactly as a pulled one (the same merge, conflicts and cursor), and
/// only when it starts at the engine's own cursor, on the remote of its session, with no push of
/// its own since its last pull; otherwise it pulls, as it would for an announcement without changes.
public struct SyncCarriedChanges: Codable, Sendable {
    /// The remote store the page was read from (``SyncHelloReply/remote``).
    public var remote: String
    /// The digest of that store's schema (``SyncHelloReply/schemaFingerprint``).
    public var schemaFingerprint: String
    /// The remote transaction the page starts after: the cursor of the pull it answers.
    public var after: Int64
    /// The page; its cursor is where the replica stands once it has stored it.
    public var page: SyncPullReply

    /// The page `page` of the store `remote` (schema digest `schemaFingerprint`), read from the
    /// cursor `after`.
    public init(remote: String, schemaFingerprint: String, after: Int64, page: SyncPullReply) {
        self.remote = remote
        self.schemaFingerprint = schemaFingerprint
        self.after = after
        self.page = page
    }
}
