import Foundation

extension StoreValue {
    /// Whether two values are stored the same way, bit for bit: what a store compares to decide
    /// whether a value changed.
    ///
    /// `==` follows Swift's semantics, under which different stored values can be equal: `-0.0 == 0.0`,
    /// canonically equivalent strings (`"e\u{301}mile" == "\u{e9}mile"`) are equal, and `NaN` is
    /// not equal to itself. A store that skips writing a value because it is `==` to the old one
    /// loses such changes; compare with this instead. Doubles and dates compare by bit pattern,
    /// strings and URLs by their exact Unicode scalars, decimals by significand and exponent.
    public func isIdentical(to other: StoreValue) -> Bool {
        switch (self, other) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.uint(let a), .uint(let b)): a == b
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.decimal(let a), .decimal(let b)):
            a.exponent == b.exponent && a.significand == b.significand && a.sign == b.sign && a.isNaN == b.isNaN
        case (.string(let a), .string(let b)): Self.sameUTF8(a, b)
        case (.date(let a), .date(let b)):
            a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.data(let a), .data(let b)): a == b
        case (.uuid(let a), .uuid(let b)): a == b
        case (.url(let a), .url(let b)):
            Self.sameUTF8(a.absoluteString, b.absoluteString) && a.baseURL == b.baseURL
        case (.array(let a), .array(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.isIdentical(to: $1) }
        case (.dictionary(let a), .dictionary(let b)):
            a.count == b.count
                && a.allSatisfy { key, value in
                    // Keys are found by `==`; an equivalent but differently spelled key is a different value.
                    guard let index = b.index(forKey: key), Self.sameUTF8(b[index].key, key) else {
                        return false
                    }
                    return value.isIdentical(to: b[index].value)
                }
        case (.reference(let a), .reference(let b)): a == b
        case (.references(let a), .references(let b)): a == b
        default: false
        }
    }

    /// Whether two strings have the same UTF-8 bytes (not `==`, which equates canonically
    /// equivalent spellings): one `memcmp` of the contiguous storage native strings have, else a
    /// walk of the two views.
    static func sameUTF8(_ a: String, _ b: String) -> Bool {
        var a = a
        var b = b
        guard a.utf8.count == b.utf8.count else { return false }
        return a.withUTF8 { left in
            b.withUTF8 { right in
                left.count == 0 || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
    }
}
