import Foundation
import ModelStoreSQLite
import ModelStoreTestSupport
import Testing

/// The `SWIFT` collation orders text by its NFC scalars; the bytes decide alone only where that
/// gives the same answer. Checked against the NFC order itself on random strings built from
/// pieces that compose, decompose or normalize to ASCII next to ASCII characters.
struct SwiftCollationTests {
    static let pieces = [
        "", "a", "b", "e", "f", "z", "K", ";", "<", "=", "é", "e\u{301}", "\u{301}", "\u{338}", "\u{327}",
        "\u{212A}", "\u{37E}", "\u{1FEF}", "`", "ß", "😀", "\u{1100}", "\u{1161}", "\u{11A8}", "abcdefgh",
        "abcdefghi",
    ]

    /// The NFC order the collation promises, as `-1`, `0` or `1`.
    static func reference(_ a: String, _ b: String) -> Int32 {
        let x = a.precomposedStringWithCanonicalMapping.unicodeScalars
        let y = b.precomposedStringWithCanonicalMapping.unicodeScalars
        if x.elementsEqual(y) { return 0 }
        return x.lexicographicallyPrecedes(y) ? -1 : 1
    }

    static func collate(_ a: String, _ b: String) -> Int32 {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        return x.withUnsafeBytes { first in
            y.withUnsafeBytes { second in
                SwiftCollation.compare(first.baseAddress, first.count, second.baseAddress, second.count)
            }
        }
    }

    @Test func randomStringsCompareAsTheirNormalizedScalars() {
        var random = SplitMix64(seed: 48)
        func string() -> String {
            let count = Int(random.next() % 5)
            return (0..<count).map { _ in Self.pieces[Int(random.next() % UInt64(Self.pieces.count))] }.joined()
        }
        var mismatches: [String] = []
        for _ in 0..<20_000 {
            let a = string()
            let b = random.next() % 4 == 0 ? a + string() : string()
            let expected = Self.reference(a, b)
            if Self.collate(a, b) != expected || Self.collate(b, a) != -expected {
                mismatches.append("\(a.debugDescription) vs \(b.debugDescription): expected \(expected)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }

    @Test func differencesNextToNonASCIICharactersAreNormalized() {
        // A combining mark after the first differing ASCII byte composes with it: "e\u{301}" is "é",
        // after "f" though "e" is before "f".
        #expect(Self.collate("e\u{301}", "f") == 1)
        #expect(Self.collate("xe\u{301}", "xf") == 1)
        // A longer string whose next character composes with the shorter one's last: "e" < "é".
        #expect(Self.collate("e", "e\u{301}") == -1)
        #expect(Self.collate("e\u{301}", "\u{E9}") == 0)
        // A non-ASCII character that normalizes to an ASCII one.
        #expect(Self.collate("K", "\u{212A}") == 0)
        #expect(Self.collate("J", "\u{212A}") == -1)
        // ASCII differences decide by bytes, whatever precedes them.
        #expect(Self.collate("é1", "é2") == -1)
        #expect(Self.collate("user-10@example.com", "user-9@example.com") == -1)
        #expect(Self.collate("abcdefgh", "abcdefgh") == 0)
        #expect(Self.collate("abcdefgh", "abcdefghi") == -1)
    }
}
