import Foundation

/// A decoder that answers every request with a zero, an empty string, `false` or an empty
/// container: what ``_ModelPlaceholder`` decodes a `Decodable` struct's placeholder from.
///
/// A nested enum gets its first case where ``FirstCase`` finds one, and one of a Foundation type that
/// decodes from a string gets a valid zero of its own; any other failure (an enum whose raw values
/// exclude zero and the empty string, say) is thrown.
struct ZeroDecoder: Decoder {
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(codingPath: codingPath))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { Unkeyed(codingPath: codingPath) }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(codingPath: codingPath) }

    /// A zero of `type`, or the error that decoding one threw.
    static func zero<T: Decodable>(_ type: T.Type, codingPath: [any CodingKey]) throws -> T {
        if let first = FirstCase.of(T.self) { return first }
        switch T.self {
        case is Date.Type: return Date(timeIntervalSinceReferenceDate: 0) as! T
        case is UUID.Type: return UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) as! T
        case is URL.Type: return URL(string: "about:blank")! as! T
        case is Data.Type: return Data() as! T
        case is Decimal.Type: return Decimal(0) as! T
        default: return try T(from: ZeroDecoder(codingPath: codingPath))
        }
    }

    private struct Single: SingleValueDecodingContainer {
        let codingPath: [any CodingKey]
        func decodeNil() -> Bool { false }
        func decode(_ type: Bool.Type) throws -> Bool { false }
        func decode(_ type: String.Type) throws -> String { "" }
        func decode(_ type: Double.Type) throws -> Double { 0 }
        func decode(_ type: Float.Type) throws -> Float { 0 }
        func decode(_ type: Int.Type) throws -> Int { 0 }
        func decode(_ type: Int8.Type) throws -> Int8 { 0 }
        func decode(_ type: Int16.Type) throws -> Int16 { 0 }
        func decode(_ type: Int32.Type) throws -> Int32 { 0 }
        func decode(_ type: Int64.Type) throws -> Int64 { 0 }
        func decode(_ type: UInt.Type) throws -> UInt { 0 }
        func decode(_ type: UInt8.Type) throws -> UInt8 { 0 }
        func decode(_ type: UInt16.Type) throws -> UInt16 { 0 }
        func decode(_ type: UInt32.Type) throws -> UInt32 { 0 }
        func decode(_ type: UInt64.Type) throws -> UInt64 { 0 }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try ZeroDecoder.zero(type, codingPath: codingPath) }
    }

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let codingPath: [any CodingKey]
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { true }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try ZeroDecoder.zero(type, codingPath: codingPath + [key])
        }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            KeyedDecodingContainer(Keyed<NestedKey>(codingPath: codingPath + [key]))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            Unkeyed(codingPath: codingPath + [key])
        }
        func superDecoder() throws -> any Decoder { ZeroDecoder(codingPath: codingPath) }
        func superDecoder(forKey key: Key) throws -> any Decoder { ZeroDecoder(codingPath: codingPath + [key]) }
    }

    /// An empty array.
    private struct Unkeyed: UnkeyedDecodingContainer {
        let codingPath: [any CodingKey]
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }
        mutating func decodeNil() throws -> Bool { true }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end(type) }
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
            -> KeyedDecodingContainer<NestedKey>
        { throw end(type) }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw end(Unkeyed.self) }
        mutating func superDecoder() throws -> any Decoder { throw end(ZeroDecoder.self) }

        private func end(_ type: Any.Type) -> DecodingError {
            DecodingError.valueNotFound(
                type, DecodingError.Context(codingPath: codingPath, debugDescription: "a placeholder array is empty"))
        }
    }
}
