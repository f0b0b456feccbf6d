import Foundation
import ModelStore
import ModelStoreSync
import Testing

/// A transport to two hosts of one shared store, as a client meets two server processes behind
/// one address: every push goes to both at once (a retry that reached the second server while the
/// first was still applying), and the reply of one that stored it comes back; every other request
/// goes to the first.
public struct TwoServers: SyncTransport {
    let first: InProcessSyncTransport
    let second: InProcessSyncTransport

    /// A transport to `first` and, for pushes, `second` too.
    public init(first: SyncHost, second: SyncHost) {
        self.first = InProcessSyncTransport(host: first)
        self.second = InProcessSyncTransport(host: second)
    }

    /// Asks the first host.
    public func hello(_ request: SyncHello) async throws -> SyncHelloReply { try await first.hello(request) }

    /// Sends the push to both hosts at once; returns the reply of one that stored it, else the first's
    /// reply or error.
    public func push(_ request: SyncPushRequest) async throws -> SyncPushReply {
        async let one = Result(catching: { try await first.push(request) })
        async let other = Result(catching: { try await second.push(request) })
        let replies = await [one, other]
        if let applied = replies.compactMap({ try? $0.get() }).first(where: \.applied) { return applied }
        return try replies[0].get()
    }

    /// Asks the first host.
    public func pull(_ request: SyncPullRequest) async throws -> SyncPullReply { try await first.pull(request) }

    /// Asks the first host.
    public func fetch(_ request: SyncFetchRequest) async throws -> [SyncModelState] {
        try await first.fetch(request)
    }
}

extension Result where Failure == any Error {
    /// The result of an asynchronous throwing call.
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}

extension SyncScenarios {
    /// Two hosts of one shared store (`first`'s container's) take every push of a replica at the
    /// same moment: the models are stored once, each with one record, and the replica ends up with
    /// them all. Without a unique global identifier per record, both hosts find no record, and each
    /// stores the whole push.
    public static func twoHostsTakingTheSamePushesStoreEachModelOnce(
        first: SyncHost, second: SyncHost, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var configuration = SyncConfiguration()
        configuration.pageSize = 50
        let replica = try Replica(url: "memory:", host: first)
        let engine = try SyncEngine(
            container: replica.container, transport: TwoServers(first: first, second: second),
            configuration: configuration)
        var inserted = 0
        for round in 0..<12 {
            let context = replica.context()
            for number in 0..<40 { context.insert(Leg("leg \(round)-\(number)")) }
            inserted += 40
            try context.save()
            try await engine.syncNow()
        }
        let legs = try ModelContext(first.container).fetch(FetchDescriptor<Leg>())
        #expect(legs.count == inserted, sourceLocation: sourceLocation)
        #expect(Set(legs.map(\.place)).count == inserted, sourceLocation: sourceLocation)
        let recordEntity = SyncMetadata.recordEntityName(for: "Leg")
        let records = try first.container.stores[0].fetchErased(
            DataStoreFetchRequest<SchemaOnlyModel>(
                descriptor: FetchDescriptor(), editingState: EditingState(author: "test"),
                query: StoreQuery(entityName: recordEntity))
        ).snapshots
        let globalIDs = records.compactMap { record -> String? in
            if case .string(let global)? = record["globalID"] { global } else { nil }
        }
        #expect(records.count == inserted, sourceLocation: sourceLocation)
        #expect(Set(globalIDs).count == inserted, sourceLocation: sourceLocation)
        #expect(try replica.context().fetchCount(FetchDescriptor<Leg>()) == inserted, sourceLocation: sourceLocation)
    }
}
