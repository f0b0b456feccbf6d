import Foundation

/// Rebuilds a `Decodable` value from the ``StoreValue`` tree ``StoreValueEncoder`` made of it.
///
/// The decoder reads the mapping ``StoreValueEncoder`` writes, and is lenient wherever no
/// information is lost:
///
/// - ``StoreValue/int(_:)`` and ``StoreValue/uint(_:)`` decode into any integer type the number
///   fits in, and into `Double` or `Float` when the number is exactly representable there.
/// - ``StoreValue/double(_:)`` decodes into `Float` when the value is exactly representable as a
///   `Float` (as every encoded `Float` is); NaN stays NaN.
/// - ``StoreValue/int(_:)`` and ``StoreValue/uint(_:)`` also decode into `Decimal`.
///
/// Anything else that does not match throws `DecodingError`: `typeMismatch` for a value of the
/// wrong kind, `valueNotFound` for ``StoreValue/null`` where a value is required, `keyNotFound`
/// for a missing key, and `dataCorrupted` for a number that does not fit. Each error carries the
/// coding path, and its `debugDescription` names the expected type, the path and the
/// ``StoreValue/kindName`` that was found (never the value itself).
public struct StoreValueDecoder: Sendable {
    /// Creates a decoder.
    public init() {}

    /// Decodes a value of the given type from a ``StoreValue``.
    ///
    /// - Parameters:
    ///   - type: the type to decode.
    ///   - value: a value, typically one ``StoreValueEncoder`` produced.
    /// - Returns: the decoded value.
    /// - Throws: `DecodingError` when `value` does not have the shape `type` expects, or whatever
    ///   the type's own `init(from:)` throws.
    public func decode<T: Decodable>(_ type: T.Type, from value: StoreValue) throws -> T {
        try ValueDecoder(value: value, codingPath: []).decode(type)
    }
}

// MARK: - Errors

/// Builds the `DecodingError`s the decoding containers throw.
private enum Failure {
    /// The value has the wrong kind; ``StoreValue/null`` is reported as a missing value.
    static func mismatch(
        _ type: Any.Type, expected: String? = nil, found value: StoreValue,
        at path: [any CodingKey]
    ) -> DecodingError {
        let description =
            "Expected \(expected ?? String(describing: type)) at \(StoreValueCodingKey.render(path))"
            + " but found \(value.kindName) instead."
        let context = DecodingError.Context(codingPath: path, debugDescription: description)
        if value.isNull { return .valueNotFound(type, context) }
        return .typeMismatch(type, context)
    }

    /// A number of the right kind that the requested type cannot hold exactly.
    static func unrepresentable(_ type: Any.Type, found value: StoreValue, at path: [any CodingKey]) -> DecodingError {
        .dataCorrupted(
            DecodingError.Context(
                codingPath: path,
                debugDescription: "Expected \(type) at \(StoreValueCodingKey.render(path))"
                    + " but found \(value.kindName) that does not fit exactly in \(type)."
            ))
    }

    static func keyNotFound(_ key: any CodingKey, at path: [any CodingKey]) -> DecodingError {
        .keyNotFound(
            key,
            DecodingError.Context(
                codingPath: path,
                debugDescription:
                    "Expected a value for key \"\(key.stringValue)\" at \(StoreValueCodingKey.render(path))"
                    + " but found no such key."
            ))
    }

    static func atEnd(_ type: Any.Type, count: Int, at path: [any CodingKey]) -> DecodingError {
        .valueNotFound(
            type,
            DecodingError.Context(
                codingPath: path,
                debugDescription: "Expected \(type) at \(StoreValueCodingKey.render(path))"
                    + " but found the end of an array of \(count) elements."
            ))
    }
}

// MARK: - Decoder

/// The `Decoder` a value reads itself from; it doubles as its own single-value container.
private struct ValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: StoreValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .dictionary(let fields) = value else {
            throw Failure.mismatch([String: StoreValue].self, expected: "dictionary", found: value, at: codingPath)
        }
        return KeyedDecodingContainer(KeyedValueContainer<Key>(fields: fields, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw Failure.mismatch([StoreValue].self, expected: "array", found: value, at: codingPath)
        }
        return UnkeyedValueContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        self
    }

    // MARK: Single values

    func decodeNil() -> Bool {
        value.isNull
    }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let bool) = value else { throw Failure.mismatch(type, found: value, at: codingPath) }
        return bool
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let string) = value else { throw Failure.mismatch(type, found: value, at: codingPath) }
        return string
    }

    func decode(_ type: Double.Type) throws -> Double {
        let result: Double?
        switch value {
        case .double(let double): result = double
        case .int(let int): result = Double(exactly: int)
        case .uint(let uint): result = Double(exactly: uint)
        default: throw Failure.mismatch(type, found: value, at: codingPath)
        }
        guard let result else { throw Failure.unrepresentable(type, found: value, at: codingPath) }
        return result
    }

    func decode(_ type: Float.Type) throws -> Float {
        let result: Float?
        switch value {
        case .double(let double): result = double.isNaN ? Float.nan : Float(exactly: double)
        case .int(let int): result = Float(exactly: int)
        case .uint(let uint): result = Float(exactly: uint)
        default: throw Failure.mismatch(type, found: value, at: codingPath)
        }
        guard let result else { throw Failure.unrepresentable(type, found: value, at: codingPath) }
        return result
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: Int128.Type) throws -> Int128 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    func decode(_ type: UInt128.Type) throws -> UInt128 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let special = try fidelityValue(type) {
            return special
        }
        return try T(from: self)
    }

    /// Reads an ``StoreValue/int(_:)`` or ``StoreValue/uint(_:)`` into any integer type it fits in.
    private func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        let result: I?
        switch value {
        case .int(let int): result = I(exactly: int)
        case .uint(let uint): result = I(exactly: uint)
        default: throw Failure.mismatch(type, found: value, at: codingPath)
        }
        guard let result else { throw Failure.unrepresentable(type, found: value, at: codingPath) }
        return result
    }

    /// Reads `Date`, `Data`, `UUID`, `URL` and `Decimal` from their own cases; `nil` for every other type.
    private func fidelityValue<T>(_ type: T.Type) throws -> T? {
        let result: Any
        switch value {
        case .date(let date) where type == Date.self: result = date
        case .data(let data) where type == Data.self: result = data
        case .uuid(let uuid) where type == UUID.self: result = uuid
        case .url(let url) where type == URL.self: result = url
        case .decimal(let decimal) where type == Decimal.self: result = decimal
        case .int(let int) where type == Decimal.self: result = Decimal(int)
        case .uint(let uint) where type == Decimal.self: result = Decimal(uint)
        default:
            guard
                type == Date.self || type == Data.self || type == UUID.self || type == URL.self
                    || type == Decimal.self
            else { return nil }
            throw Failure.mismatch(type, found: value, at: codingPath)
        }
        return result as? T
    }
}

// MARK: - Keyed container

private struct KeyedValueContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let fields: [String: StoreValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] {
        fields.keys.compactMap { Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool {
        fields[key.stringValue] != nil
    }

    /// A decoder for the value under `key`, which must be present.
    private func child(_ key: Key) throws -> ValueDecoder {
        guard let value = fields[key.stringValue] else { throw Failure.keyNotFound(key, at: codingPath) }
        return ValueDecoder(value: value, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { try child(key).decodeNil() }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try child(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try child(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try child(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try child(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try child(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try child(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try child(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try child(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try child(key).decode(type) }
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try child(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try child(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try child(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try child(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try child(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try child(key).decode(type) }
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try child(key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try child(key).decode(type) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    /// A decoder for the superclass's values under `"super"`; over ``StoreValue/null`` when they are absent.
    func superDecoder() throws -> any Decoder {
        let key = StoreValueCodingKey.super
        return ValueDecoder(value: fields[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: fields[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

// MARK: - Unkeyed container

private struct UnkeyedValueContainer: UnkeyedDecodingContainer {
    let elements: [StoreValue]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(elements: [StoreValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// Decodes the current element with `body`, moving on only if that succeeds.
    private mutating func next<T>(_ type: T.Type, _ body: (ValueDecoder) throws -> T) throws -> T {
        let path = codingPath + [StoreValueCodingKey.index(currentIndex)]
        guard !isAtEnd else { throw Failure.atEnd(type, count: elements.count, at: path) }
        let result = try body(ValueDecoder(value: elements[currentIndex], codingPath: path))
        currentIndex += 1
        return result
    }

    /// Skips the current element if it is ``StoreValue/null``, as `decodeNil()` must.
    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            let path = codingPath + [StoreValueCodingKey.index(currentIndex)]
            throw Failure.atEnd(Any?.self, count: elements.count, at: path)
        }
        guard elements[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: String.Type) throws -> String { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try next(type) { try $0.decode(type) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type) { try $0.decode(type) } }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) { try $0.container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { try $0.unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { $0 }
    }
}
