import Foundation
import ModelStore

/// A failure to read a document: what is wrong, and where (a byte offset into the document).
///
/// The document decoder turns it into a ``DataStoreError`` that names the file, the line and the column.
struct JSONReadError: Error, Sendable {
    /// The byte offset where the problem starts.
    var offset: Int
    /// What is wrong, in a user's words, without record contents.
    var message: String
    /// How to fix it, if there is something specific to say.
    var remedy: String?
    /// The code of the ``DataStoreError`` it becomes.
    var code: DataStoreError.Code = .corrupted
}

/// The limits a document must respect, so that a hostile file cannot exhaust the stack or memory.
struct JSONReadLimits: Sendable {
    var maximumDepth: Int
    var maximumStringLength: Int
    var maximumNumberLength: Int
}

/// A pull parser over the bytes of a JSON document (RFC 8259), strict about syntax and UTF-8.
///
/// The document decoder drives it value by value, so records become snapshots without any
/// intermediate tree. Strings without escapes are created straight from the input bytes.
struct JSONScanner {
    let input: UnsafeBufferPointer<UInt8>
    let limits: JSONReadLimits
    /// The offset of the next byte to read.
    var offset = 0
    /// How many arrays and objects enclose the current position.
    var depth = 0
    /// Reused for strings with escapes.
    private var scratch: [UInt8] = []

    init(_ input: UnsafeBufferPointer<UInt8>, limits: JSONReadLimits) {
        self.input = input
        self.limits = limits
    }

    // MARK: Errors

    func failure(_ message: String, at offset: Int? = nil, remedy: String? = nil) -> JSONReadError {
        JSONReadError(offset: offset ?? self.offset, message: message, remedy: remedy)
    }

    private func truncated() -> JSONReadError {
        failure(
            "the document ends in the middle of a value: the file is truncated or incomplete",
            remedy: "Restore the file from its '.backup' copy, or complete the JSON by hand")
    }

    private func unexpected(_ expected: String) -> JSONReadError {
        guard offset < input.count else { return truncated() }
        return failure("expected \(expected) but found \(Self.describe(input[offset]))")
    }

    /// A byte, quoted for a message.
    static func describe(_ byte: UInt8) -> String {
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "the byte 0x" + String(byte, radix: 16, uppercase: true)
    }

    // MARK: Structure

    /// Skips spaces, tabs, line feeds and carriage returns.
    @inline(__always)
    mutating func skipWhitespace() {
        while offset < input.count {
            let byte = input[offset]
            guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
            offset &+= 1
        }
    }

    /// The next significant byte, without consuming it.
    @inline(__always)
    mutating func peek() throws -> UInt8 {
        skipWhitespace()
        guard offset < input.count else { throw truncated() }
        return input[offset]
    }

    /// Whether only whitespace is left.
    mutating func isAtEnd() -> Bool {
        skipWhitespace()
        return offset >= input.count
    }

    /// Consumes `byte` if it comes next.
    @inline(__always)
    mutating func consume(_ byte: UInt8) throws -> Bool {
        guard try peek() == byte else { return false }
        offset &+= 1
        return true
    }

    @inline(__always)
    mutating func expect(_ byte: UInt8, _ description: String) throws {
        guard try peek() == byte else { throw unexpected(description) }
        offset &+= 1
    }

    private mutating func enter() throws {
        depth &+= 1
        if depth > limits.maximumDepth {
            throw failure(
                "values are nested more than \(limits.maximumDepth) levels deep",
                remedy: "Flatten the data, or raise the configuration's 'maximumDepth' limit")
        }
    }

    /// Consumes the `{` of an object.
    mutating func enterObject() throws {
        try expect(UInt8(ascii: "{"), "an object ('{')")
        try enter()
    }

    /// Consumes the `[` of an array.
    mutating func enterArray() throws {
        try expect(UInt8(ascii: "["), "an array ('[')")
        try enter()
    }

    /// Reads the next key of an object and its `:`, or consumes the closing `}` and returns `nil`.
    mutating func nextKey(_ isFirst: inout Bool) throws -> JSONKey? {
        if try consume(UInt8(ascii: "}")) {
            depth &-= 1
            return nil
        }
        if !isFirst { try expect(UInt8(ascii: ","), "',' or '}' after an object member") }
        isFirst = false
        guard try peek() == UInt8(ascii: "\"") else { throw unexpected("a quoted key") }
        let key = try scanString()
        try expect(UInt8(ascii: ":"), "':' after a key")
        return key
    }

    /// Consumes `literal` if the input goes on with exactly its bytes; otherwise consumes nothing.
    ///
    /// The decoder's fast path for text as ModelStore writes it (a record's `, "name": ` between two
    /// values): one comparison where ``nextKey(_:)`` scans the separator, the key and the colon.
    @inline(__always)
    mutating func consume(literal: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = literal.count
        guard let base = input.baseAddress, let bytes = literal.baseAddress, count > 0, count <= input.count &- offset
        else { return false }
        let here = UnsafeRawPointer(base + offset)
        let there = UnsafeRawPointer(bytes)
        if count >= 8 {
            // The first eight bytes and the last eight (which overlap below sixteen) in two word
            // comparisons, without a call; only a longer literal's middle goes to `memcmp`.
            let tail = count &- 8
            guard here.loadUnaligned(as: UInt64.self) == there.loadUnaligned(as: UInt64.self),
                here.loadUnaligned(fromByteOffset: tail, as: UInt64.self)
                    == there.loadUnaligned(fromByteOffset: tail, as: UInt64.self)
            else { return false }
            if count > 16, memcmp(here + 8, there + 8, count &- 16) != 0 { return false }
        } else if memcmp(here, there, count) != 0 {
            return false
        }
        offset &+= count
        return true
    }

    /// Moves to the next element of an array, or consumes the closing `]` and returns `false`.
    mutating func nextElement(_ isFirst: inout Bool) throws -> Bool {
        if try consume(UInt8(ascii: "]")) {
            depth &-= 1
            return false
        }
        if !isFirst { try expect(UInt8(ascii: ","), "',' or ']' after an array element") }
        isFirst = false
        return true
    }

    // MARK: Literals

    /// Consumes `null` if it comes next.
    mutating func consumeNull() throws -> Bool {
        guard try peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// Reads `true` or `false`.
    mutating func readBool() throws -> Bool {
        switch try peek() {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default:
            throw unexpected("true or false")
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard offset + count <= input.count else { throw truncated() }
        for index in 0..<count where input[offset + index] != word.utf8Start[index] {
            throw failure("expected '\(word)' but found \(Self.describe(input[offset + index]))", at: offset + index)
        }
        offset += count
    }

    // MARK: Strings

    /// Scans a string and returns where its content is, without decoding it.
    mutating func scanString() throws -> JSONKey {
        try expect(UInt8(ascii: "\""), "a string")
        let start = offset
        var hasEscapes = false
        var nonASCII: UInt8 = 0
        // Eight bytes at a time while none of them ends the string, starts an escape or is a control
        // character (``SWAR``); the byte loop below takes over at the word that has one.
        if let base = input.baseAddress {
            var high: UInt64 = 0
            while offset &+ 8 <= input.count {
                let word = UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self)
                if SWAR.hasStringSpecial(word) { break }
                high |= word
                offset &+= 8
            }
            if high & SWAR.highBits != 0 { nonASCII = 0x80 }
        }
        while true {
            guard offset < input.count else { throw truncated() }
            let byte = input[offset]
            nonASCII |= byte
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                offset &+= 2
                continue
            }
            if byte < 0x20 {
                throw failure(
                    "a string contains the control character 0x\(String(byte, radix: 16, uppercase: true)) unescaped",
                    remedy: "Write control characters as escapes such as '\\n' or '\\u0001'")
            }
            offset &+= 1
        }
        let length = offset - start
        if length > limits.maximumStringLength {
            throw failure(
                "a string is \(length) bytes long, more than the limit of \(limits.maximumStringLength)",
                at: start, remedy: "Raise the configuration's 'maximumStringLength' limit")
        }
        offset &+= 1
        return JSONKey(start: start, count: length, hasEscapes: hasEscapes, isASCII: nonASCII < 0x80)
    }

    /// Reads a string.
    mutating func readString() throws -> String {
        let key = try scanString()
        return try string(of: key)
    }

    /// The decoded text of a scanned string.
    mutating func string(of key: JSONKey) throws -> String {
        if !key.hasEscapes {
            let bytes = UnsafeBufferPointer(rebasing: input[key.start..<key.start + key.count])
            // ASCII is valid UTF-8: no validation needed.
            if key.isASCII { return String(decoding: bytes, as: UTF8.self) }
            guard let text = String(validating: bytes, as: UTF8.self) else { throw invalidUTF8(key) }
            return text
        }
        try unescape(key)
        guard let text = scratch.withUnsafeBufferPointer({ String(validating: $0, as: UTF8.self) }) else {
            throw invalidUTF8(key)
        }
        return text
    }

    /// The decoded bytes of a scanned string, passed to `body` (valid only during the call).
    mutating func withUTF8<R>(of key: JSONKey, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) throws -> R {
        if !key.hasEscapes { return try body(UnsafeBufferPointer(rebasing: input[key.start..<key.start + key.count])) }
        try unescape(key)
        return try scratch.withUnsafeBufferPointer(body)
    }

    /// Whether a scanned string is exactly `utf8`.
    func matches(_ key: JSONKey, _ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !key.hasEscapes, key.count == utf8.count else { return false }
        guard let base = input.baseAddress, let other = utf8.baseAddress else { return key.count == 0 }
        return memcmp(base + key.start, other, key.count) == 0
    }

    private func invalidUTF8(_ key: JSONKey) -> JSONReadError {
        failure("a string is not valid UTF-8", at: key.start - 1, remedy: "Save the file as UTF-8")
    }

    private mutating func unescape(_ key: JSONKey) throws {
        scratch.removeAll(keepingCapacity: true)
        var index = key.start
        let end = key.start + key.count
        while index < end {
            let byte = input[index]
            guard byte == UInt8(ascii: "\\") else {
                scratch.append(byte)
                index += 1
                continue
            }
            let escapeStart = index
            index += 1
            guard index < end else { throw failure("a string ends with a lone '\\'", at: escapeStart) }
            switch input[index] {
            case UInt8(ascii: "\""): scratch.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): scratch.append(UInt8(ascii: "\\"))
            case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4(at: index + 1, end: end, escapeStart: escapeStart)
                index += 4
                if scalar >= 0xD800 && scalar < 0xDC00 {
                    // A high surrogate must be followed by an escaped low surrogate.
                    guard index + 6 < end, input[index + 1] == UInt8(ascii: "\\"), input[index + 2] == UInt8(ascii: "u")
                    else {
                        throw failure(
                            "a string has a '\\u' escape of an unpaired high surrogate", at: escapeStart,
                            remedy: "Follow '\\uD800'...'\\uDBFF' with a low surrogate '\\uDC00'...'\\uDFFF'")
                    }
                    let low = try hex4(at: index + 3, end: end, escapeStart: escapeStart)
                    guard low >= 0xDC00 && low < 0xE000 else {
                        throw failure(
                            "a string has a high surrogate escape not followed by a low surrogate", at: escapeStart)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    index += 6
                } else if scalar >= 0xDC00 && scalar < 0xE000 {
                    throw failure("a string has a '\\u' escape of an unpaired low surrogate", at: escapeStart)
                }
                appendUTF8(scalar)
            default:
                throw failure(
                    "a string has the invalid escape '\\\(Character(Unicode.Scalar(input[index])))'",
                    at: escapeStart, remedy: "Use one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX")
            }
            index += 1
        }
    }

    private func hex4(at start: Int, end: Int, escapeStart: Int) throws -> UInt32 {
        guard start + 4 <= end else {
            throw failure("a '\\u' escape needs four hexadecimal digits", at: escapeStart)
        }
        var value: UInt32 = 0
        for index in start..<start + 4 {
            let byte = input[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a '\\u' escape needs four hexadecimal digits", at: escapeStart)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case ..<0x80:
            scratch.append(UInt8(scalar))
        case ..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case ..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    // MARK: Numbers

    /// Scans a number (RFC 8259 grammar) and returns where it is and what it holds.
    mutating func scanNumber() throws -> JSONNumber {
        skipWhitespace()
        let start = offset
        var number = JSONNumber(start: start, end: start)
        if offset < input.count && input[offset] == UInt8(ascii: "-") {
            number.isNegative = true
            offset += 1
        }
        guard offset < input.count else { throw truncated() }
        let integerStart = offset
        guard input[offset] >= UInt8(ascii: "0") && input[offset] <= UInt8(ascii: "9") else {
            throw unexpected("a number")
        }
        var significand: UInt64 = 0
        var overflowed = false
        // Nineteen digits always fit in a `UInt64` (below 10^19 < 2^64), leading zeros counted: only
        // the digits after them need the overflow checks.
        var digits = 0
        @inline(__always) func take(_ byte: UInt8) {
            if digits < 19 {
                significand = significand &* 10 &+ UInt64(byte &- UInt8(ascii: "0"))
                digits &+= 1
                return
            }
            guard !overflowed else { return }
            let (product, multiplyOverflow) = significand.multipliedReportingOverflow(by: 10)
            let (sum, addOverflow) = product.addingReportingOverflow(UInt64(byte &- UInt8(ascii: "0")))
            if multiplyOverflow || addOverflow { overflowed = true } else { significand = sum }
        }
        while offset < input.count, input[offset] >= UInt8(ascii: "0") && input[offset] <= UInt8(ascii: "9") {
            take(input[offset])
            offset &+= 1
        }
        if offset - integerStart > 1 && input[integerStart] == UInt8(ascii: "0") {
            throw failure("a number has a leading zero", at: start, remedy: "Write numbers without leading zeros")
        }
        var exponent = 0
        if offset < input.count && input[offset] == UInt8(ascii: ".") {
            number.isInteger = false
            offset += 1
            let fractionStart = offset
            while offset < input.count, input[offset] >= UInt8(ascii: "0") && input[offset] <= UInt8(ascii: "9") {
                take(input[offset])
                exponent -= 1
                offset &+= 1
            }
            guard offset > fractionStart else { throw unexpected("a digit after the decimal point") }
        }
        if offset < input.count && (input[offset] == UInt8(ascii: "e") || input[offset] == UInt8(ascii: "E")) {
            number.isInteger = false
            offset += 1
            var negativeExponent = false
            if offset < input.count && (input[offset] == UInt8(ascii: "+") || input[offset] == UInt8(ascii: "-")) {
                negativeExponent = input[offset] == UInt8(ascii: "-")
                offset += 1
            }
            let exponentStart = offset
            var value = 0
            while offset < input.count, input[offset] >= UInt8(ascii: "0") && input[offset] <= UInt8(ascii: "9") {
                if value < 100_000 { value = value * 10 + Int(input[offset] - UInt8(ascii: "0")) }
                offset &+= 1
            }
            guard offset > exponentStart else { throw unexpected("a digit in the exponent") }
            exponent += negativeExponent ? -value : value
        }
        if offset - start > limits.maximumNumberLength {
            throw failure(
                "a number is \(offset - start) characters long, more than the limit of \(limits.maximumNumberLength)",
                at: start, remedy: "Raise the configuration's 'maximumNumberLength' limit")
        }
        number.end = offset
        number.significand = significand
        number.exponent = exponent
        number.isExact = !overflowed
        return number
    }

    /// Reads an integer that fits in `Int64`.
    mutating func readInt64() throws -> Int64 {
        let number = try scanNumber()
        return try int64(number)
    }

    func int64(_ number: JSONNumber) throws -> Int64 {
        guard number.isInteger else {
            throw failure("expected an integer but found a number with a fraction or an exponent", at: number.start)
        }
        guard number.isExact else { throw failure("an integer is outside the range of Int64", at: number.start) }
        if number.isNegative {
            guard number.significand <= UInt64(Int64.max) + 1 else {
                throw failure("an integer is outside the range of Int64", at: number.start)
            }
            return number.significand == UInt64(Int64.max) + 1 ? .min : -Int64(number.significand)
        }
        guard number.significand <= UInt64(Int64.max) else {
            throw failure(
                "an integer is outside the range of Int64", at: number.start,
                remedy: "Store values above Int64.max in a 'UInt64' property, or tag them as {\"$uint\": …}")
        }
        return Int64(number.significand)
    }

    /// Reads a non-negative integer that fits in `UInt64`.
    mutating func readUInt64() throws -> UInt64 {
        let number = try scanNumber()
        guard number.isInteger else {
            throw failure("expected an integer but found a number with a fraction or an exponent", at: number.start)
        }
        guard number.isExact, !number.isNegative || number.significand == 0 else {
            throw failure("an integer is outside the range of UInt64", at: number.start)
        }
        return number.significand
    }

    /// Reads a number as the nearest `Double` (correctly rounded).
    mutating func readDouble() throws -> Double {
        let number = try scanNumber()
        return try double(number)
    }

    func double(_ number: JSONNumber) throws -> Double {
        if number.isExact && number.significand <= 1 << 53 && number.exponent >= -22 && number.exponent <= 22 {
            // Both operands are exact, so one correctly rounded operation gives the correctly rounded result.
            var value = Double(number.significand)
            if number.exponent < 0 {
                value /= Self.powersOfTen[-number.exponent]
            } else {
                value *= Self.powersOfTen[number.exponent]
            }
            return number.isNegative ? -value : value
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[number.start..<number.end]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw failure(
                "a number is outside the range of Double", at: number.start,
                remedy: "Write infinite values as the strings \"Infinity\" or \"-Infinity\"")
        }
        return value
    }

    /// The text of a scanned number.
    func text(of number: JSONNumber) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: input[number.start..<number.end]), as: UTF8.self)
    }

    static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    // MARK: Skipping

    /// Skips one value of any kind, checking its syntax and the limits.
    mutating func skipValue() throws {
        switch try peek() {
        case UInt8(ascii: "{"):
            try enterObject()
            var first = true
            while try nextKey(&first) != nil { try skipValue() }
        case UInt8(ascii: "["):
            try enterArray()
            var first = true
            while try nextElement(&first) { try skipValue() }
        case UInt8(ascii: "\""):
            _ = try readString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            _ = try readBool()
        case UInt8(ascii: "n"):
            _ = try consumeNull()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try scanNumber()
        default:
            throw unexpected("a JSON value")
        }
    }

    /// The kind of the next value, from its first byte.
    mutating func peekKind() throws -> JSONValueKind {
        switch try peek() {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw unexpected("a JSON value")
        }
    }
}

/// The kinds of JSON values.
enum JSONValueKind: Sendable {
    case object, array, string, number, bool, null
}

/// Where a scanned string's content is in the input (between the quotes, escapes undecoded).
struct JSONKey: Sendable {
    var start: Int
    var count: Int
    var hasEscapes: Bool
    /// Every byte (escapes undecoded) is ASCII.
    var isASCII = false
}

/// A scanned number: its extent and, when it fits, its decimal significand and exponent.
struct JSONNumber: Sendable {
    var start: Int
    var end: Int
    var isNegative = false
    /// No fraction and no exponent.
    var isInteger = true
    /// The digits fit in `significand` (`UInt64`).
    var isExact = true
    var significand: UInt64 = 0
    /// The power of ten the significand is multiplied by.
    var exponent = 0
}

/// Byte tests eight bytes at a time, on a `UInt64` loaded from the text ("SIMD within a register").
enum SWAR {
    static let lowBits: UInt64 = 0x0101_0101_0101_0101
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// Whether some byte of `word` is zero. A borrow can set a higher byte's flag too, but only above
    /// a byte that really is zero, so the answer is exact.
    @inline(__always)
    static func hasZeroByte(_ word: UInt64) -> Bool { (word &- lowBits) & ~word & highBits != 0 }

    /// Whether some byte of `word` is a quote, a backslash or below 0x20: a byte that a JSON string
    /// cannot hold as it is.
    @inline(__always)
    static func hasStringSpecial(_ word: UInt64) -> Bool {
        let quote = word ^ (lowBits &* 0x22)
        let backslash = word ^ (lowBits &* 0x5C)
        // Some byte below 0x20 (the same borrow argument as for zero bytes).
        let control = (word &- lowBits &* 0x20) & ~word & highBits
        return control != 0 || hasZeroByte(quote) || hasZeroByte(backslash)
    }
}
