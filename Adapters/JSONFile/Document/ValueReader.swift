import Foundation
import ModelStore

/// What reading values needs beyond the bytes: whose keys bare references are, and where external files are.
struct ValueContext {
    /// The store identifier that bare keys in relationships belong to.
    var storeIdentifier: String
    /// Loads the bytes of an external file named by a `{"$file": …}` tag at a byte offset.
    var loadExternalFile: (_ name: String, _ offset: Int) throws -> Data
}

extension JSONScanner {
    /// Reads a value of `shape`: its natural form, `null`, or any explicit tag.
    ///
    /// `allowsFile` accepts a `{"$file": name}` tag (the value of an `.externalStorage` attribute).
    mutating func readValue(_ shape: ValueShape, _ context: ValueContext, allowsFile: Bool = false) throws -> StoreValue
    {
        skipWhitespace()
        let start = offset
        let kind = try peekKind()
        if case .toOne(let destination) = shape, kind == .number || kind == .string {
            return .reference(try readRelationshipKey(destination: destination, context))
        }
        switch kind {
        case .null:
            _ = try consumeNull()
            return .null
        case .object:
            return try readObject(shape, context, allowsFile: allowsFile)
        case .array:
            return try readArray(shape, context, start: start)
        case .string:
            return try readStringValue(shape, start: start)
        case .number:
            return try readNumberValue(shape, start: start)
        case .bool:
            switch shape {
            case .bool, .any: return .bool(try readBool())
            default: throw mismatch(shape, found: "true or false", at: start)
            }
        }
    }

    private func mismatch(_ shape: ValueShape, found: String, at offset: Int) -> JSONReadError {
        failure("expected \(shape.expectation) but found \(found)", at: offset)
    }

    // MARK: Numbers

    private mutating func readNumberValue(_ shape: ValueShape, start: Int) throws -> StoreValue {
        let number = try scanNumber()
        switch shape {
        case .any:
            return number.isInteger ? .int(try int64(number)) : .double(try double(number))
        case .int(let bits, let signed):
            let value = try int64(number)
            let fits =
                signed
                ? bits >= 64 || (value >= -(1 << (bits - 1)) && value < 1 << (bits - 1))
                : value >= 0 && (bits >= 64 || value < 1 << bits)
            guard fits else {
                throw failure("the integer does not fit in \(signed ? "Int" : "UInt")\(bits)", at: start)
            }
            return .int(value)
        case .uint64:
            return .uint(try uint64(number))
        case .double:
            return .double(try double(number))
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: try double(number)))
        case .float:
            return .double(Double(try float(number)))
        case .decimal:
            return .decimal(try decimal(number))
        default:
            throw mismatch(shape, found: "a number", at: start)
        }
    }

    func uint64(_ number: JSONNumber) throws -> UInt64 {
        guard number.isInteger else {
            throw failure("expected an integer but found a number with a fraction or an exponent", at: number.start)
        }
        guard number.isExact, !number.isNegative || number.significand == 0 else {
            throw failure("the integer does not fit in UInt64", at: number.start)
        }
        return number.significand
    }

    /// The nearest `Float`, rounded once (never through `Double`).
    func float(_ number: JSONNumber) throws -> Float {
        if number.isExact && number.significand <= 1 << 24 && number.exponent >= -10 && number.exponent <= 10 {
            var value = Float(number.significand)
            let power = Float(Self.powersOfTen[abs(number.exponent)])
            if number.exponent < 0 { value /= power } else { value *= power }
            return number.isNegative ? -value : value
        }
        guard let value = Float(text(of: number)), value.isFinite else {
            throw failure("the number is outside the range of Float", at: number.start)
        }
        return value
    }

    func decimal(_ number: JSONNumber) throws -> Decimal {
        guard let value = Decimal(string: text(of: number), locale: Locale(identifier: "en_US_POSIX")) else {
            throw failure("the number is not a valid Decimal", at: number.start)
        }
        return value
    }

    // MARK: Strings

    private mutating func readStringValue(_ shape: ValueShape, start: Int) throws -> StoreValue {
        switch shape {
        case .string, .any:
            return .string(try readString())
        case .double:
            return .double(try nonFinite(try readString(), at: start))
        case .float:
            return .double(try nonFinite(try readString(), at: start))
        case .date:
            return .date(try date(fromText: try readString(), at: start))
        case .decimal:
            return .decimal(try decimal(fromText: try scanString(), at: start))
        case .data:
            return .data(try base64(try scanString(), at: start))
        case .uuid:
            let key = try scanString()
            guard let uuid = try withUTF8(of: key, { TextScalars.uuid($0) }) else {
                throw failure("expected a UUID string such as \"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\"", at: start)
            }
            return .uuid(uuid)
        case .url:
            let text = try readString()
            guard let url = URL(string: text) else { throw failure("the string is not a valid URL", at: start) }
            return .url(url)
        default:
            throw mismatch(shape, found: "a string", at: start)
        }
    }

    /// `"NaN"`, `"Infinity"` or `"-Infinity"`.
    func nonFinite(_ text: String, at start: Int) throws -> Double {
        switch text {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default:
            throw failure("expected a number, or one of the strings \"NaN\", \"Infinity\", \"-Infinity\"", at: start)
        }
    }

    /// A date from `"NaN"`/`"Infinity"`/`"-Infinity"` or an ISO 8601 string (for files written by hand).
    func date(fromText text: String, at start: Int) throws -> Date {
        if let seconds = try? nonFinite(text, at: start) { return Date(timeIntervalSinceReferenceDate: seconds) }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: text) { return date }
        throw failure("expected \(ValueShape.date.expectation), such as \"2024-05-01T09:30:00Z\"", at: start)
    }

    mutating func decimal(fromText key: JSONKey, at start: Int) throws -> Decimal {
        let value = try withUTF8(of: key) { bytes -> Decimal? in
            if bytes.count == 3, bytes[0] == UInt8(ascii: "N"), bytes[1] == UInt8(ascii: "a"),
                bytes[2] == UInt8(ascii: "N")
            {
                return Decimal.nan
            }
            return TextScalars.decimal(bytes)
        }
        guard let value else { throw failure("expected \(ValueShape.decimal.expectation)", at: start) }
        return value
    }

    mutating func base64(_ key: JSONKey, at start: Int) throws -> Data {
        guard let data = try withUTF8(of: key, { TextScalars.base64($0) }) else {
            throw failure("expected a base64 string (RFC 4648)", at: start)
        }
        return data
    }

    // MARK: Arrays

    private mutating func readArray(_ shape: ValueShape, _ context: ValueContext, start: Int) throws -> StoreValue {
        var items: [StoreValue] = []
        var first = true
        switch shape {
        case .any:
            try enterArray()
            while try nextElement(&first) { items.append(try readValue(.any, context)) }
            return .array(items)
        case .array(let element):
            try enterArray()
            while try nextElement(&first) { items.append(try readValue(element, context)) }
            return .array(items)
        case .pairs(let keyShape, let valueShape):
            try enterArray()
            while try nextElement(&first) {
                let pairStart = offset
                guard try peekKind() == .array else { throw failure("expected a [key, value] pair", at: pairStart) }
                try enterArray()
                var pairFirst = true
                guard try nextElement(&pairFirst) else { throw failure("expected a [key, value] pair", at: pairStart) }
                let key = try readValue(keyShape, context)
                guard try nextElement(&pairFirst) else { throw failure("expected a [key, value] pair", at: pairStart) }
                let value = try readValue(valueShape, context)
                guard try !nextElement(&pairFirst) else {
                    throw failure("a [key, value] pair has more than two elements", at: pairStart)
                }
                items.append(.array([key, value]))
            }
            return .array(items)
        case .toMany(let destination):
            var ids: [PersistentIdentifier] = []
            try enterArray()
            while try nextElement(&first) {
                ids.append(try readRelationshipKey(destination: destination, context))
            }
            return .references(ids)
        default:
            throw mismatch(shape, found: "an array", at: start)
        }
    }

    /// One key of a relationship: an integer or string key into `destination`, or a `$reference` tag.
    mutating func readRelationshipKey(destination: String, _ context: ValueContext) throws -> PersistentIdentifier {
        skipWhitespace()
        let start = offset
        switch try peekKind() {
        case .number:
            return .identifier(for: context.storeIdentifier, entityName: destination, primaryKey: try readInt64())
        case .string:
            return .identifier(
                for: context.storeIdentifier, entityName: destination, primaryKey: try readString() as String)
        case .object:
            guard case .reference(let id) = try readObject(.any, context, allowsFile: false) else {
                throw failure(
                    "expected the key of a related '\(destination)' or a {\"$reference\": …} tag", at: start)
            }
            return id
        default:
            throw failure("expected the key of a related '\(destination)'", at: start)
        }
    }

    // MARK: Objects and tags

    private mutating func readObject(
        _ shape: ValueShape, _ context: ValueContext, allowsFile: Bool
    ) throws -> StoreValue {
        skipWhitespace()
        let start = offset
        try enterObject()
        var first = true
        guard let firstKey = try nextKey(&first) else {
            switch shape {
            case .any, .stringDictionary: return .dictionary([:])
            default: throw mismatch(shape, found: "an empty object", at: start)
            }
        }
        if let tag = try tagName(firstKey) {
            let value = try readTagged(tag, context, allowsFile: allowsFile, keyStart: firstKey.start - 1)
            guard try nextKey(&first) == nil else {
                throw failure(
                    "a tagged value such as {\"\(tag.rawValue)\": …} must have exactly one key", at: start,
                    remedy: "Escape a dictionary key that begins with '$' by doubling it ('$$')")
            }
            return value
        }
        let valueShape: ValueShape
        switch shape {
        case .any: valueShape = .any
        case .stringDictionary(let element): valueShape = element
        default: throw mismatch(shape, found: "an object", at: start)
        }
        var dictionary: [String: StoreValue] = [:]
        var key: JSONKey? = firstKey
        while let current = key {
            let name = try dictionaryKey(current)
            guard dictionary.updateValue(try readValue(valueShape, context), forKey: name) == nil else {
                throw failure("an object has the key '\(name)' twice", at: current.start - 1)
            }
            key = try nextKey(&first)
        }
        return .dictionary(dictionary)
    }

    /// The tag a key names, `nil` for an ordinary key; throws for an unknown `$` key.
    private mutating func tagName(_ key: JSONKey) throws -> ValueTag? {
        let name = try withUTF8(of: key) { bytes -> String? in
            guard bytes.count >= 2, bytes[0] == UInt8(ascii: "$"), bytes[1] != UInt8(ascii: "$") else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
        guard let name else { return nil }
        guard let tag = ValueTag(rawValue: name) else {
            throw failure(
                "'\(name)' is not a known tag", at: key.start - 1,
                remedy:
                    "Keys that begin with '$' are tags; write '$$\(name.dropFirst())' for a dictionary key that "
                    + "begins with '$'"
            )
        }
        return tag
    }

    /// A dictionary key with its escaping `$` removed.
    private mutating func dictionaryKey(_ key: JSONKey) throws -> String {
        let name = try string(of: key)
        if name.utf8.first == UInt8(ascii: "$") {
            guard name.utf8.dropFirst().first == UInt8(ascii: "$") else {
                throw failure(
                    "the key '\(name)' begins with '$' but is not the only key of a tag", at: key.start - 1,
                    remedy: "Escape a dictionary key that begins with '$' by doubling it ('$$')")
            }
            return String(name.dropFirst())
        }
        return name
    }

    private mutating func readTagged(
        _ tag: ValueTag, _ context: ValueContext, allowsFile: Bool, keyStart: Int
    ) throws -> StoreValue {
        skipWhitespace()
        let start = offset
        switch tag {
        case .bool: return .bool(try readBool())
        case .int: return .int(try readInt64())
        case .uint: return .uint(try uint64(try scanNumber()))
        case .double:
            if try peekKind() == .string { return .double(try nonFinite(try readString(), at: start)) }
            return .double(try readDouble())
        case .decimal:
            if try peekKind() == .number { return .decimal(try decimal(try scanNumber())) }
            return .decimal(try decimal(fromText: try scanString(), at: start))
        case .string: return .string(try readString())
        case .date:
            if try peekKind() == .string { return .date(try date(fromText: try readString(), at: start)) }
            return .date(Date(timeIntervalSinceReferenceDate: try readDouble()))
        case .data: return .data(try base64(try scanString(), at: start))
        case .uuid: return try readStringValue(.uuid, start: start)
        case .url:
            guard try peekKind() == .object else { return try readStringValue(.url, start: start) }
            return try readRelativeURL()
        case .array:
            guard try peekKind() == .array else { throw failure("expected an array after '$array'", at: start) }
            return try readArray(.any, context, start: start)
        case .dictionary:
            guard try peekKind() == .object else { throw failure("expected an object after '$dictionary'", at: start) }
            let value = try readObject(.stringDictionary(.any), context, allowsFile: false)
            guard case .dictionary = value else { throw failure("expected an object after '$dictionary'", at: start) }
            return value
        case .reference:
            return .reference(try readIdentifier(context))
        case .references:
            var ids: [PersistentIdentifier] = []
            var first = true
            try enterArray()
            while try nextElement(&first) { ids.append(try readIdentifier(context)) }
            return .references(ids)
        case .file:
            guard allowsFile else {
                throw failure("'$file' is only allowed as the value of an '.externalStorage' attribute", at: keyStart)
            }
            let name = try readString()
            return .data(try context.loadExternalFile(name, start))
        }
    }

    private mutating func readRelativeURL() throws -> StoreValue {
        skipWhitespace()
        let start = offset
        var relative: String?
        var base: String?
        var first = true
        try enterObject()
        while let key = try nextKey(&first) {
            switch try string(of: key) {
            case "relative": relative = try readString()
            case "base": base = try readString()
            default: try skipValue()
            }
        }
        guard let relative, let base, let baseURL = URL(string: base),
            let url = URL(string: relative, relativeTo: baseURL)
        else {
            throw failure("expected {\"relative\": \"…\", \"base\": \"…\"} with valid URLs", at: start)
        }
        return .url(url)
    }

    /// `{"entity": "Trip", "key": 3, "store": "json-…"}`; a missing store means this store.
    private mutating func readIdentifier(_ context: ValueContext) throws -> PersistentIdentifier {
        skipWhitespace()
        let start = offset
        var entity: String?
        var key: PrimaryKey?
        var store: String?? = .none
        var first = true
        try enterObject()
        while let name = try nextKey(&first) {
            switch try string(of: name) {
            case "entity": entity = try readString()
            case "key":
                key = try peekKind() == .string ? .string(try readString()) : .int(try readInt64())
            case "store":
                store = try consumeNull() ? .some(nil) : .some(try readString())
            default:
                throw failure(
                    "a reference has the unknown key '\(try string(of: name))'", at: name.start - 1,
                    remedy: "Use only 'entity', 'key' and 'store'")
            }
        }
        guard let entity, let key else {
            throw failure("a reference needs an 'entity' and a 'key'", at: start)
        }
        let storeIdentifier: String
        switch store {
        case .none: storeIdentifier = context.storeIdentifier
        case .some(.some(let value)): storeIdentifier = value
        case .some(.none):
            throw failure("a reference points to a temporary identifier, which no saved model has", at: start)
        }
        switch key {
        case .int(let int): return .identifier(for: storeIdentifier, entityName: entity, primaryKey: int)
        case .string(let string): return .identifier(for: storeIdentifier, entityName: entity, primaryKey: string)
        }
    }
}
