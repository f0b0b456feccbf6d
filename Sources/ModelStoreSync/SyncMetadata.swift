import Foundation
import ModelStore

/// The entities the sync engine keeps in every store it syncs, beside the app's own.
///
/// The engine writes its bookkeeping in the same store, and in the same save, as the changes it
/// covers: that is what makes a round safe to interrupt at any instant. Add them to a container's
/// schema with ``ModelStore/Schema/includingSyncMetadata()``.
///
/// - A record entity per synced entity (`ModelStoreSync_Trip` for `Trip`): one record per model,
///   with its global identifier, the values it had when it was last synced (the base of a
///   three-way merge), whether it waits to be pushed again (`pending`), and a to-one reference to
///   the model; every attribute a step looks records up by is indexed. A record whose reference is gone
///   stands for a model deleted here and not yet pushed.
/// - `ModelStoreSyncState`: one row per remote, with this replica's identifier and both cursors;
///   while a push to a remote sends models under identifiers not yet stored, a second row lists
///   them (its `remote` starts with U+0001; see `PushInFlight`).
/// - `ModelStoreSyncConflict`: every clash the engine decided, with base, local and remote values.
public enum SyncMetadata {
    /// The prefix of every record entity's name.
    public static let recordPrefix = "ModelStoreSync_"
    /// The name of the entity holding one row of cursors per remote.
    public static let stateEntityName = "ModelStoreSyncState"
    /// The name of the entity holding conflict records.
    public static let conflictEntityName = "ModelStoreSyncConflict"
    /// The name of the entity a sync server records each replica's owner in: every store with the
    /// sync entities has it, only a shared store that a server serves writes to it.
    public static let replicaEntityName = "ModelStoreSyncReplica"

    /// The name of the record entity of an app entity.
    public static func recordEntityName(for entityName: String) -> String { recordPrefix + entityName }

    /// Whether an entity is the engine's own rather than the app's.
    public static func isMetadata(_ entityName: String) -> Bool {
        entityName.hasPrefix(recordPrefix) || entityName == stateEntityName || entityName == conflictEntityName
            || entityName == replicaEntityName
    }

    static func recordDescription(for entityName: String) -> Schema.EntityDescription {
        Schema.EntityDescription(
            name: recordEntityName(for: entityName),
            properties: [
                .attribute("globalID", .string, options: ["unique"]),
                .attribute("base", .data),
                .attribute("stamps", .data),
                .attribute("pending", .bool),
                .attribute("key", .string),
                .attribute("deletedAt", .integer(bits: 64, signed: true)),
                .relationship("model", to: entityName, isToOne: true, deleteRule: .nullify),
            ],
            // One record per global identifier: two writers that both found none (two servers taking
            // the same push at once) cannot both store one; the second save fails and its retry finds
            // the first's record.
            uniquenessConstraints: [["globalID"]],
            // Every step finds records by `globalID` (through its unique index: the stores build no
            // second one), and a pull of deletions by `key` and `deletedAt`: without an index each
            // look-up reads every record, so a sync of N models costs N². `pending` finds the records
            // a push must send. Adding an index or a constraint to a store written before it had one
            // is a lightweight migration.
            indices: [["model"], ["pending"], ["globalID"], ["key"], ["deletedAt"]])
    }

    static let stateDescription = Schema.EntityDescription(
        name: stateEntityName,
        properties: [
            .attribute("remote", .string, options: ["unique"]),
            .attribute("replica", .string),
            .attribute("pushed", .integer(bits: 64, signed: true)),
            .attribute("pulled", .data),
        ],
        uniquenessConstraints: [["remote"]])

    static let replicaDescription = Schema.EntityDescription(
        name: replicaEntityName,
        properties: [
            .attribute("replica", .string, options: ["unique"]),
            .attribute("subject", .string),
        ],
        uniquenessConstraints: [["replica"]])

    static let conflictDescription = Schema.EntityDescription(
        name: conflictEntityName,
        properties: [
            .attribute("conflictID", .string, options: ["unique"]),
            .attribute("globalID", .string),
            .attribute("entity", .string),
            .attribute("kind", .string),
            .attribute("property", .string),
            .attribute("base", .data),
            .attribute("local", .data),
            .attribute("remote", .data),
            .attribute("chosen", .data),
            .attribute("outcome", .string),
            .attribute("resolved", .bool),
            .attribute("created", .date),
        ],
        uniquenessConstraints: [["conflictID"]],
        indices: [["resolved"]])
}

extension Schema {
    /// This schema with the sync engine's bookkeeping entities added (``SyncMetadata``): a record
    /// entity per app entity, the cursors, the conflict records and (for a shared store a server
    /// serves) the replicas' owners.
    ///
    /// ```swift
    /// let schema = Schema([Trip.self, Stop.self]).includingSyncMetadata()
    /// let container = try ModelContainer(for: schema, configurations: [ModelConfiguration(url: url)])
    /// ```
    ///
    /// Adding them to an existing store is a lightweight migration (new entities only). Calling it on
    /// a schema that already has them returns an equal schema.
    public func includingSyncMetadata() -> Schema {
        let appEntities = entities.filter { !SyncMetadata.isMetadata($0.name) }
        var added: [Schema.Entity] = []
        var descriptions = appEntities.map { SyncMetadata.recordDescription(for: $0.name) }
        descriptions += [
            SyncMetadata.stateDescription, SyncMetadata.conflictDescription, SyncMetadata.replicaDescription,
        ]
        for description in descriptions {
            // The descriptions are fixed and valid; a failure here is a bug in this file.
            guard let entity = try? Schema.Entity(description: description) else {
                preconditionFailure("the sync entity '\(description.name)' is not valid")
            }
            added.append(entity)
        }
        return Schema(entities: appEntities + added, version: version, problems: validationErrors)
    }

    /// The app's entities: every entity that is not the sync engine's own.
    var syncedEntities: [Schema.Entity] { entities.filter { !SyncMetadata.isMetadata($0.name) } }

    /// Whether the schema has the bookkeeping entities of every app entity.
    var hasSyncMetadata: Bool {
        entity(named: SyncMetadata.stateEntityName) != nil && entity(named: SyncMetadata.conflictEntityName) != nil
            && syncedEntities.allSatisfy { entity(named: SyncMetadata.recordEntityName(for: $0.name)) != nil }
    }
}
