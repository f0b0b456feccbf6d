import Foundation
import ModelStore
import Testing

@testable import ModelStoreJSONFile

/// Every value kind, through the document's value forms and back, without loss.
struct ValueRoundTripTests {
    let context = ValueContext(storeIdentifier: "json-test") { name, offset in
        throw JSONReadError(offset: offset, message: "no external file '\(name)' in this test")
    }

    func roundTrip(_ value: StoreValue, as shape: ValueShape) throws -> (text: String, value: StoreValue) {
        let out = JSONOutput()
        ValueWriter(out: out, storeIdentifier: "json-test").write(value, as: shape)
        let bytes = out.bytes
        let read = try bytes.withUnsafeBufferPointer { buffer in
            var scanner = JSONScanner(
                buffer, limits: JSONReadLimits(maximumDepth: 64, maximumStringLength: 1 << 20, maximumNumberLength: 256)
            )
            let value = try scanner.readValue(shape, context)
            let atEnd = scanner.isAtEnd()
            #expect(atEnd)
            return value
        }
        return (String(decoding: bytes, as: UTF8.self), read)
    }

    func expectRoundTrip(
        _ value: StoreValue, as shape: ValueShape, writes expected: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let (text, read) = try roundTrip(value, as: shape)
        #expect(read.isIdentical(to: value), "\(value) wrote \(text) and read \(read)", sourceLocation: sourceLocation)
        if let expected { #expect(text == expected, sourceLocation: sourceLocation) }
    }

    static let id = PersistentIdentifier.identifier(for: "json-test", entityName: "Part", primaryKey: 7)

    @Test func naturalFormsAreReadable() throws {
        try expectRoundTrip(.bool(true), as: .bool, writes: "true")
        try expectRoundTrip(.int(-42), as: .int(bits: 64, signed: true), writes: "-42")
        try expectRoundTrip(.int(200), as: .int(bits: 8, signed: false), writes: "200")
        try expectRoundTrip(.uint(.max), as: .uint64, writes: "18446744073709551615")
        try expectRoundTrip(.double(1200), as: .double, writes: "1200.0")
        try expectRoundTrip(.double(0.1), as: .double, writes: "0.1")
        try expectRoundTrip(.double(Double(Float(0.1))), as: .float, writes: "0.1")
        try expectRoundTrip(.decimal(Decimal(string: "12.50")!), as: .decimal, writes: "\"12.5\"")
        try expectRoundTrip(.string("Rome"), as: .string, writes: "\"Rome\"")
        try expectRoundTrip(
            .date(Date(timeIntervalSinceReferenceDate: 736_000_000.123456)), as: .date, writes: "736000000.123456")
        try expectRoundTrip(.data(Data("hello".utf8)), as: .data, writes: "\"aGVsbG8=\"")
        try expectRoundTrip(
            .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), as: .uuid,
            writes: "\"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\"")
        try expectRoundTrip(
            .url(URL(string: "https://example.com/a?b=c")!), as: .url, writes: "\"https://example.com/a?b=c\"")
        try expectRoundTrip(.null, as: .string, writes: "null")
        try expectRoundTrip(.array([.string("a"), .string("b")]), as: .array(.string), writes: "[\"a\", \"b\"]")
        try expectRoundTrip(
            .dictionary(["b": .double(2), "a": .double(1)]), as: .stringDictionary(.double),
            writes: "{\"a\": 1.0, \"b\": 2.0}")
        try expectRoundTrip(
            .array([.array([.int(1), .string("one")]), .array([.int(2), .string("two")])]),
            as: .pairs(key: .int(bits: 64, signed: true), value: .string), writes: "[[1, \"one\"], [2, \"two\"]]")
        try expectRoundTrip(.reference(Self.id), as: .toOne(destination: "Part"), writes: "7")
        try expectRoundTrip(.references([Self.id]), as: .toMany(destination: "Part"), writes: "[7]")
    }

    @Test func extremesRoundTrip() throws {
        try expectRoundTrip(.int(.min), as: .int(bits: 64, signed: true), writes: "-9223372036854775808")
        try expectRoundTrip(.int(.max), as: .int(bits: 64, signed: true), writes: "9223372036854775807")
        try expectRoundTrip(.double(-0.0), as: .double, writes: "-0.0")
        try expectRoundTrip(.double(.leastNonzeroMagnitude), as: .double)
        try expectRoundTrip(.double(.greatestFiniteMagnitude), as: .double)
        try expectRoundTrip(.double(Double(Float.greatestFiniteMagnitude)), as: .float)
        try expectRoundTrip(.date(.distantFuture), as: .date)
        try expectRoundTrip(.date(.distantPast), as: .date)
        try expectRoundTrip(.decimal(Decimal(string: "-123456789012345678901234567890.123456789")!), as: .decimal)
        try expectRoundTrip(.decimal(Decimal(string: "1e100")!), as: .decimal)
        try expectRoundTrip(.string(""), as: .string, writes: "\"\"")
        try expectRoundTrip(.string("\u{0}\u{1F}\"\\\n😀"), as: .string, writes: #""\u0000\u001f\"\\\n😀""#)
        try expectRoundTrip(.data(Data()), as: .data, writes: "\"\"")
        try expectRoundTrip(.data(Data((0...255).map(UInt8.init))), as: .data)
    }

    @Test func nonFiniteNumbersFollowTheStringRule() throws {
        try expectRoundTrip(.double(.infinity), as: .double, writes: "\"Infinity\"")
        try expectRoundTrip(.double(-.infinity), as: .double, writes: "\"-Infinity\"")
        try expectRoundTrip(.double(.infinity), as: .float, writes: "\"Infinity\"")
        try expectRoundTrip(.date(Date(timeIntervalSinceReferenceDate: .infinity)), as: .date, writes: "\"Infinity\"")
        try expectRoundTrip(.double(.infinity), as: .any, writes: "{\"$double\": \"Infinity\"}")
        // Every NaN reads back as the standard quiet NaN (payloads are not kept).
        let (text, read) = try roundTrip(.double(.nan), as: .double)
        #expect(text == "\"NaN\"")
        guard case .double(let value) = read else {
            Issue.record("NaN read back as \(read)")
            return
        }
        #expect(value.isNaN)
    }

    @Test func compositeValuesNestWithTags() throws {
        let nested: StoreValue = .dictionary([
            "width": .double(2.5), "count": .int(3), "label": .string("box"),
            "at": .date(Date(timeIntervalSinceReferenceDate: 1.5)),
            "serial": .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!), "big": .uint(5),
            "price": .decimal(Decimal(string: "9.99")!), "blob": .data(Data([1, 2, 3])),
            "site": .url(URL(string: "https://example.com")!), "none": .null,
            "flags": .array([.bool(true), .bool(false)]),
            "inner": .dictionary([
                "$weird": .string("dollar"), "$$double": .int(1), "deep": .array([.array([.int(1)])]),
            ]),
        ])
        let (text, read) = try roundTrip(nested, as: .any)
        #expect(read.isIdentical(to: nested), "wrote \(text)")
        #expect(text.contains("\"at\": {\"$date\": 1.5}"))
        #expect(text.contains("\"big\": {\"$uint\": 5}"))
        #expect(text.contains("\"$$weird\": \"dollar\""))
        #expect(text.contains("\"$$$double\": 1"))
    }

    @Test func valuesOfTheWrongKindAreTaggedNotLost() throws {
        // A value whose case doesn't match the property's type is written explicitly.
        try expectRoundTrip(.int(5), as: .double, writes: "{\"$int\": 5}")
        try expectRoundTrip(.int(5), as: .uint64, writes: "{\"$int\": 5}")
        try expectRoundTrip(.string("x"), as: .int(bits: 64, signed: true), writes: "{\"$string\": \"x\"}")
        try expectRoundTrip(.double(0.1), as: .float, writes: "{\"$double\": 0.1}")
        try expectRoundTrip(.dictionary(["a": .int(1)]), as: .string, writes: "{\"$dictionary\": {\"a\": 1}}")
        try expectRoundTrip(.string("single"), as: .any, writes: "\"single\"")
        let relative = URL(string: "b/c", relativeTo: URL(string: "https://example.com/a/"))!
        try expectRoundTrip(.url(relative), as: .url)
        let foreign = PersistentIdentifier.identifier(for: "other-store", entityName: "Part", primaryKey: "abc")
        try expectRoundTrip(
            .reference(foreign), as: .toOne(destination: "Part"),
            writes: "{\"$reference\": {\"entity\": \"Part\", \"key\": \"abc\", \"store\": \"other-store\"}}")
        try expectRoundTrip(.references([Self.id, foreign]), as: .toMany(destination: "Part"))
        try expectRoundTrip(.reference(Self.id), as: .toMany(destination: "Part"))
    }

    @Test func dollarKeysThatAreNotTagsAreRejected() {
        for text in [#"{"$nope": 1}"#, #"{"a": 1, "$int": 2}"#, #"{"$int": 1, "b": 2}"#] {
            #expect(throws: JSONReadError.self, "\(text)") {
                try Array(text.utf8).withUnsafeBufferPointer { buffer in
                    var scanner = JSONScanner(
                        buffer,
                        limits: JSONReadLimits(maximumDepth: 8, maximumStringLength: 64, maximumNumberLength: 64))
                    _ = try scanner.readValue(.any, context)
                }
            }
        }
    }

    @Test func integersOutOfTheirTypesRangeAreRejected() {
        for (text, shape) in [
            ("256", ValueShape.int(bits: 8, signed: false)), ("-1", .int(bits: 32, signed: false)),
            ("128", .int(bits: 8, signed: true)), ("-1", .uint64),
        ] {
            #expect(throws: JSONReadError.self, "\(text)") {
                try Array(text.utf8).withUnsafeBufferPointer { buffer in
                    var scanner = JSONScanner(
                        buffer,
                        limits: JSONReadLimits(maximumDepth: 8, maximumStringLength: 64, maximumNumberLength: 64))
                    _ = try scanner.readValue(shape, context)
                }
            }
        }
    }
}
