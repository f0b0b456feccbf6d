import ModelStoreTestSupport
import Testing

@testable import ModelStore
@testable import ModelStoreAdapterKit

/// The unique index's open-addressed table of row numbers, driven by seeded random operations and
/// checked after each against a dictionary from keys to rows. Keys hash into a few values on
/// purpose, so that probe runs are long, wrap around the table's end and are cut by removals; a
/// failure is shrunk to the fewest operations that still fail and printed.
struct UniqueIndexTests {
    enum Operation: Equatable, CustomStringConvertible {
        /// Claims `key` for a new row (the table must not hold the key).
        case claim(key: Int)
        /// Moves `key`'s entry to another new row.
        case reassign(key: Int)
        /// Releases `key` from its owner (nothing if no row owns it).
        case release(key: Int)
        /// Releases `key` naming a row that does not own it (must change nothing).
        case releaseByStranger(key: Int)
        case clear
        case reserve(Int)
        /// Claims the keys for new rows at once, as a load does (`insertAbsent(_:matches:)`). A key
        /// already owned, or listed twice, must be reported, after which the table is discarded.
        case claimAll(keys: [Int])

        var description: String {
            switch self {
            case .claim(let key): ".claim(key: \(key))"
            case .reassign(let key): ".reassign(key: \(key))"
            case .release(let key): ".release(key: \(key))"
            case .releaseByStranger(let key): ".releaseByStranger(key: \(key))"
            case .clear: ".clear"
            case .reserve(let n): ".reserve(\(n))"
            case .claimAll(let keys): ".claimAll(keys: \(keys))"
            }
        }
    }

    /// Six hashes for 40 keys: every probe meets other keys' entries with the same hash, and entries
    /// of other hashes with the same home slot. In a table of 16 slots, 15 and 31 start at the last
    /// slot and 14 and 46 at the one before, so their runs wrap around to the first slots.
    private static let hashes: [UInt32] = [15, 14, 0, 7, 31, 46]
    private static func hash(_ key: Int) -> UInt32 { hashes[key % 6] }

    /// Runs the operations; the first disagreement with the dictionary, or `nil`.
    static func run(_ operations: [Operation]) -> String? {
        var index = SnapshotTable.UniqueIndex()
        var model: [Int: Int32] = [:]
        var rowOfKey: [Int32: Int] = [:]
        var nextRow: Int32 = 0
        for (step, operation) in operations.enumerated() {
            switch operation {
            case .claim(let key):
                guard model[key] == nil else { continue }
                index.insertAbsent(nextRow, hash(key))
                model[key] = nextRow
                rowOfKey[nextRow] = key
                nextRow += 1
            case .reassign(let key):
                guard model[key] != nil else { continue }
                guard let found = index.owner(hash(key), matches: { rowOfKey[$0] == key }) else {
                    return "step \(step) \(operation): the owner of a claimed key was not found"
                }
                index.reassign(at: found.position, to: nextRow)
                model[key] = nextRow
                rowOfKey[nextRow] = key
                nextRow += 1
            case .release(let key):
                if let row = model.removeValue(forKey: key) { index.remove(row, hash(key)) }
            case .releaseByStranger(let key):
                index.remove(nextRow + 1000, hash(key))
            case .clear:
                index.removeAll()
                model.removeAll()
            case .reserve(let n):
                index.reserveCapacity(n)
            case .claimAll(let keys):
                let first = nextRow
                for key in keys {
                    rowOfKey[nextRow] = key
                    nextRow += 1
                }
                let claims = keys.indices.map { UInt64(hash(keys[$0])) << 32 | UInt64(UInt32(first) + UInt32($0)) }
                let conflict = index.insertAbsent(claims) { rowOfKey[$0] == rowOfKey[$1] }
                let expectsConflict = Set(keys).count < keys.count || keys.contains { model[$0] != nil }
                guard let conflict else {
                    if expectsConflict { return "step \(step) \(operation): a key claimed twice was not reported" }
                    for (offset, key) in keys.enumerated() { model[key] = first + Int32(offset) }
                    break
                }
                guard expectsConflict, conflict.row != conflict.owner, conflict.row >= first,
                    rowOfKey[conflict.row] == rowOfKey[conflict.owner]
                else {
                    return "step \(step) \(operation): reported rows \(conflict.row) and \(conflict.owner), which do "
                        + "not share a key"
                }
                // A load that fails discards its table; so does the test.
                index = SnapshotTable.UniqueIndex()
                model.removeAll()
            }
            if index.count != model.count {
                return "step \(step) \(operation): \(index.count) owners, the model has \(model.count)"
            }
            for key in 0..<40 {
                let found = index.owner(hash(key), matches: { rowOfKey[$0] == key })?.row
                if found != model[key] {
                    let owner = found.map { "row \($0)" } ?? "nobody"
                    let expected = model[key].map { "row \($0)" } ?? "nobody"
                    return "step \(step) \(operation): key \(key) owned by \(owner), the model says \(expected)"
                }
            }
        }
        return nil
    }

    static func randomOperations(seed: UInt64, count: Int) -> [Operation] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            let key = Int(random.next() % 40)
            switch random.next() % 20 {
            case 0..<8: return .claim(key: key)
            case 8..<11: return .reassign(key: key)
            case 11..<17: return .release(key: key)
            case 17: return .releaseByStranger(key: key)
            case 18: return random.next() % 4 == 0 ? .clear : .claim(key: key)
            case 19 where random.next() % 2 == 0:
                // Mostly keys no row owns yet; some batches repeat a key or take an owned one.
                return .claimAll(keys: (0..<Int(random.next() % 12)).map { _ in Int(random.next() % 40) })
            default: return .reserve(Int(random.next() % 64))
            }
        }
    }

    @Test(arguments: 0..<40)
    func randomOperationsAgreeWithADictionary(seed: Int) {
        let operations = Self.randomOperations(seed: UInt64(seed), count: 400)
        if let report = Shrinker.failureReport(seed: UInt64(seed), operations, run: Self.run) {
            Issue.record("\(report)")
        }
    }

    /// Removals whose runs wrap around the table's end, where the backward shift must not move an
    /// entry before its home slot.
    @Test func removalsAcrossTheTablesEndKeepEveryKeyReachable() {
        // 16 slots: key 0 takes slot 15, key 6 wraps to 0, key 1 takes 14, key 4 (home 15) goes to 1
        // and key 7 (home 14) to 2. Releasing key 0 shifts 6, 4 and 7 back one slot each, across the end.
        let operations: [Operation] = [
            .claim(key: 0), .claim(key: 6), .claim(key: 1), .claim(key: 4), .claim(key: 7), .release(key: 0),
            .reassign(key: 4), .release(key: 1), .claim(key: 0), .release(key: 6),
        ]
        #expect(Self.run(operations) == nil)
    }

    /// Many claims at once into a table larger than the sort's 4,096 stretches (so each stretch
    /// holds many home slots): every key is then found at its row, and a key planted twice, at
    /// seeded places among 20,000, is reported with both rows.
    @Test(arguments: 0..<4)
    func claimsAtOnceFindEveryOwnerAndReportARepeatedKey(seed: Int) {
        var random = SplitMix64(seed: UInt64(seed))
        let count = 20_000
        // Distinct keys with full 32-bit hashes (some hashes repeat: the key tells rows apart).
        let keys = (0..<count).map { $0 * 7 + Int(random.next() % 7) }
        let hashOf = { (key: Int) in UInt32(truncatingIfNeeded: UInt64(key) &* 0x9E37_79B9_7F4A_7C15 >> 40) }
        var index = SnapshotTable.UniqueIndex()
        let claims = keys.indices.map { UInt64(hashOf(keys[$0])) << 32 | UInt64($0) }
        #expect(index.insertAbsent(claims) { keys[Int($0)] == keys[Int($1)] } == nil)
        #expect(index.count == count)
        for (row, key) in keys.enumerated()
        where index.owner(hashOf(key), matches: { keys[Int($0)] == key })?.row != Int32(row) {
            Issue.record("key \(key) is not owned by its row \(row)")
            return
        }
        // The same keys again, one of them twice.
        let (original, copy) = (Int(random.next() % UInt64(count)), count)
        var repeated = keys
        repeated.append(keys[original])
        var fresh = SnapshotTable.UniqueIndex()
        let repeatedClaims = repeated.indices.map { UInt64(hashOf(repeated[$0])) << 32 | UInt64($0) }
        let conflict = fresh.insertAbsent(repeatedClaims) { repeated[Int($0)] == repeated[Int($1)] }
        #expect(conflict.map { Set([$0.row, $0.owner]) } == Set([Int32(original), Int32(copy)]))
    }
}
