import Foundation
import Testing

@testable import ModelStore

// MARK: - Fixtures

private struct Address: Codable, Equatable {
    var street: String
    var zip: Int
}

private struct Person: Codable, Equatable {
    var name: String
    var age: Int
    var address: Address
}

private struct Team: Codable, Equatable {
    var title: String
    var members: [Person]
}

private struct Profile: Codable, Equatable {
    var nickname: String?
    var score: Int?
}

private enum Status: String, Codable {
    case active, archived
}

private enum Priority: Int, Codable {
    case low = 1
    case high = 9
}

private struct Chore: Codable, Equatable {
    var status: Status
    var priority: Priority
}

private struct Fidelity: Codable, Equatable {
    var date: Date
    var data: Data
    var uuid: UUID
    var url: URL
    var decimal: Decimal
}

private struct Extremes: Codable, Equatable {
    var smallest: Int64
    var largest: Int64
    var largestUnsigned: UInt64
    var word: UInt
    var byte: UInt8
    var unsigned32: UInt32
    var tiny: Int8
}

private struct Measurement: Codable {
    var value: Float
}

private struct Lookup: Codable, Equatable {
    var byName: [String: Int]
    var byNumber: [Int: String]
}

private class Animal: Codable {
    let name: String

    init(name: String) {
        self.name = name
    }
}

private final class Dog: Animal {
    let breed: String

    private enum CodingKeys: String, CodingKey {
        case breed
    }

    init(name: String, breed: String) {
        self.breed = breed
        super.init(name: name)
    }

    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        breed = try container.decode(String.self, forKey: .breed)
        try super.init(from: container.superDecoder())
    }

    override func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(breed, forKey: .breed)
        try super.encode(to: container.superEncoder())
    }
}

/// Encodes an array whose second element is written through `superEncoder()` of an unkeyed container.
private struct Pair: Codable, Equatable {
    var first: String
    var second: Address

    init(first: String, second: Address) {
        self.first = first
        self.second = second
    }

    init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        first = try container.decode(String.self)
        second = try Address(from: container.superDecoder())
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(first)
        try second.encode(to: container.superEncoder())
    }
}

private func roundTrip<T: Codable>(_ value: T) throws -> (stored: StoreValue, decoded: T) {
    let stored = try StoreValueEncoder().encode(value)
    return (stored, try StoreValueDecoder().decode(T.self, from: stored))
}

/// The coding path as plain strings, with array indices as their numbers.
private func pathStrings(_ path: [any CodingKey]) -> [String] {
    path.map { key in key.intValue.map(String.init) ?? key.stringValue }
}

// MARK: - Structure

struct StoreValueCoderStructureTests {
    @Test func nestedStructsBecomeNestedDictionaries() throws {
        let person = Person(name: "Ada", age: 36, address: Address(street: "1 Main St", zip: 12345))
        let (stored, decoded) = try roundTrip(person)
        #expect(
            stored
                == .dictionary([
                    "name": .string("Ada"),
                    "age": .int(36),
                    "address": .dictionary(["street": .string("1 Main St"), "zip": .int(12345)]),
                ]))
        #expect(decoded == person)
    }

    @Test func arraysOfStructsBecomeArraysOfDictionaries() throws {
        let team = Team(
            title: "Core",
            members: [
                Person(name: "Ada", age: 36, address: Address(street: "A", zip: 1)),
                Person(name: "Grace", age: 45, address: Address(street: "B", zip: 2)),
            ])
        let (stored, decoded) = try roundTrip(team)
        guard case .dictionary(let fields) = stored, case .array(let members) = fields["members"] else {
            Issue.record("Expected a dictionary with a members array, got \(stored)")
            return
        }
        #expect(members.count == 2)
        #expect(
            members[1]
                == .dictionary([
                    "name": .string("Grace"),
                    "age": .int(45),
                    "address": .dictionary(["street": .string("B"), "zip": .int(2)]),
                ]))
        #expect(decoded == team)
    }

    @Test func emptyArrayRoundTrips() throws {
        let team = Team(title: "Nobody", members: [])
        let (stored, decoded) = try roundTrip(team)
        #expect(stored == .dictionary(["title": .string("Nobody"), "members": .array([])]))
        #expect(decoded == team)
    }

    @Test func presentOptionalsAreStoredAsValues() throws {
        let profile = Profile(nickname: "ada", score: 7)
        let (stored, decoded) = try roundTrip(profile)
        #expect(stored == .dictionary(["nickname": .string("ada"), "score": .int(7)]))
        #expect(decoded == profile)
    }

    @Test func absentOptionalsAreOmittedAndDecodeAsNil() throws {
        let profile = Profile(nickname: nil, score: nil)
        let (stored, decoded) = try roundTrip(profile)
        #expect(stored == .dictionary([:]))
        #expect(decoded == profile)
    }

    @Test func explicitNullDecodesAsNil() throws {
        let decoded = try StoreValueDecoder().decode(
            Profile.self, from: .dictionary(["nickname": .null, "score": .int(3)])
        )
        #expect(decoded == Profile(nickname: nil, score: 3))
    }

    @Test func nilElementsOfArraysAreNull() throws {
        let values: [Int?] = [1, nil, 3]
        let (stored, decoded) = try roundTrip(values)
        #expect(stored == .array([.int(1), .null, .int(3)]))
        #expect(decoded == values)
    }

    @Test func topLevelNilIsNull() throws {
        let (stored, decoded) = try roundTrip(String?.none)
        #expect(stored == .null)
        #expect(decoded == nil)
    }

    @Test func rawValueEnumsInsideStructsUseTheirRawValues() throws {
        let chore = Chore(status: .archived, priority: .high)
        let (stored, decoded) = try roundTrip(chore)
        #expect(stored == .dictionary(["status": .string("archived"), "priority": .int(9)]))
        #expect(decoded == chore)
    }

    @Test func stringKeyedDictionariesBecomeDictionaries() throws {
        let lookup = Lookup(byName: ["one": 1, "two": 2], byNumber: [:])
        let (stored, decoded) = try roundTrip(lookup)
        guard case .dictionary(let fields) = stored else {
            Issue.record("Expected a dictionary, got \(stored)")
            return
        }
        #expect(fields["byName"] == .dictionary(["one": .int(1), "two": .int(2)]))
        #expect(decoded == lookup)
    }

    @Test func intKeyedDictionariesStoreKeysAsStrings() throws {
        let lookup = Lookup(byName: [:], byNumber: [1: "one", -5: "minus five", 1000: "thousand"])
        let (stored, decoded) = try roundTrip(lookup)
        guard case .dictionary(let fields) = stored else {
            Issue.record("Expected a dictionary, got \(stored)")
            return
        }
        #expect(
            fields["byNumber"]
                == .dictionary([
                    "1": .string("one"), "-5": .string("minus five"), "1000": .string("thousand"),
                ]))
        #expect(decoded == lookup)
    }

    @Test func classHierarchyNestsSuperclassUnderSuper() throws {
        let dog = Dog(name: "Rex", breed: "Collie")
        let stored = try StoreValueEncoder().encode(dog)
        #expect(
            stored
                == .dictionary([
                    "breed": .string("Collie"),
                    "super": .dictionary(["name": .string("Rex")]),
                ]))
        let decoded = try StoreValueDecoder().decode(Dog.self, from: stored)
        #expect(decoded.name == "Rex")
        #expect(decoded.breed == "Collie")
    }

    @Test func unkeyedSuperEncoderWritesTheNextElement() throws {
        let pair = Pair(first: "home", second: Address(street: "Elm", zip: 9))
        let (stored, decoded) = try roundTrip(pair)
        #expect(stored == .array([.string("home"), .dictionary(["street": .string("Elm"), "zip": .int(9)])]))
        #expect(decoded == pair)
    }

    @Test func valueThatEncodesNothingFailsAtTopLevel() {
        struct Silent: Encodable {
            func encode(to encoder: any Encoder) throws {}
        }
        #expect(throws: EncodingError.self) {
            try StoreValueEncoder().encode(Silent())
        }
    }
}

// MARK: - Scalars and fidelity types

struct StoreValueCoderScalarTests {
    @Test func fidelityTypesKeepTheirOwnCases() throws {
        let value = Fidelity(
            date: Date(timeIntervalSinceReferenceDate: 123_456_789.123_456_7),
            data: Data([0x00, 0xFF, 0x10, 0x80]),
            uuid: try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")),
            url: try #require(URL(string: "https://example.com/a%20b?q=1#frag")),
            decimal: try #require(Decimal(string: "12345678901234567890.123456789"))
        )
        let (stored, decoded) = try roundTrip(value)
        #expect(
            stored
                == .dictionary([
                    "date": .date(value.date),
                    "data": .data(value.data),
                    "uuid": .uuid(value.uuid),
                    "url": .url(value.url),
                    "decimal": .decimal(value.decimal),
                ]))
        #expect(decoded == value)
        #expect(decoded.date.timeIntervalSinceReferenceDate == value.date.timeIntervalSinceReferenceDate)
        #expect(decoded.decimal.description == "12345678901234567890.123456789")
    }

    @Test func fidelityTypesAtTopLevelAndInArrays() throws {
        let date = Date(timeIntervalSince1970: -1.5)
        #expect(try StoreValueEncoder().encode(date) == .date(date))
        #expect(try StoreValueDecoder().decode(Date.self, from: .date(date)) == date)

        let urls = [try #require(URL(string: "file:///tmp/x")), try #require(URL(string: "https://a.b"))]
        let (stored, decoded) = try roundTrip(urls)
        #expect(stored == .array(urls.map(StoreValue.url)))
        #expect(decoded == urls)
    }

    @Test func integerExtremesRoundTrip() throws {
        let value = Extremes(
            smallest: .min, largest: .max, largestUnsigned: .max, word: .max,
            byte: .max, unsigned32: .max, tiny: .min
        )
        let (stored, decoded) = try roundTrip(value)
        #expect(
            stored
                == .dictionary([
                    "smallest": .int(.min),
                    "largest": .int(.max),
                    "largestUnsigned": .uint(.max),
                    "word": .uint(UInt64(UInt.max)),
                    "byte": .int(255),
                    "unsigned32": .int(Int64(UInt32.max)),
                    "tiny": .int(-128),
                ]))
        #expect(decoded == value)
    }

    @Test func wideIntegersUseSixtyFourBitCasesWhenTheyFit() throws {
        #expect(try StoreValueEncoder().encode(Int128(-7)) == .int(-7))
        #expect(try StoreValueEncoder().encode(UInt128(UInt64.max)) == .uint(.max))
        #expect(try StoreValueDecoder().decode(Int128.self, from: .uint(.max)) == Int128(UInt64.max))
        #expect(throws: EncodingError.self) {
            try StoreValueEncoder().encode(UInt128(UInt64.max) + 1)
        }
    }

    @Test(arguments: [
        Float(0.1), .pi, -0.0, .greatestFiniteMagnitude, .leastNonzeroMagnitude, -.infinity, 1 / 3,
    ])
    func floatRoundTripsExactly(_ float: Float) throws {
        let (stored, decoded) = try roundTrip(Measurement(value: float))
        #expect(stored == .dictionary(["value": .double(Double(float))]))
        #expect(decoded.value.bitPattern == float.bitPattern)
    }

    @Test func floatNaNRoundTrips() throws {
        let (stored, decoded) = try roundTrip(Measurement(value: .nan))
        guard case .dictionary(let fields) = stored, case .double(let double) = fields["value"] else {
            Issue.record("Expected a double, got \(stored)")
            return
        }
        #expect(double.isNaN)
        #expect(decoded.value.isNaN)
    }
}

// MARK: - Lenient decoding

struct StoreValueCoderLenientDecodingTests {
    private let decoder = StoreValueDecoder()

    @Test func intDecodesIntoAnyIntegerTypeItFits() throws {
        #expect(try decoder.decode(Int8.self, from: .int(-128)) == -128)
        #expect(try decoder.decode(UInt16.self, from: .int(65_535)) == 65_535)
        #expect(try decoder.decode(UInt64.self, from: .int(42)) == 42)
        #expect(try decoder.decode(Int32.self, from: .uint(7)) == 7)
        #expect(try decoder.decode(Int64.self, from: .uint(UInt64(Int64.max))) == .max)
    }

    @Test func numbersDecodeIntoFloatingPointWhenExact() throws {
        #expect(try decoder.decode(Double.self, from: .int(-3)) == -3)
        #expect(try decoder.decode(Double.self, from: .uint(1 << 60)) == 0x1p60)
        #expect(try decoder.decode(Float.self, from: .double(0.5)) == 0.5)
        #expect(try decoder.decode(Float.self, from: .int(1024)) == 1024)
        #expect(try decoder.decode(Decimal.self, from: .int(-12)) == Decimal(-12))
    }

    @Test(arguments: [
        (StoreValue.int(128), "Int8"),
        (.int(-1), "UInt"),
        (.uint(UInt64(Int64.max) + 1), "Int64"),
    ])
    func integerOverflowIsDataCorrupted(_ value: StoreValue, _ typeName: String) throws {
        let error = try #require(throws: DecodingError.self) {
            switch typeName {
            case "Int8": _ = try decoder.decode(Int8.self, from: value)
            case "UInt": _ = try decoder.decode(UInt.self, from: value)
            default: _ = try decoder.decode(Int64.self, from: value)
            }
        }
        guard case .dataCorrupted(let context) = error else {
            Issue.record("Expected dataCorrupted, got \(error)")
            return
        }
        #expect(context.debugDescription.contains(typeName))
        #expect(context.debugDescription.contains(value.kindName))
    }

    @Test func inexactFloatingPointConversionsThrow() {
        #expect(throws: DecodingError.self) { try decoder.decode(Float.self, from: .double(0.1)) }
        #expect(throws: DecodingError.self) { try decoder.decode(Double.self, from: .int(.max)) }
    }
}

// MARK: - Errors

struct StoreValueCoderErrorTests {
    private let decoder = StoreValueDecoder()

    @Test func typeMismatchNamesPathExpectedTypeAndFoundKind() throws {
        let stored: StoreValue = .dictionary([
            "name": .string("Ada"),
            "age": .int(36),
            "address": .dictionary(["street": .string("secret street"), "zip": .string("secret zip")]),
        ])
        let error = try #require(throws: DecodingError.self) {
            try decoder.decode(Person.self, from: stored)
        }
        guard case .typeMismatch(let type, let context) = error else {
            Issue.record("Expected typeMismatch, got \(error)")
            return
        }
        #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
        #expect(pathStrings(context.codingPath) == ["address", "zip"])
        #expect(context.debugDescription.contains("address.zip"))
        #expect(context.debugDescription.contains("Int"))
        #expect(context.debugDescription.contains("string"))
        #expect(!context.debugDescription.contains("secret"))
    }

    @Test func typeMismatchInsideArrayNamesTheIndex() throws {
        let stored: StoreValue = .dictionary([
            "title": .string("Core"),
            "members": .array([
                .dictionary([
                    "name": .string("A"), "age": .int(1),
                    "address": .dictionary([
                        "street": .string("S"), "zip": .int(1),
                    ]),
                ]),
                .dictionary([
                    "name": .string("B"), "age": .bool(true),
                    "address": .dictionary([
                        "street": .string("S"), "zip": .int(2),
                    ]),
                ]),
            ]),
        ])
        let error = try #require(throws: DecodingError.self) {
            try decoder.decode(Team.self, from: stored)
        }
        guard case .typeMismatch(_, let context) = error else {
            Issue.record("Expected typeMismatch, got \(error)")
            return
        }
        #expect(pathStrings(context.codingPath) == ["members", "1", "age"])
        #expect(context.debugDescription.contains("members[1].age"))
        #expect(context.debugDescription.contains("bool"))
    }

    @Test func wrongContainerKindIsTypeMismatch() throws {
        let error = try #require(throws: DecodingError.self) {
            try decoder.decode(Address.self, from: .array([]))
        }
        guard case .typeMismatch(_, let context) = error else {
            Issue.record("Expected typeMismatch, got \(error)")
            return
        }
        #expect(context.codingPath.isEmpty)
        #expect(context.debugDescription.contains("dictionary"))
        #expect(context.debugDescription.contains("array"))
    }

    @Test func fidelityTypeFromWrongKindIsTypeMismatch() throws {
        let error = try #require(throws: DecodingError.self) {
            try decoder.decode(
                Fidelity.self,
                from: .dictionary([
                    "date": .string("2024-01-01"), "data": .data(Data()), "uuid": .uuid(UUID()),
                    "url": .url(URL(fileURLWithPath: "/")), "decimal": .decimal(1),
                ]))
        }
        guard case .typeMismatch(let type, let context) = error else {
            Issue.record("Expected typeMismatch, got \(error)")
            return
        }
        #expect(ObjectIdentifier(type) == ObjectIdentifier(Date.self))
        #expect(pathStrings(context.codingPath) == ["date"])
    }

    @Test func missingKeyIsKeyNotFound() throws {
        let error = try #require(throws: DecodingError.self) {
            try decoder.decode(Address.self, from: .dictionary(["street": .string("S")]))
        }
        guard case .keyNotFound(let key, let context) = error else {
            Issue.record("Expected keyNotFound, got \(error)")
            return
        }
        #expect(key.stringValue == "zip")
        #expect(context.debugDescription.contains("zip"))
    }

    @Test func nullForRequiredValueIsValueNotFound() throws {
        let error = try #require(throws: DecodingError.self) {
            try decoder.decode(Address.self, from: .dictionary(["street": .null, "zip": .int(1)]))
        }
        guard case .valueNotFound(let type, let context) = error else {
            Issue.record("Expected valueNotFound, got \(error)")
            return
        }
        #expect(ObjectIdentifier(type) == ObjectIdentifier(String.self))
        #expect(pathStrings(context.codingPath) == ["street"])
        #expect(context.debugDescription.contains("null"))
    }

    @Test func readingPastTheEndOfAnArrayIsValueNotFound() throws {
        let error = try #require(throws: DecodingError.self) {
            try decoder.decode(Pair.self, from: .array([.string("only")]))
        }
        guard case .valueNotFound(_, let context) = error else {
            Issue.record("Expected valueNotFound, got \(error)")
            return
        }
        #expect(pathStrings(context.codingPath) == ["1"])
    }
}
