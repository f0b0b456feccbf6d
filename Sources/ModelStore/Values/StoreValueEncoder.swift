import Foundation

/// Turns any `Encodable` value into a ``StoreValue`` tree.
///
/// This is how ModelStore persists *composite* attributes (user `Codable` types) without
/// reflection: the value encodes itself, and the encoder records what it writes.
///
/// - Keyed containers become ``StoreValue/dictionary(_:)``, unkeyed containers become
///   ``StoreValue/array(_:)``, and `nil` becomes ``StoreValue/null``.
/// - `Bool`, `String` and `Double` map to their own cases. Signed integers and `UInt8` … `UInt32`
///   become ``StoreValue/int(_:)``; `UInt` and `UInt64` become ``StoreValue/uint(_:)``. A `Float`
///   is widened exactly to ``StoreValue/double(_:)``. `Int128` and `UInt128` are stored as
///   ``StoreValue/int(_:)`` or ``StoreValue/uint(_:)`` when they fit, and fail to encode otherwise.
/// - `Date`, `Data`, `UUID`, `URL` and `Decimal` keep full fidelity as ``StoreValue/date(_:)``,
///   ``StoreValue/data(_:)``, ``StoreValue/uuid(_:)``, ``StoreValue/url(_:)`` and
///   ``StoreValue/decimal(_:)`` instead of going through their own `Codable` forms.
/// - Dictionaries keyed by `String` or `Int` use keyed containers, so they become
///   ``StoreValue/dictionary(_:)`` (an `Int` key is stored as its decimal string).
/// - `superEncoder()` nests the superclass's values in a dictionary under the key `"super"`.
///
/// ``StoreValueDecoder`` reverses the mapping.
public struct StoreValueEncoder: Sendable {
    /// Creates an encoder.
    public init() {}

    /// Encodes a value as a ``StoreValue``.
    ///
    /// - Parameter value: the value to encode.
    /// - Returns: the value's ``StoreValue`` tree.
    /// - Throws: `EncodingError.invalidValue` if the value writes nothing at all, if it writes an
    ///   integer that no ``StoreValue`` case can hold, or whatever the value's own
    ///   `encode(to:)` throws.
    public func encode<T: Encodable>(_ value: T) throws -> StoreValue {
        let node = try EncodingNode.encode(value, at: [])
        guard node.hasContent else {
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: [],
                    debugDescription: "Top-level \(T.self) did not encode any values."
                ))
        }
        return node.storeValue
    }
}

// MARK: - Coding keys and paths

/// A coding key the store value coders make up themselves: array indices and `"super"`.
struct StoreValueCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    init(intValue: Int) {
        self.stringValue = "Index \(intValue)"
        self.intValue = intValue
    }

    /// The key of an element in an unkeyed container.
    static func index(_ index: Int) -> StoreValueCodingKey {
        StoreValueCodingKey(intValue: index)
    }

    /// The key `superEncoder()` and `superDecoder()` use, as Foundation's coders do.
    static let `super` = StoreValueCodingKey(stringValue: "super")

    /// Renders a coding path for an error message, such as `people[1].address.zip`.
    static func render(_ path: [any CodingKey]) -> String {
        guard !path.isEmpty else { return "the top level" }
        var result = ""
        for key in path {
            if let index = key.intValue, key.stringValue == "Index \(index)" {
                result += "[\(index)]"
            } else {
                if !result.isEmpty { result += "." }
                result += key.stringValue
            }
        }
        return result
    }
}

// MARK: - Encoding tree

/// One node of the tree an encoding builds.
///
/// Containers hand out child nodes before those children are filled in (nested containers and
/// super encoders), so the tree is built from references and turned into a ``StoreValue`` once
/// encoding has finished.
private final class EncodingNode {
    private enum Kind {
        case empty, single, keyed, unkeyed
    }

    private var kind = Kind.empty
    private var single = StoreValue.null
    private var fields: [String: EncodingNode] = [:]
    private var elements: [EncodingNode] = []

    init() {}

    init(_ value: StoreValue) {
        kind = .single
        single = value
    }

    /// Whether anything was written to this node.
    var hasContent: Bool { kind != .empty }

    /// The number of elements written to this node as an unkeyed container.
    var elementCount: Int { elements.count }

    /// The finished value: a node nothing was written to becomes an empty dictionary, as in Foundation.
    var storeValue: StoreValue {
        switch kind {
        case .empty: .dictionary([:])
        case .single: single
        case .keyed: .dictionary(fields.mapValues(\.storeValue))
        case .unkeyed: .array(elements.map(\.storeValue))
        }
    }

    /// Makes this node a keyed container; asking again for one keeps what was written so far.
    func becomeKeyed(at path: [any CodingKey]) {
        precondition(
            kind == .empty || kind == .keyed,
            "Requested a keyed container at "
                + "\(StoreValueCodingKey.render(path)) where another kind of value was already encoded.")
        kind = .keyed
    }

    /// Makes this node an unkeyed container; asking again for one keeps what was written so far.
    func becomeUnkeyed(at path: [any CodingKey]) {
        precondition(
            kind == .empty || kind == .unkeyed,
            "Requested an unkeyed container at "
                + "\(StoreValueCodingKey.render(path)) where another kind of value was already encoded.")
        kind = .unkeyed
    }

    func setField(_ key: String, _ node: EncodingNode) {
        fields[key] = node
    }

    func append(_ node: EncodingNode) {
        elements.append(node)
    }

    /// Stores a value through a single-value container; a node holds at most one such value.
    func setSingle(_ value: StoreValue, at path: [any CodingKey]) {
        assertEmpty(at: path)
        kind = .single
        single = value
    }

    /// Takes over everything another node holds (a value encoded through a single-value container).
    func adopt(_ other: EncodingNode, at path: [any CodingKey]) {
        assertEmpty(at: path)
        kind = other.kind
        single = other.single
        fields = other.fields
        elements = other.elements
    }

    private func assertEmpty(at path: [any CodingKey]) {
        precondition(
            kind == .empty,
            "Encoded a single value at \(StoreValueCodingKey.render(path)) where a value was already encoded.")
    }

    /// Encodes a value into a new node, keeping the fidelity types as their own cases.
    static func encode<T: Encodable>(_ value: T, at path: [any CodingKey]) throws -> EncodingNode {
        if let special = fidelityValue(value) {
            return EncodingNode(special)
        }
        let encoder = NodeEncoder(node: EncodingNode(), codingPath: path)
        try value.encode(to: encoder)
        return encoder.node
    }

    /// The ``StoreValue`` for `Date`, `Data`, `UUID`, `URL` and `Decimal`, which bypass their own `Codable` forms.
    private static func fidelityValue<T: Encodable>(_ value: T) -> StoreValue? {
        if T.self == Date.self, let date = value as? Date { return .date(date) }
        if T.self == Data.self, let data = value as? Data { return .data(data) }
        if T.self == UUID.self, let uuid = value as? UUID { return .uuid(uuid) }
        if T.self == URL.self, let url = value as? URL { return .url(url) }
        if T.self == Decimal.self, let decimal = value as? Decimal { return .decimal(decimal) }
        return nil
    }
}

// MARK: - Scalars

/// The ``StoreValue`` cases of the scalar types every encoding container handles directly.
private enum Scalar {
    static func signed<I: FixedWidthInteger & SignedInteger>(_ value: I) -> StoreValue {
        .int(Int64(value))
    }

    /// `UInt8` … `UInt32` always fit in ``StoreValue/int(_:)``.
    static func narrow<I: FixedWidthInteger & UnsignedInteger>(_ value: I) -> StoreValue {
        .int(Int64(value))
    }

    /// `UInt` and `UInt64` use ``StoreValue/uint(_:)``, whatever the platform's word size.
    static func unsigned<I: FixedWidthInteger & UnsignedInteger>(_ value: I) -> StoreValue {
        .uint(UInt64(value))
    }

    static func float(_ value: Float) -> StoreValue {
        .double(Double(value))
    }

    static func wide(_ value: Int128, at path: [any CodingKey]) throws -> StoreValue {
        if let int = Int64(exactly: value) { return .int(int) }
        if let uint = UInt64(exactly: value) { return .uint(uint) }
        throw outOfRange(value, Int128.self, at: path)
    }

    static func wide(_ value: UInt128, at path: [any CodingKey]) throws -> StoreValue {
        if let uint = UInt64(exactly: value) { return .uint(uint) }
        throw outOfRange(value, UInt128.self, at: path)
    }

    private static func outOfRange<I>(_ value: I, _ type: I.Type, at path: [any CodingKey]) -> EncodingError {
        EncodingError.invalidValue(
            value,
            EncodingError.Context(
                codingPath: path,
                debugDescription: "Expected \(type) within the range of Int64 or UInt64"
                    + " at \(StoreValueCodingKey.render(path)) but found a value outside it."
            ))
    }
}

// MARK: - Encoder

/// The `Encoder` a value writes itself to: it records everything into an ``EncodingNode``.
private final class NodeEncoder: Encoder {
    let node: EncodingNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(node: EncodingNode, codingPath: [any CodingKey]) {
        self.node = node
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeKeyed(at: codingPath)
        return KeyedEncodingContainer(KeyedNodeContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeUnkeyed(at: codingPath)
        return UnkeyedNodeContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueNodeContainer(node: node, codingPath: codingPath)
    }
}

// MARK: - Keyed container

private struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    private func put(_ value: StoreValue, _ key: Key) {
        node.setField(key.stringValue, EncodingNode(value))
    }

    mutating func encodeNil(forKey key: Key) throws { put(.null, key) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { put(.bool(value), key) }
    mutating func encode(_ value: String, forKey key: Key) throws { put(.string(value), key) }
    mutating func encode(_ value: Double, forKey key: Key) throws { put(.double(value), key) }
    mutating func encode(_ value: Float, forKey key: Key) throws { put(Scalar.float(value), key) }
    mutating func encode(_ value: Int, forKey key: Key) throws { put(Scalar.signed(value), key) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { put(Scalar.signed(value), key) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { put(Scalar.signed(value), key) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { put(Scalar.signed(value), key) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { put(Scalar.signed(value), key) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { put(Scalar.unsigned(value), key) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { put(Scalar.narrow(value), key) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { put(Scalar.narrow(value), key) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { put(Scalar.narrow(value), key) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { put(Scalar.unsigned(value), key) }

    mutating func encode(_ value: Int128, forKey key: Key) throws {
        put(try Scalar.wide(value, at: codingPath + [key]), key)
    }

    mutating func encode(_ value: UInt128, forKey key: Key) throws {
        put(try Scalar.wide(value, at: codingPath + [key]), key)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        node.setField(key.stringValue, try EncodingNode.encode(value, at: codingPath + [key]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let child = EncodingNode()
        node.setField(key.stringValue, child)
        return NodeEncoder(node: child, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = EncodingNode()
        node.setField(key.stringValue, child)
        return NodeEncoder(node: child, codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        childEncoder(for: StoreValueCodingKey.super)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        childEncoder(for: key)
    }

    private func childEncoder(for key: any CodingKey) -> NodeEncoder {
        let child = EncodingNode()
        node.setField(key.stringValue, child)
        return NodeEncoder(node: child, codingPath: codingPath + [key])
    }
}

// MARK: - Unkeyed container

private struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    var count: Int { node.elementCount }

    private var nextPath: [any CodingKey] { codingPath + [StoreValueCodingKey.index(count)] }

    private func add(_ value: StoreValue) {
        node.append(EncodingNode(value))
    }

    mutating func encodeNil() throws { add(.null) }
    mutating func encode(_ value: Bool) throws { add(.bool(value)) }
    mutating func encode(_ value: String) throws { add(.string(value)) }
    mutating func encode(_ value: Double) throws { add(.double(value)) }
    mutating func encode(_ value: Float) throws { add(Scalar.float(value)) }
    mutating func encode(_ value: Int) throws { add(Scalar.signed(value)) }
    mutating func encode(_ value: Int8) throws { add(Scalar.signed(value)) }
    mutating func encode(_ value: Int16) throws { add(Scalar.signed(value)) }
    mutating func encode(_ value: Int32) throws { add(Scalar.signed(value)) }
    mutating func encode(_ value: Int64) throws { add(Scalar.signed(value)) }
    mutating func encode(_ value: UInt) throws { add(Scalar.unsigned(value)) }
    mutating func encode(_ value: UInt8) throws { add(Scalar.narrow(value)) }
    mutating func encode(_ value: UInt16) throws { add(Scalar.narrow(value)) }
    mutating func encode(_ value: UInt32) throws { add(Scalar.narrow(value)) }
    mutating func encode(_ value: UInt64) throws { add(Scalar.unsigned(value)) }
    mutating func encode(_ value: Int128) throws { add(try Scalar.wide(value, at: nextPath)) }
    mutating func encode(_ value: UInt128) throws { add(try Scalar.wide(value, at: nextPath)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        node.append(try EncodingNode.encode(value, at: nextPath))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        appendEncoder().container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        appendEncoder().unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        appendEncoder()
    }

    private func appendEncoder() -> NodeEncoder {
        let path = nextPath
        let child = EncodingNode()
        node.append(child)
        return NodeEncoder(node: child, codingPath: path)
    }
}

// MARK: - Single-value container

private struct SingleValueNodeContainer: SingleValueEncodingContainer {
    let node: EncodingNode
    let codingPath: [any CodingKey]

    private func set(_ value: StoreValue) {
        node.setSingle(value, at: codingPath)
    }

    mutating func encodeNil() throws { set(.null) }
    mutating func encode(_ value: Bool) throws { set(.bool(value)) }
    mutating func encode(_ value: String) throws { set(.string(value)) }
    mutating func encode(_ value: Double) throws { set(.double(value)) }
    mutating func encode(_ value: Float) throws { set(Scalar.float(value)) }
    mutating func encode(_ value: Int) throws { set(Scalar.signed(value)) }
    mutating func encode(_ value: Int8) throws { set(Scalar.signed(value)) }
    mutating func encode(_ value: Int16) throws { set(Scalar.signed(value)) }
    mutating func encode(_ value: Int32) throws { set(Scalar.signed(value)) }
    mutating func encode(_ value: Int64) throws { set(Scalar.signed(value)) }
    mutating func encode(_ value: UInt) throws { set(Scalar.unsigned(value)) }
    mutating func encode(_ value: UInt8) throws { set(Scalar.narrow(value)) }
    mutating func encode(_ value: UInt16) throws { set(Scalar.narrow(value)) }
    mutating func encode(_ value: UInt32) throws { set(Scalar.narrow(value)) }
    mutating func encode(_ value: UInt64) throws { set(Scalar.unsigned(value)) }
    mutating func encode(_ value: Int128) throws { set(try Scalar.wide(value, at: codingPath)) }
    mutating func encode(_ value: UInt128) throws { set(try Scalar.wide(value, at: codingPath)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        node.adopt(try EncodingNode.encode(value, at: codingPath), at: codingPath)
    }
}
