import CSQLite
import Foundation

/// The collation and functions that make SQLite compare text as Swift's `String` does.
///
/// - `COLLATE SWIFT`: Swift's `==` (canonical equivalence: `"e\u{301}" == "é"`) and `<` (the
///   order of the NFC-normalised scalars). Every text column of a store uses it, so `=`, `<`, `IN`,
///   `ORDER BY` and the unique indexes agree with Swift. Text that first differs at ASCII
///   characters compares as bytes, which is the same order, without building Swift strings.
///
///   The collation is a total order, as a B-tree needs. Swift 6.3's own `<` is not quite one: a
///   decomposed string that is a canonical prefix of a longer precomposed one compares neither less
///   nor greater (`"e\u{301}" < "éa"` and `"éa" < "e\u{301}"` are both `false`, though
///   `"e\u{301}" == "é"` and `"é" < "éa"`). The collation orders such pairs by their NFC scalars,
///   which is what Swift documents and does everywhere else.
/// - `swift_contains(s, t)` and `swift_has_prefix(s, t)`: `#Predicate`'s `contains` and
///   `starts(with:)`, character by character (an empty text is found in every string); `NULL`
///   for a `NULL` string, so a filter on it is false.
///
/// A file written by a store can be read by any SQLite tool; queries that compare its text
/// columns need the collation registered (the `sqlite3` shell reports "no such collation sequence").
package enum SwiftCollation {
    static let name = "SWIFT"

    /// Registers the collation and the functions on a connection. Package access: tests that change a
    /// store's file with SQLite's own API register them on their connection.
    package static func register(on handle: OpaquePointer) {
        sqlite3_create_collation_v2(
            handle, name, SQLITE_UTF8, nil,
            { _, count1, bytes1, count2, bytes2 in
                SwiftCollation.compare(bytes1, Int(count1), bytes2, Int(count2))
            }, nil)
        let flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS
        sqlite3_create_function_v2(
            handle, "swift_contains", 2, flags, nil,
            { context, _, arguments in
                SwiftCollation.textTest(context, arguments) { string, text in SwiftCollation.contains(string, text) }
            }, nil, nil, nil)
        sqlite3_create_function_v2(
            handle, "swift_has_prefix", 2, flags, nil,
            { context, _, arguments in
                SwiftCollation.textTest(context, arguments) { string, text in string.starts(with: text) }
            }, nil, nil, nil)
    }

    /// Swift's order of two UTF-8 strings, as `-1`, `0` or `1`.
    ///
    /// Decided by bytes, without building Swift strings, when the strings first differ at ASCII
    /// bytes each followed by an ASCII byte or the end (or one is the other followed by an ASCII
    /// byte): no ASCII character changes under normalization or composes with the characters
    /// before it, so the normalized scalars share the common prefix and then differ exactly as
    /// those bytes do. Only a difference at or next to a non-ASCII byte normalizes both strings.
    package static func compare(_ bytes1: UnsafeRawPointer?, _ count1: Int, _ bytes2: UnsafeRawPointer?, _ count2: Int)
        -> Int32
    {
        let a = UnsafeRawBufferPointer(start: bytes1, count: count1)
        let b = UnsafeRawBufferPointer(start: bytes2, count: count2)
        let common = min(count1, count2)
        var index = 0
        if common > 0, let bytes1, let bytes2 {
            // Equal bytes are equal scalars whatever they are: skip them eight at a time.
            while index + 8 <= common
                && bytes1.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    == bytes2.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            {
                index += 8
            }
            while index < common && a[index] == b[index] { index += 1 }
        }
        if index < common {
            let x = a[index]
            let y = b[index]
            if x < 0x80 && y < 0x80 && isASCIIOrEnd(a, index + 1) && isASCIIOrEnd(b, index + 1) {
                return x < y ? -1 : 1
            }
        } else if count1 == count2 {
            // The same bytes are the same scalars: equal (a unique index's look-ups meet this case).
            return 0
        } else if count1 < count2 ? b[common] < 0x80 : a[common] < 0x80 {
            // The longer goes on with an ASCII character, which nothing before it composes with.
            return count1 < count2 ? -1 : 1
        }
        let x = String(decoding: a, as: UTF8.self).precomposedStringWithCanonicalMapping.unicodeScalars
        let y = String(decoding: b, as: UTF8.self).precomposedStringWithCanonicalMapping.unicodeScalars
        if x.elementsEqual(y) { return 0 }
        return x.lexicographicallyPrecedes(y) ? -1 : 1
    }

    /// Whether the byte at `index` is ASCII, or `index` is the end.
    @inline(__always)
    private static func isASCIIOrEnd(_ bytes: UnsafeRawBufferPointer, _ index: Int) -> Bool {
        index >= bytes.count || bytes[index] < 0x80
    }

    /// `Collection.contains(_:)` over characters, as `#Predicate` evaluates it.
    static func contains<A: Collection, B: Collection>(_ base: A, _ other: B) -> Bool
    where A.Element == B.Element, A.Element: Equatable {
        base.contains(other)
    }

    static func textTest(
        _ context: OpaquePointer?, _ arguments: UnsafeMutablePointer<OpaquePointer?>?,
        _ test: (String, String) -> Bool
    ) {
        guard let arguments, let string = text(arguments[0]), let text = text(arguments[1]) else {
            sqlite3_result_null(context)
            return
        }
        sqlite3_result_int(context, test(string, text) ? 1 : 0)
    }

    private static func text(_ value: OpaquePointer?) -> String? {
        guard sqlite3_value_type(value) == SQLITE_TEXT, let bytes = sqlite3_value_text(value) else { return nil }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}
