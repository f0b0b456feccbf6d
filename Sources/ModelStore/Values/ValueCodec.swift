import Foundation

/// Converts values of one Swift type to and from ``StoreValue``.
///
/// A codec is resolved once per type (see ``ValueCodecs/codec(for:)``) and then called with
/// no reflection and no dynamic casts: the framework uses it on every fetch and save.
public final class ValueCodec<Value>: @unchecked Sendable {
    // Safety: immutable; the closures capture only other codecs and metatypes, never mutable state.
    /// The stored type the codec produces.
    public let attributeType: AttributeType
    @usableFromInline let encodeValue: (Value) throws -> StoreValue
    @usableFromInline let decodeValue: (StoreValue) throws -> Value

    init(
        _ attributeType: AttributeType,
        encode: @escaping (Value) throws -> StoreValue,
        decode: @escaping (StoreValue) throws -> Value
    ) {
        self.attributeType = attributeType
        self.encodeValue = encode
        self.decodeValue = decode
    }

    /// The stored form of `value`.
    ///
    /// Throws ``DataStoreError/Code/invalidValue`` when a `Codable` value (or one nested in a
    /// collection) fails to encode itself; every other value converts without failing.
    @inlinable public func encode(_ value: Value) throws -> StoreValue { try encodeValue(value) }

    /// The Swift value for a stored value; throws ``DataStoreError/invalidValue`` when the kinds don't match.
    @inlinable public func decode(_ value: StoreValue) throws -> Value { try decodeValue(value) }
}

/// The registry of value codecs, resolved once per type.
public enum ValueCodecs {
    private static let cache = LockedValue<[ObjectIdentifier: any AnyObject & Sendable]>([:])

    /// The codec for `type`, or `nil` if ModelStore cannot store values of that type.
    ///
    /// Supported: `Bool`, every `Int` and `UInt` width, `Double`, `Float`, `Decimal`, `String`,
    /// `Date`, `Data`, `UUID`, `URL`; optionals, arrays and dictionaries of supported types;
    /// `RawRepresentable` types whose raw value is supported; and `Codable` types, stored as
    /// composite values.
    public static func codec<Value>(for type: Value.Type) -> ValueCodec<Value>? {
        let key = ObjectIdentifier(type)
        // Keyed by the type itself, so the cached codec is a `ValueCodec<Value>`: no dynamic cast.
        if let cached = cache.withLock({ $0[key] }) { return unsafeDowncast(cached, to: ValueCodec<Value>.self) }
        guard let codec = resolve(type) else { return nil }
        cache.withLock { $0[key] = codec }
        return codec
    }

    /// The stored form of an arbitrary value, or `nil` if its type is not storable.
    ///
    /// Throws ``DataStoreError/Code/invalidValue`` when the value fails to encode itself.
    public static func storeValue(of value: Any) throws -> StoreValue? {
        func open<V>(_ value: V) throws -> StoreValue? { try codec(for: V.self)?.encode(value) }
        return try _openExistential(value, do: open)
    }

    private static func resolve<Value>(_ type: Value.Type) -> ValueCodec<Value>? {
        if let scalar = type as? any ScalarStorable.Type {
            return scalar.makeScalarCodec(as: type)
        }
        if let optional = type as? any OptionalStorable.Type {
            return optional.makeOptionalCodec(as: type)
        }
        if let array = type as? any ArrayStorable.Type {
            return array.makeArrayCodec(as: type)
        }
        if let dictionary = type as? any DictionaryStorable.Type {
            return dictionary.makeDictionaryCodec(as: type)
        }
        if let raw = type as? any RawRepresentable.Type {
            if let codec = makeRawCodec(raw, as: type) { return codec }
        }
        if let codable = type as? any Codable.Type {
            return makeCompositeCodec(codable, as: type)
        }
        return nil
    }

    private static func makeRawCodec<R: RawRepresentable, Value>(_: R.Type, as: Value.Type) -> ValueCodec<Value>? {
        guard let raw = codec(for: R.RawValue.self) else { return nil }
        let name = String(describing: R.self)
        return ValueCodec<Value>(
            .enumeration(name: name, rawValue: raw.attributeType),
            encode: { try raw.encode(unsafeBitCast($0, to: R.self).rawValue) },
            decode: { stored in
                let rawValue = try raw.decode(stored)
                guard let value = R(rawValue: rawValue) else {
                    throw DataStoreError.invalidValue("'\(rawValue)' is not a raw value of '\(name)'")
                }
                return unsafeBitCast(value, to: Value.self)
            }
        )
    }

    private static func makeCompositeCodec<C: Codable, Value>(_: C.Type, as: Value.Type) -> ValueCodec<Value> {
        let name = String(describing: C.self)
        return ValueCodec<Value>(
            .composite(name: name),
            encode: { value in
                do {
                    return try StoreValueEncoder().encode(unsafeBitCast(value, to: C.self))
                } catch {
                    throw DataStoreError.invalidValue("a '\(name)' value failed to encode itself: \(error)")
                }
            },
            decode: { stored in
                do {
                    return unsafeBitCast(try StoreValueDecoder().decode(C.self, from: stored), to: Value.self)
                } catch {
                    throw DataStoreError.invalidValue(
                        "cannot decode '\(name)' from a stored \(stored.kindName): \(error)")
                }
            }
        )
    }
}

// MARK: - Scalars

/// A type with a single `StoreValue` case of its own.
protocol ScalarStorable {
    static var scalarType: AttributeType { get }
    var scalarValue: StoreValue { get }
    init(scalar: StoreValue) throws
}

extension ScalarStorable {
    static func makeScalarCodec<Value>(as: Value.Type) -> ValueCodec<Value> {
        ValueCodec<Value>(
            scalarType,
            encode: { unsafeBitCast($0, to: Self.self).scalarValue },
            decode: { unsafeBitCast(try Self(scalar: $0), to: Value.self) }
        )
    }

    static func mismatch(_ value: StoreValue) -> DataStoreError {
        DataStoreError.invalidValue("expected a stored \(scalarType) but found a \(value.kindName)")
    }
}

extension Bool: ScalarStorable {
    static var scalarType: AttributeType { .bool }
    var scalarValue: StoreValue { .bool(self) }
    init(scalar: StoreValue) throws {
        guard case .bool(let v) = scalar else { throw Self.mismatch(scalar) }
        self = v
    }
}

extension String: ScalarStorable {
    static var scalarType: AttributeType { .string }
    var scalarValue: StoreValue { .string(self) }
    init(scalar: StoreValue) throws {
        guard case .string(let v) = scalar else { throw Self.mismatch(scalar) }
        self = v
    }
}

extension Double: ScalarStorable {
    static var scalarType: AttributeType { .double }
    var scalarValue: StoreValue { .double(self) }
    init(scalar: StoreValue) throws {
        switch scalar {
        case .double(let v): self = v
        case .int(let v): self = Double(v)
        case .uint(let v): self = Double(v)
        default: throw Self.mismatch(scalar)
        }
    }
}

extension Float: ScalarStorable {
    static var scalarType: AttributeType { .float }
    var scalarValue: StoreValue { .double(Double(self)) }
    init(scalar: StoreValue) throws { self = Float(try Double(scalar: scalar)) }
}

extension Decimal: ScalarStorable {
    static var scalarType: AttributeType { .decimal }
    var scalarValue: StoreValue { .decimal(self) }
    init(scalar: StoreValue) throws {
        switch scalar {
        case .decimal(let v): self = v
        case .int(let v): self = Decimal(v)
        case .uint(let v): self = Decimal(v)
        case .string(let v):
            guard let d = Decimal(string: v, locale: Locale(identifier: "en_US_POSIX")) else {
                throw Self.mismatch(scalar)
            }
            self = d
        default: throw Self.mismatch(scalar)
        }
    }
}

extension Date: ScalarStorable {
    static var scalarType: AttributeType { .date }
    var scalarValue: StoreValue { .date(self) }
    init(scalar: StoreValue) throws {
        guard case .date(let v) = scalar else { throw Self.mismatch(scalar) }
        self = v
    }
}

extension Data: ScalarStorable {
    static var scalarType: AttributeType { .data }
    var scalarValue: StoreValue { .data(self) }
    init(scalar: StoreValue) throws {
        guard case .data(let v) = scalar else { throw Self.mismatch(scalar) }
        self = v
    }
}

extension UUID: ScalarStorable {
    static var scalarType: AttributeType { .uuid }
    var scalarValue: StoreValue { .uuid(self) }
    init(scalar: StoreValue) throws {
        switch scalar {
        case .uuid(let v): self = v
        case .string(let s):
            guard let v = UUID(uuidString: s) else { throw Self.mismatch(scalar) }
            self = v
        default: throw Self.mismatch(scalar)
        }
    }
}

extension URL: ScalarStorable {
    static var scalarType: AttributeType { .url }
    var scalarValue: StoreValue { .url(self) }
    init(scalar: StoreValue) throws {
        switch scalar {
        case .url(let v): self = v
        case .string(let s):
            guard let v = URL(string: s) else { throw Self.mismatch(scalar) }
            self = v
        default: throw Self.mismatch(scalar)
        }
    }
}

/// Signed integers of every width share one conversion.
protocol SignedStorable: ScalarStorable, FixedWidthInteger, SignedInteger {}
extension SignedStorable {
    static var scalarType: AttributeType { .integer(bits: bitWidth, signed: true) }
    var scalarValue: StoreValue { .int(Int64(self)) }
    init(scalar: StoreValue) throws {
        switch scalar {
        case .int(let v):
            guard let x = Self(exactly: v) else { throw Self.mismatch(scalar) }
            self = x
        case .uint(let v):
            guard let x = Self(exactly: v) else { throw Self.mismatch(scalar) }
            self = x
        default: throw Self.mismatch(scalar)
        }
    }
}
extension Int: SignedStorable {}
extension Int8: SignedStorable {}
extension Int16: SignedStorable {}
extension Int32: SignedStorable {}
extension Int64: SignedStorable {}

/// Unsigned integers of every width share one conversion; 64-bit ones keep their full range.
protocol UnsignedStorable: ScalarStorable, FixedWidthInteger, UnsignedInteger {}
extension UnsignedStorable {
    static var scalarType: AttributeType { .integer(bits: bitWidth, signed: false) }
    var scalarValue: StoreValue { Self.bitWidth < 64 ? .int(Int64(self)) : .uint(UInt64(self)) }
    init(scalar: StoreValue) throws {
        switch scalar {
        case .int(let v):
            guard let x = Self(exactly: v) else { throw Self.mismatch(scalar) }
            self = x
        case .uint(let v):
            guard let x = Self(exactly: v) else { throw Self.mismatch(scalar) }
            self = x
        default: throw Self.mismatch(scalar)
        }
    }
}
extension UInt: UnsignedStorable {}
extension UInt8: UnsignedStorable {}
extension UInt16: UnsignedStorable {}
extension UInt32: UnsignedStorable {}
extension UInt64: UnsignedStorable {}

// MARK: - Containers

protocol OptionalStorable {
    static func makeOptionalCodec<Value>(as: Value.Type) -> ValueCodec<Value>?
}

extension Optional: OptionalStorable {
    static func makeOptionalCodec<Value>(as: Value.Type) -> ValueCodec<Value>? {
        guard let wrapped = ValueCodecs.codec(for: Wrapped.self) else { return nil }
        return ValueCodec<Value>(
            .optional(wrapped.attributeType),
            encode: { value in
                switch unsafeBitCast(value, to: Self.self) {
                case .none: .null
                case .some(let w): try wrapped.encode(w)
                }
            },
            decode: { stored in
                if stored.isNull { return unsafeBitCast(Self.none, to: Value.self) }
                return unsafeBitCast(Self.some(try wrapped.decode(stored)), to: Value.self)
            }
        )
    }
}

protocol ArrayStorable {
    static func makeArrayCodec<Value>(as: Value.Type) -> ValueCodec<Value>?
}

extension Array: ArrayStorable {
    static func makeArrayCodec<Value>(as: Value.Type) -> ValueCodec<Value>? {
        guard let element = ValueCodecs.codec(for: Element.self) else { return nil }
        return ValueCodec<Value>(
            .array(element.attributeType),
            encode: { .array(try unsafeBitCast($0, to: Self.self).map(element.encode)) },
            decode: { stored in
                guard case .array(let items) = stored else {
                    throw DataStoreError.invalidValue("expected a stored array but found a \(stored.kindName)")
                }
                return unsafeBitCast(try items.map(element.decode), to: Value.self)
            }
        )
    }
}

protocol DictionaryStorable {
    static func makeDictionaryCodec<Value>(as: Value.Type) -> ValueCodec<Value>?
}

extension Dictionary: DictionaryStorable {
    static func makeDictionaryCodec<V>(as: V.Type) -> ValueCodec<V>? {
        guard let keyCodec = ValueCodecs.codec(for: Key.self), let valueCodec = ValueCodecs.codec(for: Value.self)
        else {
            return nil
        }
        let type = AttributeType.dictionary(key: keyCodec.attributeType, value: valueCodec.attributeType)
        if Key.self == String.self {
            return ValueCodec<V>(
                type,
                encode: { dictionary in
                    var result: [String: StoreValue] = [:]
                    for (k, v) in unsafeBitCast(dictionary, to: Self.self) {
                        result[unsafeBitCast(k, to: String.self)] = try valueCodec.encode(v)
                    }
                    return .dictionary(result)
                },
                decode: { stored in
                    guard case .dictionary(let items) = stored else {
                        throw DataStoreError.invalidValue("expected a stored dictionary but found a \(stored.kindName)")
                    }
                    var result: Self = [:]
                    for (k, v) in items { result[unsafeBitCast(k, to: Key.self)] = try valueCodec.decode(v) }
                    return unsafeBitCast(result, to: V.self)
                }
            )
        }
        // Other keys are stored as [key, value] pairs, ordered by key so equal dictionaries store equally.
        return ValueCodec<V>(
            type,
            encode: { dictionary in
                let pairs = try unsafeBitCast(dictionary, to: Self.self).map {
                    (try keyCodec.encode($0.key), try valueCodec.encode($0.value))
                }
                let sorted = pairs.sorted { StoreValue.compare($0.0, $1.0) == .orderedAscending }
                return .array(sorted.map { .array([$0.0, $0.1]) })
            },
            decode: { stored in
                guard case .array(let items) = stored else {
                    throw DataStoreError.invalidValue("expected stored key/value pairs but found a \(stored.kindName)")
                }
                var result: Self = [:]
                for item in items {
                    guard case .array(let pair) = item, pair.count == 2 else {
                        throw DataStoreError.invalidValue("expected a [key, value] pair but found a \(item.kindName)")
                    }
                    result[try keyCodec.decode(pair[0])] = try valueCodec.decode(pair[1])
                }
                return unsafeBitCast(result, to: V.self)
            }
        )
    }
}
