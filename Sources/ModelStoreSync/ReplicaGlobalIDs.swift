import Foundation
import ModelStore

/// The global identifiers a replica derives from its own models' integer keys, so that it need not
/// store them before a push: the save that acknowledges the push stores them, and a push repeated
/// after a crash derives the same ones again.
///
/// An identifier is a version-8 UUID whose 122 free bits hold a 58-bit tag, a hash of the replica's
/// identifier and the entity's name, and the model's 64-bit key. Two models of one replica never
/// share one; models of different replicas or entities share one only when their tags collide
/// (one chance in 2^58 per pair of replicas and entity). The tag also tells a pulled model that
/// this replica named itself (``key(of:entity:)``) from every other one.
struct ReplicaGlobalIDs {
    private let tags: [String: UInt64]

    init(replica: String, entities: [String]) {
        var tags: [String: UInt64] = [:]
        for entity in entities { tags[entity] = Self.tag(replica: replica, entity: entity) }
        self.tags = tags
    }

    /// The identifier of the model with integer key `key` in `entity`.
    func globalID(entity: String, key: Int64) -> String {
        SyncCoding.uuidString(Self.uuid(tag: tags[entity] ?? 0, key: key))
    }

    /// The identifier of `model`, when its key is an integer.
    func globalID(of model: PersistentIdentifier) -> String? {
        guard case .int(let key) = model.primaryKey, tags[model.entityName] != nil else { return nil }
        return globalID(entity: model.entityName, key: key)
    }

    /// The key of the model of `entity` that `global` names, when this replica derived it.
    func key(of global: String, entity: String) -> Int64? {
        guard let tag = tags[entity], let (high, low) = Self.halves(of: global) else { return nil }
        guard (high >> 12) & 0xF == 8, low >> 62 == 0b10 else { return nil }
        let free = (high >> 16) << 12 | (high & 0xFFF)
        guard free >> 2 == tag else { return nil }
        return Int64(bitPattern: (free & 0b11) << 62 | (low & 0x3FFF_FFFF_FFFF_FFFF))
    }

    /// The two 64-bit halves of the UUID `UUID(uuidString: text)` reads, if it reads one. The usual
    /// form (36 characters: hexadecimal digits of either case in groups of 8, 4, 4, 4 and 12 joined
    /// by dashes) is read here, without Foundation's parser, which costs about 8,000 instructions a
    /// call (a first pull asks this of every model it pulls); any other text goes to Foundation,
    /// which reads some variants of it too.
    static func halves(of text: String) -> (high: UInt64, low: UInt64)? {
        if let halves = canonicalHalves(of: text) { return halves }
        guard let uuid = UUID(uuidString: text) else { return nil }
        return withUnsafeBytes(of: uuid.uuid) { bytes in
            (
                bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) },
                bytes.suffix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            )
        }
    }

    /// ``halves(of:)`` of text in the usual form only; `nil` for any other.
    private static func canonicalHalves(of text: String) -> (high: UInt64, low: UInt64)? {
        var text = text
        return text.withUTF8 { utf8 -> (high: UInt64, low: UInt64)? in
            guard utf8.count == 36 else { return nil }
            var high: UInt64 = 0
            var low: UInt64 = 0
            var digits = 0
            for (position, character) in utf8.enumerated() {
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard character == UInt8(ascii: "-") else { return nil }
                    continue
                }
                let value: UInt8
                switch character {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): value = character - UInt8(ascii: "A") + 10
                default: return nil
                }
                if digits < 16 { high = high << 4 | UInt64(value) } else { low = low << 4 | UInt64(value) }
                digits += 1
            }
            return (high, low)
        }
    }

    /// 58 bits of a hash of the replica and the entity (FNV-1a, then SplitMix64's finalizer so every
    /// input bit reaches every output bit).
    static func tag(replica: String, entity: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in replica.utf8 + [0] + entity.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        hash = (hash ^ (hash >> 30)) &* 0xbf58_476d_1ce4_e5b9
        hash = (hash ^ (hash >> 27)) &* 0x94d0_49bb_1331_11eb
        hash ^= hash >> 31
        return hash >> 6
    }

    /// The tag's 58 bits and the key's 64 in the 122 bits a version-8 UUID leaves free: the high
    /// half holds the tag and the key's top two bits around the version nibble, the low half the
    /// variant and the key's other 62 bits.
    static func uuid(tag: UInt64, key: Int64) -> UUID {
        let bits = UInt64(bitPattern: key)
        let free = tag << 2 | bits >> 62
        let high = (free >> 12) << 16 | 0x8 << 12 | (free & 0xFFF)
        let low = 0b10 << 62 | (bits & 0x3FFF_FFFF_FFFF_FFFF)
        func byte(_ word: UInt64, _ index: Int) -> UInt8 { UInt8(truncatingIfNeeded: word >> (56 - 8 * index)) }
        return UUID(
            uuid: (
                byte(high, 0), byte(high, 1), byte(high, 2), byte(high, 3), byte(high, 4), byte(high, 5),
                byte(high, 6), byte(high, 7), byte(low, 0), byte(low, 1), byte(low, 2), byte(low, 3), byte(low, 4),
                byte(low, 5), byte(low, 6), byte(low, 7)
            ))
    }
}
