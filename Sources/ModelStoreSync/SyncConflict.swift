import Foundation
import ModelStore

/// A clash the engine decided, kept in the local store until the app resolves it: what both
/// sides had, what they had agreed on before, and what the policy kept.
public struct SyncConflict: Sendable, Identifiable, Hashable, CustomStringConvertible {
    /// What kind of clash.
    public enum Kind: String, Sendable, Codable {
        /// Both sides changed one property to different values.
        case property
        /// This replica changed a model the remote deleted.
        case updateDeleted
        /// This replica deleted a model the remote changed.
        case deleteUpdated
        /// Two replicas made new models with the same unique values, which became one model.
        case unique
    }

    /// The conflict's identifier.
    public var id: String
    /// The model's global identifier.
    public var globalID: String
    /// The model's entity.
    public var entity: String
    /// What kind of clash.
    public var kind: Kind
    /// The property, for ``Kind/property`` and ``Kind/unique`` clashes; empty otherwise.
    public var property: String
    /// The value both sides last agreed on, if any.
    public var base: StoreValue?
    /// This replica's value (`nil` for a model it deleted).
    public var local: StoreValue?
    /// The remote's value (`nil` for a model it deleted).
    public var remote: StoreValue?
    /// The value the policy kept (`nil` when the model was deleted).
    public var chosen: StoreValue?
    /// The policy that decided: `remoteWins`, `localWins`, `lastWriterWins`, `custom`, or
    /// `editBeatsDelete` / `deleteBeatsEdit`.
    public var outcome: String
    /// Whether the app resolved it.
    public var isResolved: Bool
    /// When the engine met it.
    public var created: Date

    /// `kind Entity.property of globalID: kept outcome`.
    public var description: String {
        "\(kind) on \(entity)\(property.isEmpty ? "" : ".\(property)") of \(globalID): \(outcome)"
            + (isResolved ? " (resolved)" : "")
    }

    init(
        kind: Kind, globalID: String, entity: String, property: String = "", base: StoreValue?, local: StoreValue?,
        remote: StoreValue?, chosen: StoreValue?, outcome: String
    ) {
        self.id = UUID().uuidString
        self.globalID = globalID
        self.entity = entity
        self.kind = kind
        self.property = property
        self.base = base
        self.local = local
        self.remote = remote
        self.chosen = chosen
        self.outcome = outcome
        self.isResolved = false
        self.created = Date()
    }

    init?(snapshot: DefaultSnapshot) {
        guard let id = snapshot["conflictID"]?.stringValue, let kind = snapshot["kind"]?.stringValue.flatMap(Kind.init)
        else { return nil }
        self.id = id
        self.globalID = snapshot["globalID"]?.stringValue ?? ""
        self.entity = snapshot["entity"]?.stringValue ?? ""
        self.kind = kind
        self.property = snapshot["property"]?.stringValue ?? ""
        self.base = snapshot["base"]?.dataValue.flatMap(SyncCoding.decodeValue)
        self.local = snapshot["local"]?.dataValue.flatMap(SyncCoding.decodeValue)
        self.remote = snapshot["remote"]?.dataValue.flatMap(SyncCoding.decodeValue)
        self.chosen = snapshot["chosen"]?.dataValue.flatMap(SyncCoding.decodeValue)
        self.outcome = snapshot["outcome"]?.stringValue ?? ""
        self.isResolved = snapshot["resolved"]?.boolValue ?? false
        if case .date(let date)? = snapshot["created"] { self.created = date } else { self.created = Date() }
    }

    func snapshot(entity: Schema.Entity) throws -> DefaultSnapshot {
        func encoded(_ value: StoreValue?) -> StoreValue { .data(value.map { SyncCoding.encode($0) } ?? Data()) }
        return try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: entity.name), entity: entity,
            namedValues: [
                "conflictID": .string(id), "globalID": .string(globalID), "entity": .string(self.entity),
                "kind": .string(kind.rawValue), "property": .string(property), "base": encoded(base),
                "local": encoded(local), "remote": encoded(remote), "chosen": encoded(chosen),
                "outcome": .string(outcome), "resolved": .bool(isResolved), "created": .date(created),
            ])
    }
}
