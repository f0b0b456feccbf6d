import ModelStore

extension SnapshotTable {
    /// The row that owns each combination of values under one uniqueness constraint.
    ///
    /// An open-addressed table of row numbers, probed linearly from a key's hash. It keeps no copy
    /// of any value: each entry is the key's 32-bit hash and the owner's row number, and a probe
    /// compares a candidate by reading the row's own values (``EntityTable`` passes that comparison
    /// in). A million rows cost 16 MiB at most, where a dictionary from keys to rows would hold a copy
    /// of every key besides. Deletion shifts the entries after a removed one back, so no tombstone stays.
    struct UniqueIndex: Sendable {
        /// `0` for an empty slot; otherwise the key's hash in the high 32 bits and the row number
        /// plus one in the low 32 bits.
        private var entries: [UInt64] = []
        /// How many rows own a key.
        private(set) var count = 0

        var isEmpty: Bool { count == 0 }

        private var mask: Int { entries.count &- 1 }

        @inline(__always)
        private static func entry(_ row: Int32, _ hash: UInt32) -> UInt64 {
            UInt64(hash) &<< 32 | UInt64(UInt32(bitPattern: row) &+ 1)
        }

        @inline(__always)
        private static func row(of entry: UInt64) -> Int32 { Int32(bitPattern: UInt32(truncatingIfNeeded: entry) &- 1) }

        @inline(__always)
        private static func hash(of entry: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: entry &>> 32) }

        /// The hash of a key of `count` values, the `i`th being `value(i)`, as every probe takes it;
        /// `nil` when a value is `nil` (a key with a `nil` claims nothing and conflicts with nothing).
        @inline(__always)
        static func hash(count: Int, _ value: (Int) -> StoreValue) -> UInt32? {
            var hasher = Hasher()
            for i in 0..<count {
                let value = value(i)
                if value.isNull { return nil }
                IndexKey.hashPayload(value, into: &hasher)
            }
            return UInt32(truncatingIfNeeded: hasher.finalize())
        }

        /// The row owning the key with this hash, found among the entries with the same hash by
        /// `matches` (whether a row holds the key), and the slot it is in.
        @inline(__always)
        func owner(_ hash: UInt32, matches: (Int32) -> Bool) -> (row: Int32, position: Int)? {
            guard count > 0 else { return nil }
            let mask = mask
            var position = Int(hash) & mask
            while true {
                let entry = entries[position]
                if entry == 0 { return nil }
                if Self.hash(of: entry) == hash {
                    let row = Self.row(of: entry)
                    if matches(row) { return (row, position) }
                }
                position = (position &+ 1) & mask
            }
        }

        /// Records `row` as the owner of a key with this hash that no row owns.
        mutating func insertAbsent(_ row: Int32, _ hash: UInt32) {
            if (count &+ 1) &* 2 > entries.count { grow(toHold: count &+ 1) }
            let mask = mask
            var position = Int(hash) & mask
            while entries[position] != 0 { position = (position &+ 1) & mask }
            entries[position] = Self.entry(row, hash)
            count &+= 1
        }

        /// Records the owners of many keys at once, as a load does: each claim is a row's key hash in
        /// the high 32 bits and its row number in the low 32. The claims are entered in the order of
        /// their home slots, so the entries are walked about once from start to end: entered in row
        /// order, every claim was a probe at a random place, and once the entries outgrow the core's
        /// cache nearly every probe waited for memory.
        ///
        /// `matches(row, owner)` says whether two rows hold the same key. Returns the first claim
        /// whose key a row already owns (an earlier claim or an entry from before), with that owner;
        /// the claims entered before it stay entered. `nil` when every claim was entered.
        mutating func insertAbsent(
            _ claims: [UInt64], matches: (_ row: Int32, _ owner: Int32) -> Bool
        ) -> (row: Int32, owner: Int32)? {
            guard !claims.isEmpty else { return nil }
            reserveCapacity(count &+ claims.count)
            let mask = mask
            // A counting sort by the top bits of the home slot: within one of at most 4,096 stretches
            // of the entries (512 bytes of them for every 4,096 claims), the order is the rows'.
            let slotBits = entries.count.trailingZeroBitCount
            let shift = slotBits - min(12, slotBits)
            var starts: [Int] = []
            starts.reserveCapacity((mask >> shift) &+ 2)
            for _ in 0..<((mask >> shift) &+ 2) { starts.append(0) }
            for claim in claims { starts[(Int(truncatingIfNeeded: claim >> 32) & mask) >> shift &+ 1] &+= 1 }
            for bucket in starts.indices.dropFirst() { starts[bucket] &+= starts[bucket &- 1] }
            var ordered: [UInt64] = []
            ordered.reserveCapacity(claims.count)
            for _ in claims.indices { ordered.append(0) }
            for claim in claims {
                let bucket = (Int(truncatingIfNeeded: claim >> 32) & mask) >> shift
                ordered[starts[bucket]] = claim
                starts[bucket] &+= 1
            }
            for claim in ordered {
                let hash = UInt32(truncatingIfNeeded: claim >> 32)
                let row = Int32(truncatingIfNeeded: claim)
                var position = Int(hash) & mask
                while true {
                    let entry = entries[position]
                    if entry == 0 { break }
                    if Self.hash(of: entry) == hash, matches(row, Self.row(of: entry)) {
                        return (row, Self.row(of: entry))
                    }
                    position = (position &+ 1) & mask
                }
                entries[position] = Self.entry(row, hash)
                count &+= 1
            }
            return nil
        }

        /// Makes `row` the owner of the key found at `position` by ``owner(_:matches:)``.
        mutating func reassign(at position: Int, to row: Int32) {
            entries[position] = Self.entry(row, Self.hash(of: entries[position]))
        }

        /// Takes away the key with this hash that `row` owns; does nothing if `row` owns none.
        mutating func remove(_ row: Int32, _ hash: UInt32) {
            guard count > 0 else { return }
            let mask = mask
            let wanted = Self.entry(row, hash)
            var hole = Int(hash) & mask
            while true {
                let entry = entries[hole]
                if entry == 0 { return }
                if entry == wanted { break }
                hole = (hole &+ 1) & mask
            }
            // Shift back each entry after the hole that may sit there: one whose home slot does not
            // lie cyclically after the hole and at or before its own slot.
            entries[hole] = 0
            count &-= 1
            var next = hole
            while true {
                next = (next &+ 1) & mask
                let entry = entries[next]
                if entry == 0 { return }
                let home = Int(Self.hash(of: entry)) & mask
                let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
                if !stays {
                    entries[hole] = entry
                    entries[next] = 0
                    hole = next
                }
            }
        }

        /// Makes room for `capacity` owners without growing again.
        mutating func reserveCapacity(_ capacity: Int) {
            if capacity &* 2 > entries.count { grow(toHold: capacity) }
        }

        /// Forgets every owner, keeping the slots.
        mutating func removeAll() {
            guard count > 0 else { return }
            entries.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            count = 0
        }

        /// Moves the entries into a table of at least twice `capacity` slots (a power of two).
        private mutating func grow(toHold capacity: Int) {
            var size = max(16, entries.count)
            while size < capacity &* 2 { size &*= 2 }
            let old = entries
            // Reserved and appended: `Array(repeating:count:)` takes the standard library's slow,
            // unspecialized allocation path on Linux.
            var grown: [UInt64] = []
            grown.reserveCapacity(size)
            for _ in 0..<size { grown.append(0) }
            let mask = size &- 1
            for entry in old where entry != 0 {
                var position = Int(Self.hash(of: entry)) & mask
                while grown[position] != 0 { position = (position &+ 1) & mask }
                grown[position] = entry
            }
            entries = grown
        }
    }
}
