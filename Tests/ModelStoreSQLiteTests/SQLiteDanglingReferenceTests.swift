import Foundation
import ModelStore
import ModelStoreAdapterKit
import ModelStoreTestSupport
import Testing

@testable import ModelStoreSQLite

/// A save clears the to-one references its models hold to models the store does not have, and keeps
/// every other: seeded random saves of shelves whose front crate is a stored crate, one deleted
/// before, one never stored, or one the same save inserts, against a plain-Swift oracle. Saves name
/// from none to many crates the store must look up, so both the look-up per key (a few) and the
/// look-up of many at once are taken.
struct SQLiteDanglingReferenceTests {
    let folder: TemporaryDirectory

    init() throws { folder = try TemporaryDirectory() }

    @Test func aSaveClearsReferencesToMissingModelsAndKeepsTheOthers() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        var configuration = SQLiteStoreConfiguration(url: folder.url.appendingPathComponent("shelves.sqlite"))
        configuration.schema = Schema([Crate.self, Shelf.self])
        let store = try SQLiteStore(configuration, migrationPlan: nil)
        let schema = try #require(configuration.schema)
        let crate = try #require(schema.entity(named: "Crate"))
        let shelf = try #require(schema.entity(named: "Shelf"))
        func crateSnapshot(_ label: String) throws -> DefaultSnapshot {
            try DefaultSnapshot(
                persistentIdentifier: .temporary(entityName: "Crate"), entity: crate,
                namedValues: ["label": .string(label)])
        }
        func front(of id: PersistentIdentifier) throws -> StoreValue? {
            try store.run(StoreQuery(entityName: "Shelf", filter: .identifiers([id]))).first?["front"]
        }
        var label = 0
        func nextLabel() -> String {
            label += 1
            return "c\(label)"
        }
        var stored = try store.insert((0..<40).map { _ in try crateSnapshot(nextLabel()) })
        var shelves: [PersistentIdentifier] = []
        for round in 0..<12 {
            // Some stored crates go; the shelves of this round may still name them.
            let doomed = Array(stored.shuffled(using: &random).prefix(Int.random(in: 0...6, using: &random)))
            for id in doomed {
                _ = try store.save(
                    DataStoreSaveChangesRequest(
                        editingState: EditingState(), inserted: [], updated: [],
                        deleted: try store.run(StoreQuery(entityName: "Crate", filter: .identifiers([id])))))
            }
            let gone = Set(doomed)
            stored.removeAll { gone.contains($0) }
            let never = PersistentIdentifier.identifier(
                for: store.identifier, entityName: "Crate", primaryKey: Int64(1_000_000 + round))
            let newCrates = try (0..<Int.random(in: 0...3, using: &random)).map { _ in try crateSnapshot(nextLabel()) }
            // Each shelf's front: a stored crate, a deleted one, one never stored, one inserted now, or none.
            let count = [1, 3, 12, 30][Int.random(in: 0..<4, using: &random)]
            var inserted = newCrates
            var updated: [DefaultSnapshot] = []
            var expected: [(snapshot: DefaultSnapshot, keeps: Bool)] = []
            for position in 0..<count {
                var target: PersistentIdentifier?
                var keeps = true
                switch Int.random(in: 0..<5, using: &random) {
                case 0 where !stored.isEmpty: target = stored.randomElement(using: &random)
                case 1 where !doomed.isEmpty:
                    target = doomed.randomElement(using: &random)
                    keeps = false
                case 2:
                    target = never
                    keeps = false
                case 3 where !newCrates.isEmpty: target = newCrates.randomElement(using: &random)?.persistentIdentifier
                default: target = nil
                }
                let values: [String: StoreValue] = [
                    "name": .string("s\(round)-\(position)"), "front": target.map(StoreValue.reference) ?? .null,
                ]
                if position % 2 == 1, let existing = shelves.randomElement(using: &random),
                    !updated.contains(where: { $0.persistentIdentifier == existing })
                {
                    let snapshot = try DefaultSnapshot(
                        persistentIdentifier: existing, entity: shelf, namedValues: values)
                    updated.append(snapshot)
                    expected.append((snapshot, keeps))
                } else {
                    let snapshot = try DefaultSnapshot(
                        persistentIdentifier: .temporary(entityName: "Shelf"), entity: shelf, namedValues: values)
                    inserted.append(snapshot)
                    expected.append((snapshot, keeps))
                }
            }
            let result = try store.save(
                DataStoreSaveChangesRequest(
                    editingState: EditingState(), inserted: inserted, updated: updated, deleted: []))
            func saved(_ id: PersistentIdentifier) -> PersistentIdentifier { result.remappedIdentifiers[id] ?? id }
            for (snapshot, keeps) in expected {
                let id = saved(snapshot.persistentIdentifier)
                let wanted: StoreValue =
                    if keeps, case .reference(let target)? = snapshot["front"] { .reference(saved(target)) } else {
                        .null
                    }
                #expect(try front(of: id) == wanted, "seed \(seed), round \(round): \(id)")
                if snapshot.persistentIdentifier.isTemporary { shelves.append(id) }
            }
            stored += newCrates.map { saved($0.persistentIdentifier) }
        }
    }
}
