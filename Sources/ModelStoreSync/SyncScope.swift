import Foundation
import ModelStore
import ModelStoreAdapterKit

/// Who a request to a ``SyncHost`` comes from, as its transport authenticated them: what a
/// ``SyncScope`` decides by. A server fills it from a verified token; the in-process transport
/// sends ``unrestricted``.
public struct SyncAccess: Sendable, Hashable, Codable {
    /// The authenticated subject (a user or device identifier), if any.
    public var subject: String?
    /// Further claims by name, as the token carried them.
    public var claims: [String: String]

    /// An identity.
    public init(subject: String?, claims: [String: String] = [:]) {
        self.subject = subject
        self.claims = claims
    }

    /// A request from inside the process, which no scope narrows unless it says so.
    public static let unrestricted = SyncAccess(subject: nil)
}

/// What part of a shared store each replica holds: a filter per entity, from the requester's
/// identity. A replica pulls only models its filters accept (a model that leaves its scope
/// arrives as a deletion), and a push that changes a model outside them, moves one out, or links
/// a model to one outside them (which would change the other end too) is refused whole with
/// ``SyncError/Code/refused``.
///
/// ```swift
/// let scope = SyncScope { access in
///     ["Trip": .equal("owner", .string(access.subject ?? ""))]
/// }
/// let host = try SyncHost(container: shared, scope: scope)
/// ```
///
/// Filters test the entity's own attributes; entities without a filter are shared whole, and an
/// entity mapped to `.constant(false)` is not synced at all for that requester.
public struct SyncScope: Sendable {
    let filters: @Sendable (SyncAccess) -> [String: StoreFilter]

    /// A scope from a function of the requester's identity to filters by entity name.
    public init(_ filters: @escaping @Sendable (SyncAccess) -> [String: StoreFilter]) {
        self.filters = filters
    }
}

/// A scope's filters for one request, compiled for checking snapshots.
struct ScopeCheck {
    let filters: [String: StoreFilter]
    private let evaluators: [String: SnapshotEvaluator]

    static let everything = ScopeCheck()

    private init(filters: [String: StoreFilter] = [:], evaluators: [String: SnapshotEvaluator] = [:]) {
        self.filters = filters
        self.evaluators = evaluators
    }

    init(_ scope: SyncScope?, access: SyncAccess, schema: Schema) throws {
        guard let scope else {
            self.init()
            return
        }
        let filters = scope.filters(access)
        var evaluators: [String: SnapshotEvaluator] = [:]
        for (name, filter) in filters {
            guard let entity = schema.entity(named: name) else {
                throw SyncError(
                    .refused, "the sync scope names the entity '\(name)', which the shared store does not have",
                    remedy: "Name entities of the shared store's schema")
            }
            evaluators[name] = try SnapshotEvaluator(filter: filter, entity: entity, schema: schema)
        }
        self.init(filters: filters, evaluators: evaluators)
    }

    func filter(for entity: String) -> StoreFilter? { filters[entity] }

    func allows(_ snapshot: DefaultSnapshot) -> Bool {
        evaluators[snapshot.entity.name]?.matches(snapshot) ?? true
    }

    func refusal(_ globalID: String, entity: String, _ what: String) -> SyncError {
        SyncError(
            .refused, "the push \(what) the '\(entity)' model \(globalID), which is outside this replica's scope",
            remedy: "Change only models the replica's scope holds; nothing of the push was stored")
    }

    func linkRefusal(_ globalID: String, entity: String, to target: String, of targetEntity: String) -> SyncError {
        SyncError(
            .refused,
            "the push links the '\(entity)' model \(globalID) to the '\(targetEntity)' model \(target), which is "
                + "outside this replica's scope",
            remedy: "Link only models the replica's scope holds; nothing of the push was stored")
    }
}
