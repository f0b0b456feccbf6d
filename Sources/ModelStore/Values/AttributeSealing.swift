import Foundation

/// Seals and opens the stored values of `@Attribute(.encrypted)` attributes.
///
/// ModelStore holds no cipher itself: `AttributeEncryption` in `ModelStoreCrypto` installs one
/// (``AttributeSealing/sealer``) when the app gives it a key.
package protocol AttributeSealer: Sendable {
    /// The sealed form of `plaintext`, a value of the attribute named `attribute`. The same
    /// plaintext of the same attribute seals to the same bytes under the same key, so that a save
    /// that does not change the value does not change what is stored.
    func seal(_ plaintext: [UInt8], attribute: String) throws -> [UInt8]
    /// The plaintext of bytes ``seal(_:attribute:)`` made for `attribute`; throws
    /// `DataStoreError.Code.wrongKey` when no key this process holds opens them and
    /// ``DataStoreError/Code/corrupted`` when they were changed.
    func open(_ sealed: [UInt8], attribute: String) throws -> [UInt8]
}

/// The codecs of encrypted attributes, and the cipher they use.
///
/// An encrypted attribute is stored as `Data` (optional `Data` for an optional property): the
/// sealed bytes of the value its own codec makes, written as JSON. `nil` stays `nil`, so that a
/// store can tell which models have a value. Empty `Data` is the initial value the declaration
/// gives, which a store writes when a migration adds the attribute; no sealed value is empty.
package enum AttributeSealing {
    private static let installed = LockedValue<(any AttributeSealer)?>(nil)

    /// The cipher that seals and opens encrypted attributes, or `nil` when the app gave no key.
    package static var sealer: (any AttributeSealer)? {
        get { installed.withLock { $0 } }
        set { installed.withLock { $0 = newValue } }
    }

    /// The codec of an encrypted attribute whose values `base` stores.
    ///
    /// - Parameters:
    ///   - base: The codec of the property's type.
    ///   - attribute: The property's name, which each sealed value is bound to.
    ///   - originalName: The name the property had before a rename: values sealed under it still open.
    ///   - initialValue: The declaration's initial value, which empty `Data` stands for.
    static func codec<Value>(
        wrapping base: ValueCodec<Value>, attribute: String, originalName: String?, initialValue: Value
    ) -> ValueCodec<Value> {
        let isOptional = Value.self is any NilRepresentable.Type
        return ValueCodec<Value>(
            isOptional ? .optional(.data) : .data,
            encode: { value in
                let stored = try base.encode(value)
                if isOptional, stored == .null { return .null }
                return .data(Data(try seal(stored, attribute: attribute)))
            },
            decode: { stored in
                switch stored {
                case .null where isOptional:
                    return try base.decode(.null)
                case .data(let data) where data.isEmpty:
                    return initialValue
                case .data(let data):
                    return try base.decode(try open(Array(data), attribute: attribute, originalName: originalName))
                default:
                    throw DataStoreError.invalidValue(
                        "the encrypted attribute '\(attribute)' holds a \(stored.kindName), not sealed Data")
                }
            })
    }

    /// The sealed bytes of a stored value.
    private static func seal(_ value: StoreValue, attribute: String) throws -> [UInt8] {
        guard let sealer else { throw missingKey(attribute) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        let plaintext: Data
        do {
            plaintext = try encoder.encode(value)
        } catch {
            throw DataStoreError.invalidValue("the value of the encrypted attribute '\(attribute)' cannot be encoded")
        }
        return try sealer.seal(Array(plaintext), attribute: attribute)
    }

    /// The stored value sealed in `bytes`.
    private static func open(_ bytes: [UInt8], attribute: String, originalName: String?) throws -> StoreValue {
        guard let sealer else { throw missingKey(attribute) }
        let plaintext: [UInt8]
        do {
            plaintext = try sealer.open(bytes, attribute: attribute)
        } catch let error as DataStoreError {
            // A value sealed before a rename is bound to the earlier name.
            guard let originalName, let earlier = try? sealer.open(bytes, attribute: originalName) else { throw error }
            plaintext = earlier
        }
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+inf", negativeInfinity: "-inf", nan: "nan")
        guard let value = try? decoder.decode(StoreValue.self, from: Data(plaintext)) else {
            throw DataStoreError(
                .corrupted, "the encrypted attribute '\(attribute)' opened to bytes that are not a stored value",
                remedy: "Restore the store from a backup, or set the property to another value")
        }
        return value
    }

    /// A stored plaintext value of an attribute that a migration stage encrypts, sealed as the
    /// attribute's codec seals it (`Data`).
    ///
    /// Throws ``DataStoreError/Code/invalidConfiguration`` when the process has no attribute key: the
    /// stage cannot seal what it must, and the store stays as it was.
    static func sealForMigration(
        _ value: StoreValue, attribute: String, entity: String, stageName: String
    ) throws -> StoreValue {
        guard sealer != nil else { throw missingMigrationKey(attribute, entity: entity, stageName, "encrypts") }
        return .data(Data(try seal(value, attribute: attribute)))
    }

    /// The plaintext stored value of a sealed value of an attribute that a migration stage stops
    /// encrypting; `sealedAs` is the name it was sealed under.
    ///
    /// Throws ``DataStoreError/Code/invalidConfiguration`` when the process has no attribute key, and
    /// what opening a value throws (``DataStoreError/Code/wrongKey``, ``DataStoreError/Code/corrupted``).
    static func openForMigration(
        _ sealed: Data, attribute: String, sealedAs: String, entity: String, stageName: String
    ) throws -> StoreValue {
        guard sealer != nil else { throw missingMigrationKey(attribute, entity: entity, stageName, "decrypts") }
        return try open(Array(sealed), attribute: sealedAs, originalName: nil)
    }

    private static func missingMigrationKey(
        _ attribute: String, entity: String, _ stageName: String, _ verb: String
    ) -> DataStoreError {
        DataStoreError(
            .invalidConfiguration,
            "the \(stageName) \(verb) the stored values of '\(entity).\(attribute)' (@Attribute(.encrypted)), and "
                + "this process has no attribute key",
            remedy: "Give the key before opening the store: try AttributeEncryption.useKeys(current: "
                + ".environment(\"NAME\")) from ModelStoreCrypto; the store was not changed",
            entityName: entity, propertyNames: [attribute])
    }

    private static func missingKey(_ attribute: String) -> DataStoreError {
        DataStoreError(
            .invalidConfiguration,
            "the attribute '\(attribute)' is encrypted (@Attribute(.encrypted)), and this process has no attribute key",
            remedy: "Give the key before the first save or fetch: "
                + "try AttributeEncryption.useKeys([.environment(\"NAME\")]) from ModelStoreCrypto")
    }
}
