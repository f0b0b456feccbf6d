import Foundation
import ModelStoreTestSupport
import Testing

@testable import ModelStore

/// `PersistentIdentifier.Scope`: one shared scope per store and entity, and identifiers that compare,
/// order, hash and encode exactly as the three names and the key they stand for.
struct PersistentIdentifierScopeTests {
    /// The names an identifier stands for, compared the plain way.
    private struct Reference: Hashable {
        let store: String?
        let entity: String
        let key: PrimaryKey

        init(_ id: PersistentIdentifier) {
            (store, entity, key) = (id.storeIdentifier, id.entityName, id.primaryKey)
        }

        /// Entity, then store (`nil` as the empty string), then key.
        func precedes(_ other: Self) -> Bool {
            if entity != other.entity { return entity < other.entity }
            if store != other.store { return (store ?? "") < (other.store ?? "") }
            return key < other.key
        }
    }

    /// A string with the same characters as `text` in storage of its own, so that equal names do not
    /// share a buffer.
    private static func copy(_ text: String) -> String {
        String(decoding: Array(text.utf8), as: UTF8.self)
    }

    @Test func equalNamesMakeTheSameScopeAndDifferentNamesDifferentOnes() {
        let store = "store-" + UUID().uuidString
        let first = PersistentIdentifier.Scope(storeIdentifier: store, entityName: "Trip")
        let other = PersistentIdentifier.Scope(storeIdentifier: "elsewhere", entityName: "Trip")
        let again = PersistentIdentifier.Scope(storeIdentifier: Self.copy(store), entityName: Self.copy("Trip"))
        #expect(first == again)
        #expect(first.names.toOpaque() == again.names.toOpaque())
        #expect(first != other)
        #expect(first != PersistentIdentifier.Scope(storeIdentifier: store, entityName: "Trips"))
        #expect(
            PersistentIdentifier.Scope(storeIdentifier: nil, entityName: "Trip")
                != PersistentIdentifier.Scope(storeIdentifier: "", entityName: "Trip"))
        #expect(first.storeIdentifier == store && first.entityName == "Trip" && !first.isTemporary)
        #expect(PersistentIdentifier.temporary(entityName: "Trip").scope.isTemporary)
        #expect(first.identifier(7) == .identifier(for: store, entityName: "Trip", primaryKey: 7))
        #expect(first.identifier("k") == .identifier(for: store, entityName: "Trip", primaryKey: "k"))
    }

    @Test func identifiersCompareOrderAndHashAsTheirNames() {
        var random = SplitMix64(seed: 0x5C0_9E)
        let stores: [String?] = [nil, "", "a", "b", "store-" + UUID().uuidString]
        let entities = ["User", "Trip", "A much longer entity name than fits inline"]
        var ids: [PersistentIdentifier] = []
        for _ in 0..<300 {
            let store = stores[random.below(stores.count)]
            // Names rebuilt in storage of their own half the time.
            let entity = random.chance(50) ? Self.copy(entities[random.below(entities.count)]) : entities[0]
            let key: PrimaryKey =
                random.chance(80) ? .int(Int64(random.below(4))) : .string(["x", "y"][random.below(2)])
            ids.append(PersistentIdentifier(storeIdentifier: store.map(Self.copy), entityName: entity, primaryKey: key))
        }
        for a in ids {
            for b in ids {
                let (ra, rb) = (Reference(a), Reference(b))
                #expect((a == b) == (ra == rb), "\(a) == \(b)")
                #expect((a < b) == ra.precedes(rb), "\(a) < \(b)")
                if a == b { #expect(a.hashValue == b.hashValue) }
            }
        }
        #expect(Set(ids).count == Set(ids.map(Reference.init)).count)
    }

    @Test func identifiersEncodeUnderTheirThreeNames() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let saved = PersistentIdentifier.identifier(for: "s1", entityName: "User", primaryKey: 7)
        #expect(
            String(decoding: try encoder.encode(saved), as: UTF8.self)
                == #"{"entityName":"User","primaryKey":7,"storeIdentifier":"s1"}"#)
        let temporary = PersistentIdentifier.temporary(entityName: "User")
        let text = String(decoding: try encoder.encode(temporary), as: UTF8.self)
        #expect(!text.contains("storeIdentifier"))
        for id in [saved, temporary, .identifier(for: "s1", entityName: "User", primaryKey: "k")] {
            let decoded = try JSONDecoder().decode(PersistentIdentifier.self, from: try encoder.encode(id))
            #expect(decoded == id && decoded.scope == id.scope)
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PersistentIdentifier.self, from: Data(#"{"primaryKey":1}"#.utf8))
        }
    }

    @Test func threadsMakingScopesOfTheSamePairsGetTheSameOnes() async {
        let pairs = (0..<24).map { ("store-\($0 % 3)-" + UUID().uuidString, "Entity\($0 % 8)") }
        let made = await withTaskGroup(of: [UInt].self) { group in
            for worker in 0..<8 {
                group.addTask {
                    // Each worker goes through the pairs in its own order, so the last-made shortcut
                    // keeps missing and the table is taken concurrently.
                    (0..<pairs.count).map { step in
                        let (store, entity) = pairs[(step * (worker + 1) + worker) % pairs.count]
                        let scope = PersistentIdentifier.Scope(storeIdentifier: store, entityName: entity)
                        return UInt(bitPattern: scope.names.toOpaque())
                    }
                }
            }
            var all: [[UInt]] = []
            for await addresses in group { all.append(addresses) }
            return all
        }
        var byPair: [String: Set<UInt>] = [:]
        for (worker, addresses) in made.enumerated() {
            #expect(addresses.count == pairs.count, "worker \(worker)")
        }
        for (store, entity) in pairs {
            let address = UInt(
                bitPattern: PersistentIdentifier.Scope(storeIdentifier: store, entityName: entity).names.toOpaque())
            byPair[store + "/" + entity, default: []].insert(address)
        }
        let everyAddress = Set(made.joined())
        #expect(everyAddress == Set(byPair.values.joined()))
        #expect(byPair.values.allSatisfy { $0.count == 1 })
        #expect(everyAddress.count == Set(pairs.map { $0.0 + "/" + $0.1 }).count)
    }
}
