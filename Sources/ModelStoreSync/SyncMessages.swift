import Foundation
import ModelStore

/// A hybrid logical clock reading: wall-clock milliseconds, a counter for readings in the same
/// millisecond, and the replica that took it, so that every two readings are ordered and no two
/// replicas' readings are equal. The last-writer-wins policy compares them.
public struct SyncStamp: Codable, Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970, never behind any reading this replica has seen.
    public var milliseconds: Int64
    /// Orders readings within one millisecond.
    public var counter: Int32
    /// The replica that took the reading; breaks ties between replicas.
    public var replica: String

    /// A reading.
    public init(milliseconds: Int64, counter: Int32, replica: String) {
        self.milliseconds = milliseconds
        self.counter = counter
        self.replica = replica
    }

    /// The earliest reading: what a value written before anyone kept stamps has.
    public static let zero = SyncStamp(milliseconds: 0, counter: 0, replica: "")

    /// Orders by time, then counter, then replica.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.milliseconds, lhs.counter, lhs.replica) < (rhs.milliseconds, rhs.counter, rhs.replica)
    }

    /// `milliseconds.counter@replica`.
    public var description: String { "\(milliseconds).\(counter)@\(replica)" }

    /// The next reading after `self` on `replica` at wall time `now`, also after `seen` (the newest
    /// reading received from elsewhere), so causality survives skewed clocks.
    func next(replica: String, now: Date, seen: SyncStamp = .zero) -> SyncStamp {
        let wall = Int64((now.timeIntervalSince1970 * 1000).rounded(.down))
        let newest = max(self, seen)
        if wall > newest.milliseconds { return SyncStamp(milliseconds: wall, counter: 0, replica: replica) }
        return SyncStamp(milliseconds: newest.milliseconds, counter: newest.counter + 1, replica: replica)
    }
}

/// One model's state as it travels between replicas: its global identifier, its entity, and its
/// values by property name, with relationships holding global identifiers
/// (``SyncModelState/reference(to:entity:)``). A deleted model has no values.
public struct SyncModelState: Codable, Sendable, Hashable {
    /// The model's identifier on every replica.
    public var globalID: String
    /// The model's entity.
    public var entity: String
    /// Every stored property's value, or `nil` for a deleted model.
    public var values: [String: StoreValue]?
    /// When each property was last written, for the last-writer-wins policy.
    public var stamps: [String: SyncStamp]

    /// A model state.
    public init(globalID: String, entity: String, values: [String: StoreValue]?, stamps: [String: SyncStamp] = [:]) {
        self.globalID = globalID
        self.entity = entity
        self.values = values
        self.stamps = stamps
    }

    /// How a relationship names a model in a change set: the global identifier as the primary key
    /// of an identifier in the pseudo-store `sync`.
    public static func reference(to globalID: String, entity: String) -> PersistentIdentifier {
        .identifier(for: "sync", entityName: entity, primaryKey: globalID)
    }
}

/// One local change a replica pushes: the changed properties' new values and the values it based
/// them on, so the receiver can tell a clean change from a clash.
public struct SyncChange: Codable, Sendable, Hashable {
    /// What happened to the model.
    public enum Kind: String, Codable, Sendable {
        /// The model is new: ``SyncChange/values`` holds every property.
        case insert
        /// Some properties changed: ``SyncChange/values`` holds those, ``SyncChange/base`` what they were.
        case update
        /// The model was deleted.
        case delete
    }

    /// The model's identifier on every replica.
    public var globalID: String
    /// The model's entity.
    public var entity: String
    /// What happened.
    public var kind: Kind
    /// New values by property name (relationships as global references).
    public var values: [String: StoreValue]
    /// For an update, the values the pushing replica last synced for the same properties.
    public var base: [String: StoreValue]
    /// When the change was made, on the pushing replica's clock.
    public var stamp: SyncStamp

    /// A change.
    public init(
        globalID: String, entity: String, kind: Kind, values: [String: StoreValue] = [:],
        base: [String: StoreValue] = [:], stamp: SyncStamp
    ) {
        self.globalID = globalID
        self.entity = entity
        self.kind = kind
        self.values = values
        self.base = base
        self.stamp = stamp
    }
}

/// Where a replica stands in a remote's changes.
///
/// A first pull reads the remote whole, entity by entity in identifier order (``snapshot``), and
/// then follows its history from the transaction that was newest when the snapshot began.
public struct SyncCursor: Codable, Sendable, Hashable, CustomStringConvertible {
    /// A position inside a whole read of the remote.
    public struct SnapshotPosition: Codable, Sendable, Hashable {
        /// The remote's newest transaction when the read began: history is followed from there.
        public var head: Int64
        /// The entity being read.
        public var entity: String
        /// The primary key the read of that entity has reached (every model at or before it was
        /// read), or `nil` at its start: the next page starts after it.
        public var after: PrimaryKey?
        /// How many models of that entity were read. Stores with text keys page by it, since
        /// the host can only ask them for models by position.
        public var offset: Int
        /// The highest primary key of that entity when its read began, once it has more than one
        /// page: the read of the entity ends there (models added later arrive through history).
        public var through: PrimaryKey? = nil
    }

    /// The remote's last transaction whose changes this replica has.
    public var transaction: Int64
    /// The whole read under way, if any.
    public var snapshot: SnapshotPosition?

    /// The position of a replica that has nothing yet: a whole read comes first.
    public static let start = SyncCursor(
        transaction: 0, snapshot: SnapshotPosition(head: -1, entity: "", after: nil, offset: 0))

    /// A cursor.
    public init(transaction: Int64, snapshot: SnapshotPosition? = nil) {
        self.transaction = transaction
        self.snapshot = snapshot
    }

    /// `#N`, or `snapshot of E after K`.
    public var description: String {
        guard let snapshot else { return "#\(transaction)" }
        return "snapshot of '\(snapshot.entity)'" + (snapshot.after.map { " after \($0)" } ?? "")
    }
}

/// The first message of a round: who is asking, with which schema.
public struct SyncHello: Codable, Sendable {
    /// The asking replica.
    public var replica: String
    /// Its schema version.
    public var schemaVersion: String
    /// A digest of its synced entities and their properties.
    public var schemaFingerprint: String

    /// A hello from `replica` with its schema's version and digest.
    public init(replica: String, schemaVersion: String, schemaFingerprint: String) {
        self.replica = replica
        self.schemaVersion = schemaVersion
        self.schemaFingerprint = schemaFingerprint
    }
}

/// The remote's answer to ``SyncHello``.
public struct SyncHelloReply: Codable, Sendable {
    /// The remote store's identifier.
    public var remote: String
    /// Its schema version.
    public var schemaVersion: String
    /// A digest of its synced entities and their properties.
    public var schemaFingerprint: String

    /// A reply from the remote store `remote` with its schema's version and digest.
    public init(remote: String, schemaVersion: String, schemaFingerprint: String) {
        self.remote = remote
        self.schemaVersion = schemaVersion
        self.schemaFingerprint = schemaFingerprint
    }
}

/// What a replica learned from its hello, sent with each later request so that the remote refuses
/// a request meant for another store or another schema: an engine says hello once, not every round.
public struct SyncSession: Codable, Sendable, Hashable {
    /// The remote store the hello answered for (``SyncHelloReply/remote``).
    public var remote: String
    /// The digest of the replica's schema, which the hello found equal to the remote's.
    public var schemaFingerprint: String

    /// The session of a replica with schema digest `schemaFingerprint`, talking to the store `remote`.
    public init(remote: String, schemaFingerprint: String) {
        self.remote = remote
        self.schemaFingerprint = schemaFingerprint
    }
}

/// Local changes sent to the remote, applied there all or nothing.
public struct SyncPushRequest: Codable, Sendable {
    /// The pushing replica.
    public var replica: String
    /// The changes.
    public var changes: [SyncChange]
    /// The replica's session, which the remote checks before anything else (`nil` from replicas
    /// that say hello every round, which the remote does not check).
    public var session: SyncSession?
    /// A pull the remote answers in the same reply (``SyncPushReply/pulled``) once the changes
    /// are stored, so a round that pushes first needs no request of its own to pull; its replica
    /// is the push's.
    public var pull: SyncPullRequest?

    /// A push of `changes` from `replica`, in `session`, followed by `pull` when given.
    public init(
        replica: String, changes: [SyncChange], session: SyncSession? = nil, pull: SyncPullRequest? = nil
    ) {
        self.replica = replica
        self.changes = changes
        self.session = session
        self.pull = pull
    }
}

/// The remote's answer to a push.
public struct SyncPushReply: Codable, Sendable {
    /// Whether the changes were stored. When not, ``stale`` says why and nothing was stored.
    public var applied: Bool
    /// Models whose remote values no longer match the pushed base: pull, merge, and push again.
    public var stale: [String]
    /// Pushed new models that the remote folded into a model it already had with the same unique
    /// values, by pushed global identifier: the local model takes the existing one's identifier.
    public var merged: [String: String]
    /// The remote models' states after the push, for each model of ``merged``'s values (the
    /// pushed models themselves hold what was pushed).
    public var states: [SyncModelState]
    /// The answer to the request's ``SyncPushRequest/pull``, read after the changes were stored;
    /// `nil` when the push was not applied, the request asked for none, or the remote could not
    /// read it (the replica then pulls with a request of its own).
    public var pulled: SyncPullReply?

    /// A reply to a push.
    public init(
        applied: Bool, stale: [String], merged: [String: String], states: [SyncModelState],
        pulled: SyncPullReply? = nil
    ) {
        self.applied = applied
        self.stale = stale
        self.merged = merged
        self.states = states
        self.pulled = pulled
    }
}

/// A request for the remote's changes after a cursor.
public struct SyncPullRequest: Codable, Sendable {
    /// The pulling replica, whose own pushes are left out.
    public var replica: String
    /// Where it stands.
    public var cursor: SyncCursor
    /// At most this many models per reply.
    public var limit: Int
    /// The replica's session, which the remote checks first (see ``SyncPushRequest/session``).
    public var session: SyncSession?

    /// A request from `replica` for at most `limit` models after `cursor`, in `session`.
    public init(replica: String, cursor: SyncCursor, limit: Int, session: SyncSession? = nil) {
        self.replica = replica
        self.cursor = cursor
        self.limit = limit
        self.session = session
    }
}

/// A page of the remote's changes.
public struct SyncPullReply: Codable, Sendable {
    /// The current state of every model that changed in the page (deleted ones without values).
    public var models: [SyncModelState]
    /// Where the replica stands once it has stored them.
    public var cursor: SyncCursor
    /// Whether more pages follow.
    public var hasMore: Bool

    /// A page of changes.
    public init(models: [SyncModelState], cursor: SyncCursor, hasMore: Bool) {
        self.models = models
        self.cursor = cursor
        self.hasMore = hasMore
    }
}

/// A request for the current state of models by global identifier.
public struct SyncFetchRequest: Codable, Sendable {
    /// The models.
    public var globalIDs: [String]
    /// The replica's session, which the remote checks first (see ``SyncPushRequest/session``).
    public var session: SyncSession?

    /// A request for the models with these global identifiers, in `session`.
    public init(globalIDs: [String], session: SyncSession? = nil) {
        self.globalIDs = globalIDs
        self.session = session
    }
}

// The values and stamps of models and changes travel in SyncRecordCoding's compact form (as `Data`,
// base64 in JSON): coding them property by property, one keyed container per value, took more time
// than everything else in a round together. A message written with them as JSON objects still reads.

extension SyncModelState {
    private enum CodingKeys: String, CodingKey {
        case globalID, entity, values, stamps
    }

    /// Encodes the identifiers as text and the values and stamps in the compact form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(globalID, forKey: .globalID)
        try container.encode(entity, forKey: .entity)
        try container.encode(values.map(SyncRecordCoding.encode), forKey: .values)
        try container.encode(SyncRecordCoding.encode(stamps), forKey: .stamps)
    }

    /// Decodes a state written by ``encode(to:)``, or with values and stamps as JSON objects.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            globalID: try container.decode(String.self, forKey: .globalID),
            entity: try container.decode(String.self, forKey: .entity),
            values: try SyncMessageCoding.values(in: container, forKey: .values),
            stamps: try SyncMessageCoding.stamps(in: container, forKey: .stamps) ?? [:])
    }
}

extension SyncChange {
    private enum CodingKeys: String, CodingKey {
        case globalID, entity, kind, values, base, stamp
    }

    /// Encodes the identifiers as text and the values and base values in the compact form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(globalID, forKey: .globalID)
        try container.encode(entity, forKey: .entity)
        try container.encode(kind, forKey: .kind)
        try container.encode(SyncRecordCoding.encode(values), forKey: .values)
        try container.encode(SyncRecordCoding.encode(base), forKey: .base)
        try container.encode(stamp, forKey: .stamp)
    }

    /// Decodes a change written by ``encode(to:)``, or with values as JSON objects.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            globalID: try container.decode(String.self, forKey: .globalID),
            entity: try container.decode(String.self, forKey: .entity),
            kind: try container.decode(Kind.self, forKey: .kind),
            values: try SyncMessageCoding.values(in: container, forKey: .values) ?? [:],
            base: try SyncMessageCoding.values(in: container, forKey: .base) ?? [:],
            stamp: try container.decode(SyncStamp.self, forKey: .stamp))
    }
}

extension SyncPullReply {
    private enum CodingKeys: String, CodingKey {
        case models, packedModels, cursor, hasMore
    }

    /// Encodes the models as a JSON array, or packed in one blob (`packedModels`) when the
    /// encoder's ``SyncMessageCoding/packedChanges`` user info is `true`, which a transport sets
    /// only when the replica reading the reply is known to read it (one of this version or later).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try SyncMessageCoding.encode(
            models, in: &container, plain: .models, packed: .packedModels, encoder: encoder,
            pack: SyncRecordCoding.encode(models:))
        try container.encode(cursor, forKey: .cursor)
        try container.encode(hasMore, forKey: .hasMore)
    }

    /// Decodes a page with its models as a JSON array (every version writes it) or packed.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            models: try SyncMessageCoding.decode(
                in: container, plain: .models, packed: .packedModels, what: "models",
                unpack: SyncRecordCoding.decodeModels),
            cursor: try container.decode(SyncCursor.self, forKey: .cursor),
            hasMore: try container.decode(Bool.self, forKey: .hasMore))
    }
}

extension SyncPushRequest {
    private enum CodingKeys: String, CodingKey {
        case replica, changes, packedChanges, session, pull
    }

    /// Encodes the changes as a JSON array, or packed in one blob (`packedChanges`) when the
    /// encoder's ``SyncMessageCoding/packedChanges`` user info is `true`: a transport sets it only
    /// for a remote known to read it (a host of this version or later), since an older one
    /// refuses a push without `changes`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(replica, forKey: .replica)
        try SyncMessageCoding.encode(
            changes, in: &container, plain: .changes, packed: .packedChanges, encoder: encoder,
            pack: SyncRecordCoding.encode(changes:))
        try container.encodeIfPresent(session, forKey: .session)
        try container.encodeIfPresent(pull, forKey: .pull)
    }

    /// Decodes a push with its changes as a JSON array (every version writes it) or packed.
    ///
    /// When the decoder's user info holds a limit under ``maximumChangesKey``, a push that says it
    /// carries more changes throws ``TooManyChanges`` before any change is decoded.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let limit = decoder.userInfo[Self.maximumChangesKey] as? Int
        self.init(
            replica: try container.decode(String.self, forKey: .replica),
            changes: try SyncMessageCoding.decode(
                in: container, plain: .changes, packed: .packedChanges, what: "changes", limit: limit,
                unpack: { blob in
                    guard let limit else { return SyncRecordCoding.decodeChanges(blob) }
                    return try SyncRecordCoding.decodeChanges(blob, limit: limit)
                }),
            session: try container.decodeIfPresent(SyncSession.self, forKey: .session),
            pull: try container.decodeIfPresent(SyncPullRequest.self, forKey: .pull))
    }
}

extension SyncPushRequest {
    /// The `JSONDecoder` user info key that limits how many changes a decoded push may carry: set
    /// it to an `Int`, and decoding a push that says it carries more throws ``TooManyChanges``
    /// before any of its changes is decoded. A packed push says so in the count at the start of
    /// its blob; a push with a JSON array, in the array's length (which `JSONDecoder` knows before
    /// reading an element). A sync server sets it to its per-push limit, so a body that claims
    /// hundreds of thousands of changes costs it no more than reading that claim.
    public static let maximumChangesKey = CodingUserInfoKey(rawValue: "ModelStoreSync.maximumChangesPerPush")!

    /// Decoding a push stopped because it says it carries more changes than the limit set under
    /// ``maximumChangesKey``: none of its changes was decoded.
    public struct TooManyChanges: Error, Sendable, Hashable, CustomStringConvertible {
        /// How many changes the push says it carries. From a decoder that does not know an array's
        /// length before reading it, the limit plus one: its changes were read up to there.
        public var count: Int
        /// The limit it exceeds.
        public var limit: Int

        /// The error for a push of `count` changes, more than `limit`.
        public init(count: Int, limit: Int) {
            self.count = count
            self.limit = limit
        }

        /// `the push carries N changes, more than the L allowed`.
        public var description: String { "the push carries \(count) changes, more than the \(limit) allowed" }
    }
}

/// Reads the compact form of values and stamps in a message, or the JSON objects of older writers.
enum SyncMessageCoding {
    /// The user info key that makes an encoder write a push's changes and a pulled page's models
    /// packed (``SyncPushRequest/encode(to:)``, ``SyncPullReply/encode(to:)``).
    static let packedChanges = CodingUserInfoKey(rawValue: "ModelStoreSync.packedChanges")!

    /// Writes `list` under `plain` as a JSON array, or under `packed` as one blob when the encoder
    /// asks for the packed form (``packedChanges``).
    static func encode<Element: Encodable, Key: CodingKey>(
        _ list: [Element], in container: inout KeyedEncodingContainer<Key>, plain: Key, packed: Key,
        encoder: any Encoder, pack: ([Element]) -> Data
    ) throws {
        if encoder.userInfo[packedChanges] as? Bool == true {
            try container.encode(pack(list), forKey: packed)
        } else {
            try container.encode(list, forKey: plain)
        }
    }

    /// Reads what ``encode(_:in:plain:packed:encoder:pack:)`` wrote: the blob under `packed` when
    /// there is one (a broken one is an error naming the key), the JSON array under `plain` otherwise.
    ///
    /// With a `limit`, a JSON array longer than it throws ``SyncPushRequest/TooManyChanges`` before
    /// its first element is decoded (`unpack` checks a blob's count itself).
    static func decode<Element: Decodable, Key: CodingKey>(
        in container: KeyedDecodingContainer<Key>, plain: Key, packed: Key, what: String, limit: Int? = nil,
        unpack: (Data) throws -> [Element]?
    ) throws -> [Element] {
        guard container.contains(packed) else {
            guard let limit else { return try container.decode([Element].self, forKey: plain) }
            var array = try container.nestedUnkeyedContainer(forKey: plain)
            if let count = array.count, count > limit {
                throw SyncPushRequest.TooManyChanges(count: count, limit: limit)
            }
            var list: [Element] = []
            list.reserveCapacity(min(array.count ?? 0, limit))
            while !array.isAtEnd {
                // Only a decoder that did not know the length up front gets here with a long array.
                guard list.count < limit else { throw SyncPushRequest.TooManyChanges(count: limit + 1, limit: limit) }
                list.append(try array.decode(Element.self))
            }
            return list
        }
        guard let list = try unpack(try container.decode(Data.self, forKey: packed)) else {
            throw DecodingError.dataCorruptedError(
                forKey: packed, in: container, debugDescription: "the \(what) are not in the packed form")
        }
        return list
    }

    static func values<Key: CodingKey>(
        in container: KeyedDecodingContainer<Key>, forKey key: Key
    ) throws -> [String: StoreValue]? {
        guard let data = try? container.decodeIfPresent(Data.self, forKey: key) else {
            return try container.decodeIfPresent([String: StoreValue].self, forKey: key)
        }
        guard let values = SyncRecordCoding.decodeValues(data) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "the values are not in the compact form")
        }
        return values
    }

    static func stamps<Key: CodingKey>(
        in container: KeyedDecodingContainer<Key>, forKey key: Key
    ) throws -> [String: SyncStamp]? {
        guard let data = try? container.decodeIfPresent(Data.self, forKey: key) else {
            return try container.decodeIfPresent([String: SyncStamp].self, forKey: key)
        }
        guard let stamps = SyncRecordCoding.decodeStamps(data) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "the stamps are not in the compact form")
        }
        return stamps
    }
}
