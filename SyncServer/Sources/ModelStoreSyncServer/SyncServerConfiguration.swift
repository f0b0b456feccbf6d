import Foundation
import ModelStore
import ModelStoreSync

/// The limits and timings of a ``SyncServer``; the defaults suit a server of a few hundred clients.
public struct SyncServerConfiguration: Sendable {
    /// The largest request body accepted, in bytes; a larger one is answered 413.
    public var maximumRequestBytes = 8 << 20
    /// The most changes one push may carry.
    public var maximumChangesPerPush = 5_000
    /// The most models one pull reply holds; a larger requested limit is lowered to this.
    public var maximumPullLimit = 1_000
    /// The largest announcement that carries changes to a listening client, in bytes of JSON: an
    /// announcement whose page would be larger goes without it, and the client pulls. (Its page
    /// also holds at most the models of a pull reply, ``maximumPullLimit`` and the client's page
    /// size.)
    public var maximumCarriedBytes = 256 << 10
    /// The most global identifiers one fetch may name.
    public var maximumFetchIdentifiers = 5_000
    /// The longest replica name or global identifier accepted, in characters.
    public var maximumIdentifierLength = 200
    /// Requests each subject may make per second, on average; more are answered 429.
    public var requestsPerSecond: Double = 50
    /// Requests a subject may make at once above the average.
    public var requestBurst: Double = 100
    /// How often the store's newest transaction is read, to tell clients of every server process
    /// when to pull; with a ``SyncChangeSignal`` the read also happens at once on each
    /// announcement, and this interval only bounds the delay of a missed one.
    public var changePollInterval: Duration = .milliseconds(100)
    /// The shortest time between two reads of the history for the live channel: the wake-ups
    /// (commits, announcements, polls) that arrive during a read and this long after it make one
    /// read, so a burst of pushes costs each process a few reads, not one each.
    public var minimumChangeReadGap: Duration = .milliseconds(20)
    /// How often an idle change stream gets a comment, so proxies and clients keep it open.
    public var keepAliveInterval: Duration = .seconds(15)
    /// How many threads run the store's blocking work (each push, pull, fetch and live-channel
    /// read holds one while it waits for the database); a request waits for a thread only when
    /// this many are busy. More than the store's connections (PostgreSQL's `maximumConnections`,
    /// 8 by default) lets requests queue for a connection rather than for a thread, and lets pushes
    /// that wait for their requester's turn not hold up others.
    public var blockingThreads = 32
    /// Whether the server reads and writes change sets in the packed form: it says so on every
    /// answer (``ModelStoreSync/HTTPSyncTransport/formsHeader``), reads packed pushes, and answers
    /// pulls, pushes with a pull and carried pages packed to clients that ask with the same header.
    /// When `false` it behaves as a server from before the form: no header, JSON arrays only, and
    /// a packed push refused 400 with nothing stored (a client of this version then sends arrays).
    public var packedChanges = true
    /// Whether pushes to a PostgreSQL store that arrive while another push's save is being
    /// committed are committed together, in one transaction: one lock of the store's history
    /// counter and one flush of its log for the group instead of one each, one after another. Each
    /// push is still checked on its own (its scope, its conflicts, its unique values) and a refused
    /// one changes nothing for the others; each is answered once the shared commit is durable. The
    /// server sets the store's `PostgreSQLStore/groupsCommits` to this when it starts (which also
    /// groups the app's own saves to that store, if it shares the container); other stores ignore it.
    public var groupCommit = true

    /// The defaults.
    public init() {}
}

extension SyncScope {
    /// A scope where each model of an entity that has the string attribute `attribute` belongs to
    /// the subject it names: a client holds and changes only models whose `attribute` equals its
    /// token's subject. Entities without that attribute are shared whole.
    ///
    /// In the entity of a class hierarchy, the attribute scopes the classes that declare or
    /// inherit it: when the root class declares it, every model of the hierarchy belongs to its
    /// owner; when only a subclass does, that subclass's models (and its subclasses') belong to
    /// their owners and the other classes' models are shared whole.
    public static func owner(attribute: String, schema: Schema) -> SyncScope {
        let owned = schema.entities.compactMap { entity -> (name: String, unowned: StoreFilter?)? in
            guard !SyncMetadata.isMetadata(entity.name) else { return nil }
            let type = entity.attribute(named: attribute)?.valueType
            guard type == .string || type == .optional(.string) else { return nil }
            return (entity.name, Self.classesWithout(attribute, in: entity))
        }
        return SyncScope { access in
            Dictionary(
                uniqueKeysWithValues: owned.map { entity in
                    let mine = access.subject.map { StoreFilter.equal(attribute, .string($0)) } ?? .constant(false)
                    return (entity.name, entity.unowned.map { .or([$0, mine]) } ?? mine)
                })
        }
    }

    /// A filter that admits the models of `entity`'s classes that neither declare nor inherit
    /// `attribute`, or `nil` when every class has it (or the entity stores one class).
    private static func classesWithout(_ attribute: String, in entity: Schema.Entity) -> StoreFilter? {
        guard let classAttribute = entity.classAttribute else { return nil }
        var declaring: [String: Bool] = [:]  // parents come before their children
        for modelClass in entity.classes {
            declaring[modelClass.name] =
                modelClass.ownPropertyNames.contains(attribute)
                || modelClass.superclassName.flatMap { declaring[$0] } == true
        }
        let without = entity.classes.filter { declaring[$0.name] != true }.map { StoreValue.string($0.name) }
        return without.isEmpty ? nil : .isIn(StorePath([classAttribute.name]), without)
    }
}
