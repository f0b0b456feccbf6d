import Foundation
import ModelStore

/// The local models an unfinished push named by identifiers it derived from their keys
/// (``ReplicaGlobalIDs``) and may have sent before the save that stores their records.
///
/// Kept in a row of its own beside the cursors (``SyncMetadata/stateEntityName``): written before
/// a page that derives identifiers for models it does not list yet is sent, and removed in the
/// save that ends the push. A push that reads every model lists the range of keys it reads, once
/// per entity; another push lists the keys of its pages' new models. After a
/// crash a model listed here that still exists is pushed again under the same identifier (it is
/// derived again); one deleted since, which has no record, is deleted on the remote under that
/// identifier (a remote that never had it ignores the delete); and a pull that brings either back
/// finds its record instead of taking it for a new model.
struct PushInFlight {
    /// The row as stored, or `nil` when none is.
    private(set) var row: DefaultSnapshot?
    /// The listed keys, by entity.
    private(set) var keys: [String: Set<Int64>] = [:]
    /// The listed ranges of keys, by entity.
    private(set) var ranges: [String: ClosedRange<Int64>] = [:]

    /// The stored form of the lists.
    private struct Listed: Codable {
        var keys: [String: [Int64]]
        var ranges: [String: [Int64]]
    }

    /// Whether nothing is listed.
    var isEmpty: Bool { keys.isEmpty && ranges.isEmpty }

    /// What the `remote` column of the row of pushes to `remote` holds: no remote's identifier
    /// starts with a control character.
    static func rowName(remote: String) -> String { "\u{1}pushing " + remote }

    /// The row of pushes to `remote`, if a push to it did not finish.
    static func load(remote: String, store: SyncStore) throws -> PushInFlight {
        let filter = StoreFilter.equal("remote", .string(rowName(remote: remote)))
        guard let row = try store.fetch(SyncMetadata.stateEntityName, filter: filter).first else {
            return PushInFlight()
        }
        var marker = PushInFlight()
        marker.row = row
        if let data = row["pulled"]?.dataValue, let listed = try? JSONDecoder().decode(Listed.self, from: data) {
            marker.keys = listed.keys.mapValues(Set.init)
            for (entity, bounds) in listed.ranges where bounds.count == 2 && bounds[0] <= bounds[1] {
                marker.ranges[entity] = bounds[0]...bounds[1]
            }
        }
        return marker
    }

    /// Whether the model of `entity` with integer key `key` is listed.
    func contains(entity: String, key: Int64) -> Bool {
        ranges[entity]?.contains(key) == true || keys[entity]?.contains(key) == true
    }

    /// Lists `more` too, as the range `range` of their entity's keys when one is given for it;
    /// returns the row to insert or update with the save that stores it, or `nil` when every key
    /// was listed already.
    mutating func listing(
        _ more: [String: [Int64]], range: (entity: String, keys: ClosedRange<Int64>)?, remote: String,
        replica: String, store: SyncStore
    ) throws -> (row: DefaultSnapshot, isNew: Bool)? {
        var changed = false
        for (entity, list) in more {
            for key in list where !contains(entity: entity, key: key) {
                changed = true
                if let range, range.entity == entity, range.keys.contains(key) {
                    let listed = ranges[entity]
                    ranges[entity] =
                        min(
                            listed?.lowerBound ?? .max, range.keys.lowerBound)...max(
                            listed?.upperBound ?? .min, range.keys.upperBound)
                } else {
                    keys[entity, default: []].insert(key)
                }
            }
        }
        guard changed else { return nil }
        let listed = Listed(
            keys: keys.mapValues { $0.sorted() }, ranges: ranges.mapValues { [$0.lowerBound, $0.upperBound] })
        let encoded = SyncCoding.encode(listed)
        if var row {
            if let slot = row.entity.slot(of: "pulled") { row.values[slot] = .data(encoded) }
            self.row = row
            return (row, false)
        }
        let created = try DefaultSnapshot(
            persistentIdentifier: .temporary(entityName: SyncMetadata.stateEntityName),
            entity: try store.entity(SyncMetadata.stateEntityName),
            namedValues: [
                "remote": .string(Self.rowName(remote: remote)), "replica": .string(replica), "pushed": .int(0),
                "pulled": .data(encoded),
            ])
        row = created
        return (created, true)
    }

    /// Takes the permanent identifier a save gave the row it inserted.
    mutating func saved(_ result: DataStoreSaveChangesResult<DefaultSnapshot>) {
        guard let id = row?.persistentIdentifier, let stored = result.remappedIdentifiers[id] else { return }
        row?.persistentIdentifier = stored
    }

    /// The row to delete with the save that ends the push, if one is stored; the list is empty after.
    mutating func finish() -> DefaultSnapshot? {
        defer {
            row = nil
            keys = [:]
            ranges = [:]
        }
        guard let row, !row.persistentIdentifier.isTemporary else { return nil }
        return row
    }
}
