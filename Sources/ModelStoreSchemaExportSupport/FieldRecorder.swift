// A file of the driver package that `modelstore schema export --package` writes and runs. It is compiled
// here as the ModelStoreSchemaExportSupport target, and the tool copies it into the driver unchanged.

import ModelStore

/// A decoder that answers a struct's `init(from:)` with placeholder values and notes the keys it
/// reads, with the type each is read as: the fields a schema file lists for the struct.
final class FieldRecorder: Decoder {
    /// A key read, the type read and whether it was read with `decodeIfPresent`.
    struct RecordedField {
        let name: String
        let type: Any.Type
        let isOptional: Bool
    }

    private(set) var fields: [RecordedField] = []
    let codingPath: [any CodingKey] = []
    let userInfo: [CodingUserInfoKey: Any] = [:]

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed(recorder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw ExportedValueTypes.Reason("it decodes itself as a list, not as named fields")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw ExportedValueTypes.Reason("it decodes itself as a single value, not as named fields")
    }

    /// Notes `key` as read as `type`, and gives a placeholder value for it.
    func record<T: Decodable>(_ key: some CodingKey, as type: T.Type, optional: Bool) throws -> T? {
        guard !fields.contains(where: { $0.name == key.stringValue }) else {
            throw ExportedValueTypes.Reason("it reads the key '\(key.stringValue)' twice")
        }
        fields.append(RecordedField(name: key.stringValue, type: T.self, isOptional: optional))
        return optional ? nil : try Self.placeholder(T.self)
    }

    /// A value of `T`: an enum's first case, a struct decoded from placeholders, or the stored type's zero value.
    static func placeholder<T: Decodable>(_ type: T.Type) throws -> T {
        if let iterable = type as? any CaseIterable.Type {
            func first<E: CaseIterable>(_: E.Type) -> Any? { E.allCases.first }
            if let value = first(iterable) as? T { return value }
        }
        guard let codec = ModelStore.ValueCodecs.codec(for: T.self) else {
            throw ExportedValueTypes.Reason("ModelStore cannot store its field of type '\(T.self)'")
        }
        if case .composite = codec.attributeType { return try T(from: FieldRecorder()) }
        do {
            return try codec.decode(codec.attributeType.zeroValue)
        } catch {
            throw ExportedValueTypes.Reason("the export cannot make up a value of its field type '\(T.self)'")
        }
    }

    /// The keyed container of a recorded `init(from:)`: every read is recorded.
    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let recorder: FieldRecorder
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }

        func contains(_ key: Key) -> Bool { true }

        func decodeNil(forKey key: Key) throws -> Bool {
            throw ExportedValueTypes.Reason("it reads the key '\(key.stringValue)' with decodeNil")
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try recorder.record(key, as: type, optional: false)!
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            try recorder.record(key, as: type, optional: true)
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decode(type, key) }
        func decode(_ type: String.Type, forKey key: Key) throws -> String { try decode(type, key) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decode(type, key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decode(type, key) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decode(type, key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decode(type, key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decode(type, key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decode(type, key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decode(type, key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decode(type, key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decode(type, key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decode(type, key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decode(type, key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decode(type, key) }

        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try present(type, key) }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try present(type, key) }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try present(type, key) }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try present(type, key) }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try present(type, key) }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try present(type, key) }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try present(type, key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try present(type, key) }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try present(type, key) }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try present(type, key) }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try present(type, key) }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try present(type, key) }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try present(type, key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try present(type, key) }

        private func decode<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
            try recorder.record(key, as: type, optional: false)!
        }

        private func present<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
            try recorder.record(key, as: type, optional: true)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
            -> KeyedDecodingContainer<NestedKey>
        {
            throw ExportedValueTypes.Reason("it reads the key '\(key.stringValue)' as a nested container")
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw ExportedValueTypes.Reason("it reads the key '\(key.stringValue)' as a nested list")
        }

        func superDecoder() throws -> any Decoder {
            throw ExportedValueTypes.Reason("it decodes a superclass")
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            throw ExportedValueTypes.Reason("it decodes a superclass under '\(key.stringValue)'")
        }
    }
}
