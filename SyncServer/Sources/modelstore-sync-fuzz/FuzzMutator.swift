import Foundation
import SyncTestModels

/// The mutation runner's changes to an input, from a seeded generator so a run can be repeated:
/// bit flips, interesting bytes, insertions and deletions, copies within the input, splices with
/// another input, and JSON fragments that decoders trip over.
struct FuzzMutator {
    private var random: SyncTestRandom

    /// Fragments inserted whole: structure, extreme numbers, escapes, and the messages' own keys.
    static let fragments: [[UInt8]] = [
        "{", "}", "[", "]", ",", ":", "\"", "null", "true", "-0", "1e999", "-1e999", "9223372036854775808",
        "-9223372036854775809", "0.0000001", "\"\\u0000\"", "\"\\ud800\"", "\\", "\"\u{FEFF}\"", "{\"\":0}",
        "\"replica\":", "\"changes\":", "\"globalID\":", "\"entity\":\"Note\"", "\"kind\":\"update\"",
        "\"values\":", "\"base\":", "\"stamp\":", "\"cursor\":", "\"snapshot\":", "\"limit\":", "\"globalIDs\":",
        "\"title\":{\"string\":\"x\"}", "\"edits\":{\"int\":1}", "\"owner\":{\"reference\":1}",
        "\"ModelStoreSyncState\"", String(repeating: "[", count: 64),
    ].map { Array($0.utf8) }

    init(seed: UInt64) { random = SyncTestRandom(seed: seed) }

    /// A pseudo-random number.
    mutating func next() -> UInt64 { random.next() }

    /// A number from 0 to `bound - 1` (`bound` at least 1).
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(1, bound))) }

    /// `input` changed one to four times (its first byte, the path, only by the first kind).
    mutating func mutate(_ input: [UInt8], other: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0...below(4) {
            let position = below(bytes.count + 1)
            switch below(8) {
            case 0 where !bytes.isEmpty:
                bytes[min(position, bytes.count - 1)] ^= UInt8(1 << below(8))
            case 1 where !bytes.isEmpty:
                bytes[min(position, bytes.count - 1)] = [0, 0x7F, 0x80, 0xFF, 0x22, 0x5C, 0x30, 0x2D][below(8)]
            case 2:
                bytes.insert(UInt8(truncatingIfNeeded: next()), at: position)
            case 3 where bytes.count > 1:
                let start = max(1, min(position, bytes.count - 1))
                bytes.removeSubrange(start..<min(bytes.count, start + 1 + below(16)))
            case 4 where bytes.count > 1:
                let start = below(bytes.count)
                let piece = bytes[start..<min(bytes.count, start + 1 + below(32))]
                bytes.insert(contentsOf: piece, at: max(1, position))
            case 5 where !other.isEmpty:
                let cut = below(other.count)
                bytes = Array(bytes.prefix(max(1, position))) + other[cut...]
            default:
                bytes.insert(
                    contentsOf: Self.fragments[below(Self.fragments.count)], at: max(min(1, bytes.count), position))
            }
            if bytes.count > 65_536 { bytes.removeLast(bytes.count - 65_536) }
        }
        return bytes
    }
}
