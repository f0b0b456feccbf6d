import Foundation
import ModelStore

/// Changes between values Swift calls equal but a store must keep apart: canonically equivalent
/// spellings of a string, and the two zeros.
extension StoreDriver {
    /// The titles and weights saved first, and what each is changed to: equal by `==`, not by scalars or bits.
    static var equivalentChanges: [(from: (String, Double), to: (String, Double))] {
        [
            (("émile", 0.0), ("e\u{301}mile", -0.0)),
            (("nai\u{0308}ve", -0.0), ("naïve", 0.0)),
        ]
    }

    /// Saves two specimens directly and returns their identifiers.
    func saveEquivalentOriginals() throws -> [PersistentIdentifier] {
        let originals = try Self.equivalentChanges.enumerated().map { index, change in
            try newSnapshot(
                "Specimen",
                [
                    "code": .string("EQ\(index)"), "serial": .int(Int64(index)), "title": .string(change.from.0),
                    "weight": .double(change.from.1),
                ])
        }
        let result = try save(inserted: originals, "saving 2 specimens directly")
        return try originals.map { snapshot in
            try env.require(
                result.remappedIdentifiers[snapshot.persistentIdentifier],
                "save returned no permanent identifier for an inserted snapshot: identifier not remapped")
        }
    }

    /// Updates both specimens to the equivalent values, directly.
    func saveEquivalentChanges(_ ids: [PersistentIdentifier]) throws {
        let stored = try env.index(try fetchAll(Specimen.self), by: \.persistentIdentifier, "fetching the specimens")
        let updated = try zip(ids, Self.equivalentChanges).map { id, change in
            var snapshot = try env.require(stored[id], "the saved specimen \(id) is not fetched")
            snapshot["title"] = .string(change.to.0)
            snapshot["weight"] = .double(change.to.1)
            return snapshot
        }
        try save(updated: updated, "saving updates to canonically equivalent titles and to the other zero directly")
    }

    /// Fails unless both specimens hold exactly the changed values.
    func checkEquivalentChanges(_ ids: [PersistentIdentifier], after what: String) throws {
        let stored = try env.index(try fetchAll(Specimen.self), by: \.persistentIdentifier, "fetching the specimens")
        for (id, change) in zip(ids, Self.equivalentChanges) {
            let snapshot = try env.require(stored[id], "after \(what), the specimen \(id) is gone")
            let title = snapshot["title"] ?? .null
            let weight = snapshot["weight"] ?? .null
            let titleExact: Bool
            if case .string(let string) = title {
                titleExact = string.unicodeScalars.elementsEqual(change.to.0.unicodeScalars)
            } else {
                titleExact = false
            }
            let weightExact: Bool
            if case .double(let number) = weight {
                weightExact = number.bitPattern == change.to.1.bitPattern
            } else {
                weightExact = false
            }
            try env.check(
                titleExact && weightExact,
                "after \(what), a specimen still holds the old spelling or the old zero: a change to a value equal by "
                    + "Swift's == (a canonically equivalent string, -0.0 for 0.0) was not stored; stores MUST compare "
                    + "scalars and bits, not ==, when they decide what changed",
                expected:
                    renderExactly(StoreValue.string(change.to.0)) + ", "
                    + renderExactly(StoreValue.double(change.to.1)),
                found: "\(renderExactly(title)), \(renderExactly(weight))")
        }
    }

    /// The store-contract check: the change is stored.
    func checkEquivalentValueChanges() throws {
        let ids = try saveEquivalentOriginals()
        try saveEquivalentChanges(ids)
        try checkEquivalentChanges(ids, after: "updating to equivalent values")
    }
}

/// The durable check, on stores opened directly (each released before the next opens).
enum EquivalentValueChecks {
    static func survivesReopen(_ env: CaseEnvironment) throws {
        func withDriver<Result>(_ body: (any EquivalentValueDriving) throws -> Result) throws -> Result {
            let store = try env.openStore()
            func open<S: DataStore>(_ store: S) throws -> Result { try body(StoreDriver(store, env)) }
            return try open(store)
        }
        let ids = try withDriver { try $0.saveEquivalentOriginals() }
        try withDriver { try $0.saveEquivalentChanges(ids) }
        try withDriver { try $0.checkEquivalentChanges(ids, after: "updating to equivalent values and reopening") }
    }
}

/// The equivalent-value steps, callable on a driver of any store type.
protocol EquivalentValueDriving {
    func saveEquivalentOriginals() throws -> [PersistentIdentifier]
    func saveEquivalentChanges(_ ids: [PersistentIdentifier]) throws
    func checkEquivalentChanges(_ ids: [PersistentIdentifier], after what: String) throws
}

extension StoreDriver: EquivalentValueDriving {}
