import Foundation
import ModelStore

/// Two replicas changed the same property of the same model to different values: what the
/// engine knows when a policy decides.
public struct SyncClash: Sendable {
    /// The model's global identifier.
    public var globalID: String
    /// The model's entity.
    public var entity: String
    /// The property both sides changed.
    public var property: String
    /// The value both sides last agreed on, or `nil` when they never did (two new models folded
    /// into one by a unique value).
    public var base: StoreValue?
    /// This replica's value.
    public var local: StoreValue
    /// The remote's value.
    public var remote: StoreValue
    /// When this replica's value was written.
    public var localStamp: SyncStamp
    /// When the remote's value was written.
    public var remoteStamp: SyncStamp
}

/// How a clash on one property is decided. Whatever decides it, the clash is kept as a
/// ``SyncConflict`` the app can read and overturn.
public enum SyncConflictPolicy: Sendable {
    /// The remote's value wins.
    case remoteWins
    /// This replica's value wins, and is pushed.
    case localWins
    /// The value written last wins, by hybrid logical clock (``SyncStamp``): wall time, then a
    /// counter, then the replica's identifier, so every replica decides the same way.
    case lastWriterWins
    /// The closure returns the value to keep (one of the two, or a merge of them, such as a sum).
    case custom(@Sendable (SyncClash) -> StoreValue)

    /// The value the policy keeps.
    func decide(_ clash: SyncClash) -> StoreValue {
        switch self {
        case .remoteWins: clash.remote
        case .localWins: clash.local
        case .lastWriterWins: clash.localStamp > clash.remoteStamp ? clash.local : clash.remote
        case .custom(let decide): decide(clash)
        }
    }

    /// The policy's name, as conflict records keep it.
    var name: String {
        switch self {
        case .remoteWins: "remoteWins"
        case .localWins: "localWins"
        case .lastWriterWins: "lastWriterWins"
        case .custom: "custom"
        }
    }
}

/// What a sync engine does, beyond its two ends.
public struct SyncConfiguration: Sendable {
    /// The policy for clashes no entry of ``policies`` covers. Last writer wins by default.
    public var defaultPolicy: SyncConflictPolicy = .lastWriterWins
    /// Policies by entity name (`"Trip"`) or by entity and property (`"Trip.name"`); the more
    /// specific one applies.
    public var policies: [String: SyncConflictPolicy] = [:]
    /// Whether a model edited on one replica and deleted on another is kept (the edit wins: nothing
    /// anyone typed is lost) or deleted. Either way a conflict is recorded. Kept by default.
    public var editBeatsDelete = true
    /// At most this many models per pull page and per push.
    public var pageSize = 1000
    /// The first wait after a transient failure; each further failure doubles it, up to
    /// ``maximumRetryDelay``, and a random part of up to half of it spreads replicas apart.
    public var retryDelay: Duration = .seconds(1)
    /// The longest wait between retries.
    public var maximumRetryDelay: Duration = .seconds(60)
    /// How long after a local save or a remote change the next round starts, so a burst of saves
    /// makes one round.
    public var debounce: Duration = .milliseconds(200)
    /// How often a running engine syncs when nothing announces a change.
    public var pollInterval: Duration = .seconds(30)

    /// The default configuration.
    public init() {}

    /// The policy for one property of an entity.
    func policy(entity: String, property: String) -> SyncConflictPolicy {
        policies["\(entity).\(property)"] ?? policies[entity] ?? defaultPolicy
    }
}
