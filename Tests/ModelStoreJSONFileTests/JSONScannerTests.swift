import Foundation
import ModelStoreTestSupport
import Testing

@testable import ModelStoreJSONFile

/// The byte-level parser: strict JSON syntax, exact numbers, strings with every escape, and limits.
struct JSONScannerTests {
    static let limits = JSONReadLimits(maximumDepth: 16, maximumStringLength: 64, maximumNumberLength: 40)

    /// Runs `body` on a scanner over `text`.
    func scan<R>(_ text: String, limits: JSONReadLimits = limits, _ body: (inout JSONScanner) throws -> R) throws -> R {
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(buffer, limits: limits)
            return try body(&scanner)
        }
    }

    func readError(
        _ text: String, limits: JSONReadLimits = limits, _ body: (inout JSONScanner) throws -> Void
    ) -> JSONReadError? {
        do {
            try scan(text, limits: limits, body)
            return nil
        } catch let error as JSONReadError {
            return error
        } catch {
            return nil
        }
    }

    @Test func stringsDecodeEveryEscape() throws {
        let text = #""quote \" backslash \\ slash \/ \b\f\n\r\t nul \u0000 e-acute \u00e9 euro \u20AC""#
        let value = try scan(
            text, limits: JSONReadLimits(maximumDepth: 4, maximumStringLength: 1_000, maximumNumberLength: 40)
        ) {
            try $0.readString()
        }
        #expect(value == "quote \" backslash \\ slash / \u{8}\u{C}\n\r\t nul \u{0} e-acute é euro €")
    }

    @Test func surrogatePairsBecomeOneScalar() throws {
        let value = try scan(#""\ud83d\ude00 and \uD834\uDD1E""#) { try $0.readString() }
        #expect(value == "😀 and 𝄞")
        #expect(value.unicodeScalars.count == 7)
    }

    @Test func unpairedSurrogatesAreRejected() {
        #expect(
            readError(#""\ud83d alone""#) { _ = try $0.readString() }?.message.contains("unpaired high surrogate")
                == true)
        #expect(readError(#""\ude00""#) { _ = try $0.readString() }?.message.contains("unpaired low surrogate") == true)
        #expect(readError(#""\ud83d\u0041""#) { _ = try $0.readString() }?.message.contains("low surrogate") == true)
    }

    @Test func rawControlCharactersAndBadEscapesAreRejected() {
        let tab = readError("\"a\tb\"") { _ = try $0.readString() }
        #expect(tab?.message.contains("control character 0x9") == true)
        #expect(tab?.offset == 2)
        #expect(readError(#""\x41""#) { _ = try $0.readString() }?.message.contains("invalid escape") == true)
        #expect(
            readError(#""\u12G4""#) { _ = try $0.readString() }?.message.contains("four hexadecimal digits") == true)
    }

    @Test func invalidUTF8IsRejected() throws {
        let bytes: [UInt8] = [0x22, 0x61, 0xC3, 0x28, 0x22]
        let error = bytes.withUnsafeBufferPointer { buffer -> JSONReadError? in
            var scanner = JSONScanner(buffer, limits: Self.limits)
            do {
                _ = try scanner.readString()
                return nil
            } catch {
                return error as? JSONReadError
            }
        }
        #expect(error?.message.contains("not valid UTF-8") == true)
    }

    @Test func nonASCIITextPassesThrough() throws {
        let value = try scan("\"Zürich – 東京 🚆\"") { try $0.readString() }
        #expect(value == "Zürich – 東京 🚆")
    }

    @Test func integersCoverTheWholeInt64Range() throws {
        #expect(try scan("-9223372036854775808") { try $0.readInt64() } == Int64.min)
        #expect(try scan("9223372036854775807") { try $0.readInt64() } == Int64.max)
        #expect(try scan("18446744073709551615") { try $0.readUInt64() } == UInt64.max)
        #expect(try scan("-0") { try $0.readInt64() } == 0)
        #expect(
            readError("9223372036854775808") { _ = try $0.readInt64() }?.message.contains("outside the range of Int64")
                == true)
        #expect(
            readError("-9223372036854775809") { _ = try $0.readInt64() }?.message.contains("outside the range of Int64")
                == true)
        #expect(
            readError("18446744073709551616") { _ = try $0.readUInt64() }?.message.contains(
                "outside the range of UInt64") == true)
        #expect(readError("1.5") { _ = try $0.readInt64() }?.message.contains("expected an integer") == true)
    }

    /// Seeded numbers of 1 to 25 digits, with and without fractions and leading zeros, read as the
    /// standard library reads them: integers exactly (or refused past `UInt64`), doubles to the same
    /// nearest value. The scanner takes the first nineteen digits without overflow checks.
    @Test(arguments: 0..<4)
    func numbersOfEveryLengthReadAsTheStandardLibraryReadsThem(seed: Int) throws {
        var random = SplitMix64(seed: UInt64(seed))
        for _ in 0..<500 {
            let length = Int(random.next() % 25) + 1
            var digits = String(Int(random.next() % 9) + 1)
            for _ in 1..<length { digits.append(String(random.next() % 10)) }
            if let exact = UInt64(digits) {
                #expect(try scan(digits) { try $0.readUInt64() } == exact, "\(digits)")
            } else {
                #expect(readError(digits) { _ = try $0.readUInt64() } != nil, "\(digits) does not fit")
            }
            // At most 40 characters, the default limit: leading zeros after the point, or a point
            // inside the digits (with at least one digit after it).
            let zeros = String(repeating: "0", count: Int(random.next() % 14))
            let split = Int(random.next() % UInt64(length))
            let decimal =
                random.next() % 2 == 0 || split == length - 1
                ? "0.\(zeros)\(digits)" : "\(digits.prefix(split + 1)).\(digits.dropFirst(split + 1))"
            let expected = try #require(Double(decimal))
            #expect(try scan(decimal) { try $0.readDouble() } == expected, "\(decimal)")
        }
    }

    @Test func numberSyntaxIsStrict() {
        for bad in ["01", "1.", ".5", "-", "1e", "+1", "1.e5", "0x10", "NaN", "Infinity", "1 2"] {
            let error = readError(bad) { scanner in
                _ = try scanner.readDouble()
                guard scanner.isAtEnd() else { throw scanner.failure("text after the number") }
            }
            #expect(error != nil, "'\(bad)' should not parse")
        }
    }

    @Test func doublesParseCorrectlyRounded() throws {
        let cases: [(String, Double)] = [
            ("0.1", 0.1), ("-2.5e-3", -2.5e-3), ("1e22", 1e22), ("1e23", 1e23), ("5e-324", .leastNonzeroMagnitude),
            ("1.7976931348623157e308", .greatestFiniteMagnitude), ("2.2250738585072014E-308", 2.2250738585072014e-308),
            ("123456789012345678901234567890", 123456789012345678901234567890.0), ("-0.0", -0.0), ("0e-400", 0),
            ("9007199254740993", 9007199254740993.0), ("0.30000000000000004", 0.30000000000000004),
        ]
        for (text, expected) in cases {
            let value = try scan(text) { try $0.readDouble() }
            #expect(value.bitPattern == expected.bitPattern, "\(text) read as \(value)")
        }
        #expect(readError("1e400") { _ = try $0.readDouble() }?.message.contains("outside the range of Double") == true)
    }

    @Test func doublesRoundTripBitForBitInShortestForm() throws {
        var generator = SystemRandomNumberGenerator()
        var values: [Double] = [
            0, -0.0, 1, -1, 0.1, 1.0 / 3, .pi, 1e-300, 1e300, .leastNonzeroMagnitude,
            .greatestFiniteMagnitude, .leastNormalMagnitude, 1e15, 1e16, 123456789.125, 2e-7,
        ]
        for _ in 0..<2_000 {
            values.append(Double(bitPattern: generator.next() & ~(0x7FF << 52) | (UInt64.random(in: 1...0x7FE) << 52)))
        }
        for value in values where value.isFinite {
            let out = JSONOutput()
            out.double(value)
            let text = String(decoding: out.bytes, as: UTF8.self)
            let parsed = try scan(text) { try $0.readDouble() }
            #expect(parsed.bitPattern == value.bitPattern, "\(value) wrote '\(text)' and read \(parsed)")
            #expect(text.contains(".") || text.contains("e"), "'\(text)' would read back as an integer")
            // Shortest: never longer than Swift's own shortest round-tripping description.
            #expect(text.count <= value.description.count + 2, "'\(text)' is longer than '\(value.description)'")
        }
    }

    @Test func integersAndStringsWriteAndReadBack() throws {
        for value: Int64 in [0, 1, -1, 42, 1_000_000, .min, .max] {
            let out = JSONOutput()
            out.int(value)
            #expect(try scan(String(decoding: out.bytes, as: UTF8.self)) { try $0.readInt64() } == value)
        }
        let text = "tab\t nl\n nul\u{0} bell\u{7} del\u{7F} quote\" backslash\\ é 😀"
        let out = JSONOutput()
        out.string(text)
        let written = String(decoding: out.bytes, as: UTF8.self)
        #expect(!written.unicodeScalars.contains { $0.value < 0x20 })
        #expect(
            try scan(
                written, limits: JSONReadLimits(maximumDepth: 4, maximumStringLength: 1_000, maximumNumberLength: 40)
            ) {
                try $0.readString()
            } == text)
    }

    @Test func whitespaceAnywhereIsAccepted() throws {
        let text = " \n\t{ \r\n \"a\" \t:\n [ 1 ,\t2 , { } , [ ] ] , \"b\" : null } \n"
        try scan(text) { scanner in
            try scanner.skipValue()
            let atEnd = scanner.isAtEnd()
            #expect(atEnd)
        }
    }

    @Test func structuralErrorsSayWhatWasExpected() {
        #expect(readError("{\"a\" 1}") { try $0.skipValue() }?.message.contains("expected ':'") == true)
        #expect(readError("[1 2]") { try $0.skipValue() }?.message.contains("expected ',' or ']'") == true)
        #expect(readError("{\"a\":1,}") { try $0.skipValue() }?.message.contains("expected a quoted key") == true)
        #expect(readError("[tru]") { try $0.skipValue() }?.message.contains("expected 'true'") == true)
        #expect(
            readError("{'a':1}") { try $0.skipValue() }?.message.contains("expected a quoted key but found '''") == true
        )
    }

    @Test func truncatedInputSaysSo() {
        for truncated in ["{\"a\": [1, 2", "\"unterminated", "{\"a\":", "[", "tr"] {
            let error = readError(truncated) { try $0.skipValue() }
            #expect(
                error?.message.contains("truncated") == true || error?.message.contains("expected 'true'") == true,
                "'\(truncated)': \(String(describing: error?.message))")
        }
    }

    @Test func nestingDeeperThanTheLimitIsRejected() throws {
        let deep = String(repeating: "[", count: 17) + String(repeating: "]", count: 17)
        #expect(readError(deep) { try $0.skipValue() }?.message.contains("nested more than 16 levels") == true)
        let allowed = String(repeating: "[", count: 16) + String(repeating: "]", count: 16)
        try scan(allowed) { try $0.skipValue() }
        // A hostile depth far beyond the stack is refused long before it matters.
        let hostile = String(repeating: "[", count: 1_000_000)
        #expect(
            readError(
                hostile, limits: JSONReadLimits(maximumDepth: 256, maximumStringLength: 64, maximumNumberLength: 40)
            ) {
                try $0.skipValue()
            }?.message.contains("nested more than 256 levels") == true)
    }

    @Test func longStringsAndNumbersAreRejected() {
        let long = "\"" + String(repeating: "x", count: 65) + "\""
        #expect(readError(long) { _ = try $0.readString() }?.message.contains("more than the limit of 64") == true)
        let number = String(repeating: "1", count: 41)
        #expect(readError(number) { _ = try $0.scanNumber() }?.message.contains("more than the limit of 40") == true)
    }

    @Test func base64AndUUIDTextParseStrictly() {
        func base64(_ text: String) -> Data? { Array(text.utf8).withUnsafeBufferPointer { TextScalars.base64($0) } }
        #expect(base64("aGVsbG8=") == Data("hello".utf8))
        #expect(base64("aGVsbG8") == Data("hello".utf8))
        #expect(base64("") == Data())
        #expect(base64("aGVsbG8*") == nil)
        #expect(base64("a") == nil)
        #expect(base64("aGVsbG9=") == nil, "non-zero padding bits")
        for length in 0..<20 {
            let data = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) })
            let out = JSONOutput()
            out.base64(data)
            let text = String(decoding: out.bytes.dropFirst().dropLast(), as: UTF8.self)
            #expect(text == data.base64EncodedString())
            #expect(base64(text) == data)
        }
        let uuid = UUID()
        let out = JSONOutput()
        out.uuid(uuid)
        #expect(String(decoding: out.bytes, as: UTF8.self) == "\"\(uuid.uuidString)\"")
        #expect(Array(uuid.uuidString.lowercased().utf8).withUnsafeBufferPointer { TextScalars.uuid($0) } == uuid)
        #expect(Array("not-a-uuid".utf8).withUnsafeBufferPointer { TextScalars.uuid($0) } == nil)
    }

    /// Strings are scanned and written eight bytes at a time until a word holds a byte that needs
    /// care; a special byte at any of the eight positions, or straddling words, must be found.
    @Test func wordAtATimeScanningFindsEverySpecialByte() throws {
        var state: UInt64 = 0x5EED
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let alphabet: [UInt8] = Array("abcXYZ09 ~{}".utf8) + [0x7F, 0x20, 0x1F, 0x00, 0x0A, 0x22, 0x5C, 0xC3, 0xA9]
        let limits = JSONReadLimits(maximumDepth: 4, maximumStringLength: 1_000, maximumNumberLength: 40)
        for _ in 0..<3_000 {
            let length = Int(next() % 40)
            // Mostly plain text, with a special byte now and then at a random place.
            let content: [UInt8] = (0..<length).map { _ in
                next() % 6 == 0
                    ? alphabet[Int(next() % UInt64(alphabet.count))] : UInt8(ascii: "a") + UInt8(next() % 26)
            }
            // Writing: the output reads back to the same bytes (when they are valid UTF-8).
            let out = JSONOutput(capacity: 64)
            content.withUnsafeBufferPointer { out.quoted($0) }
            var expected: [UInt8] = [UInt8(ascii: "\"")]
            for byte in content {
                switch byte {
                case 0x22: expected += [0x5C, 0x22]
                case 0x5C: expected += [0x5C, 0x5C]
                case 0x0A: expected += [0x5C, UInt8(ascii: "n")]
                case 0x00: expected += Array("\\u0000".utf8)
                case 0x1F: expected += Array("\\u001f".utf8)
                default: expected.append(byte)
                }
            }
            expected.append(UInt8(ascii: "\""))
            #expect(out.bytes == expected, "\(content)")
            // Scanning the raw bytes: where the string ends, and what it holds.
            let raw = [UInt8(ascii: "\"")] + content + [UInt8(ascii: "\""), UInt8(ascii: " "), UInt8(ascii: "x")]
            let firstSpecial = content.firstIndex { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 }
            let scanned = raw.withUnsafeBufferPointer { buffer -> Result<JSONKey, JSONReadError> in
                var scanner = JSONScanner(buffer, limits: limits)
                do { return .success(try scanner.scanString()) } catch { return .failure(error as! JSONReadError) }
            }
            let special: UInt8? = firstSpecial.map { content[$0] }
            switch (special, scanned) {
            case (nil, .success(let key)):
                #expect(key.count == content.count && !key.hasEscapes)
                #expect(key.isASCII == content.allSatisfy { $0 < 0x80 })
            case (0x22?, .success(let key)):
                #expect(key.count == firstSpecial!, "\(content)")
            case (0x5C?, .success(let key)):
                #expect(key.hasEscapes, "\(content)")
            case (0x5C?, .failure):
                break  // what follows the escape decides; escapes have their own tests
            case (let byte?, .failure(let error)) where byte < 0x20:
                #expect(error.offset == 1 + firstSpecial!, "\(content)")
            default:
                Issue.record("\(content): \(scanned)")
            }
        }
    }
}
