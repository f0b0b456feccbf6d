import Foundation
import ModelStore

/// What a store keeps, read directly from the store (not through a context): for every fixture
/// entity, every stored snapshot's values by property name, keyed by identifier.
///
/// Durable cases compare the state before closing with the state after reopening, so a change of
/// any kind that never reached the disk (a batch delete, a batch update, a cleared reference) is
/// found even when a context would read it the same way (a reference to a missing model reads `nil`).
struct StoredState: Equatable {
    var entities: [String: [PersistentIdentifier: [String: StoreValue]]]

    /// Reads every fixture entity from the container's store.
    static func read(_ container: ModelContainer, _ env: CaseEnvironment) throws -> StoredState {
        var entities: [String: [PersistentIdentifier: [String: StoreValue]]] = [:]
        func read<T: PersistentModel>(_ type: T.Type) throws {
            let name = Schema.entityName(for: T.self)
            let snapshots = try env.index(
                try env.storedSnapshots(T.self, in: container), by: \.persistentIdentifier,
                "reading every '\(name)' directly from the store")
            entities[name] = snapshots.mapValues(values)
        }
        for type in Fixtures.types { try read(type) }
        return StoredState(entities: entities)
    }

    /// A snapshot's values by property name; to-many references as a set (their order is not part of the contract).
    static func values(_ snapshot: DefaultSnapshot) -> [String: StoreValue] {
        var named: [String: StoreValue] = [:]
        for property in snapshot.entity.properties {
            var value = snapshot.values.indices.contains(property.slot) ? snapshot.values[property.slot] : .null
            if case .references(let ids) = value { value = .references(ids.sorted()) }
            named[property.name] = value
        }
        return named
    }

    /// How many snapshots of each entity, for messages.
    var counts: [String: Int] { entities.mapValues(\.count) }

    /// What differs from `expected`, one line per model, and the symptom that names it.
    func differences(from expected: StoredState) -> (symptom: String, lines: [String])? {
        var lost: [String] = []
        var resurrected: [String] = []
        var changed: [String] = []
        for (entity, models) in expected.entities.sorted(by: { $0.key < $1.key }) {
            let found = entities[entity] ?? [:]
            for (id, values) in models.sorted(by: { $0.key < $1.key }) {
                guard let stored = found[id] else {
                    lost.append("'\(entity)' \(id) is gone")
                    continue
                }
                for (property, value) in values.sorted(by: { $0.key < $1.key }) where stored[property] != value {
                    changed.append(
                        "'\(entity).\(property)' of \(id) reads "
                            + "\(stored[property].map(String.init(describing:)) ?? "nothing"), "
                            + "not \(value)")
                }
            }
            for id in found.keys.sorted() where models[id] == nil {
                resurrected.append("'\(entity)' \(id) is stored but was not before")
            }
        }
        var symptoms: [String] = []
        if !lost.isEmpty { symptoms.append("data lost on reopen") }
        if !resurrected.isEmpty { symptoms.append("a delete was lost on reopen (deleted models are back)") }
        if !changed.isEmpty { symptoms.append("a change was lost on reopen (models read older or other values)") }
        let lines = lost + resurrected + changed
        return lines.isEmpty ? nil : (symptoms.joined(separator: "; "), lines)
    }

    /// Fails unless the state after reopening is `expected`, the state before closing.
    func check(equals expected: StoredState, _ env: CaseEnvironment, after what: String) throws {
        guard let (symptom, lines) = differences(from: expected) else { return }
        throw env.failure(
            "after \(what) and reopening, the store keeps other data than it had before closing: \(symptom)",
            expected: "\(expected.counts.sorted { $0.key < $1.key })",
            found: "\(counts.sorted { $0.key < $1.key }); " + lines.prefix(4).joined(separator: "; ")
                + (lines.count > 4 ? "; … (\(lines.count) differences)" : ""))
    }
}
